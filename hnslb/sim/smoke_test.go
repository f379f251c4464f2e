package sim

import (
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

func TestLoadBalancerLifecycle(t *testing.T) {
	h := newSim(t, ProfileWS2025)
	n := mustNetwork(t, h, "cbr0", hnslb.NetworkTypeL2Bridge)
	ep := mustEndpoint(t, h, n.ID, endpointDoc("10.244.1.5"))
	lb, err := h.CreateLoadBalancer(ctx, lbDoc("10.96.0.10", 53, ep.ID))
	if err != nil {
		t.Fatal(err)
	}
	if !guidPattern.MatchString(lb.ID) || lb.SchemaVersion != hnslb.V2 {
		t.Fatalf("created %+v", lb)
	}
	got, err := h.GetLoadBalancerByID(ctx, lb.ID)
	if err != nil || got.HostComputeEndpoints[0] != ep.ID {
		t.Fatalf("get: %+v %v", got, err)
	}
	if err := h.DeleteLoadBalancer(ctx, lb.ID); err != nil {
		t.Fatal(err)
	}
	err = h.DeleteLoadBalancer(ctx, lb.ID)
	if !hnslb.IsNotFound(err) {
		t.Fatalf("second delete: %v", err)
	}
}
