package sim

import (
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// TestEchoOmitEmptyAnswersEmptyListsAsAbsent: with OmitEmpty a load
// balancer's empty lists (another agent's, stored with no port mappings,
// VIPs or backends, as HNS has listed one: kubernetes/kubernetes#141488)
// are answered absent (nil), as JSON without them decodes; without it they
// are answered as stored. The store keeps them either way.
func TestEchoOmitEmptyAnswersEmptyListsAsAbsent(t *testing.T) {
	h := newSim(t, ProfileWS2025)
	put, err := h.PutLoadBalancerOutOfBand(hnslb.LoadBalancer{
		PortMappings: []hnslb.PortMapping{}, FrontendVIPs: []string{}, HostComputeEndpoints: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, omit := range []bool{false, true} {
		h.SetEcho(Echo{OmitEmpty: omit})
		got, err := h.GetLoadBalancerByID(ctx, put.ID)
		if err != nil {
			t.Fatal(err)
		}
		for what, absent := range map[string]bool{
			"port mappings": got.PortMappings == nil, "frontend VIPs": got.FrontendVIPs == nil, "backends": got.HostComputeEndpoints == nil,
		} {
			if absent != omit {
				t.Errorf("OmitEmpty %v: %s answered absent: %v", omit, what, absent)
			}
		}
	}
	if s := h.Snapshot().LoadBalancers[0]; s.PortMappings == nil || s.FrontendVIPs == nil {
		t.Errorf("stored %+v: the echo changed what HNS holds", s)
	}
}
