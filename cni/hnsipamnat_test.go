package cni_test

import (
	"slices"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// TestHNSAssignedPodsGetTheirOutboundNAT: without "ipam" the pod's
// address is not known until HNS assigns it, yet its endpoint carries the
// OutBoundNAT with the cluster and service CIDRs as exceptions, as one
// whose address IPAM gave does: without it the pod reaches nothing outside
// the cluster.
func TestHNSAssignedPodsGetTheirOutboundNAT(t *testing.T) {
	n1, conf := l2bridgeNode(t, 79)
	conf.extra = map[string]any{"ipam": nil}
	rt := newRuntime(t, conf)
	p := pod{id: "web", netns: n1.createNamespace(t)}
	rt.add(t, p)
	e := endpointByName(n1.dump(t), p.endpointName("cbr0"))
	if e == nil || len(e.IpConfigurations) != 1 {
		t.Fatalf("endpoint %+v, want one HNS gave an address", e)
	}
	nat := policies[hnslb.OutboundNatPolicySetting](t, e, hnslb.EndpointPolicyOutBoundNAT)
	if len(nat) != 1 || !slices.Equal(nat[0].Exceptions, []string{"10.244.0.0/16", "10.96.0.0/12"}) {
		t.Errorf("OutBoundNAT policies %+v, want one excepting the cluster and service CIDRs", nat)
	}
}
