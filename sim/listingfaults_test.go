package sim

import (
	"slices"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// TestListedTwice: Faults.ListedTwice answers a listed object twice, the
// copy right after it, in every listing; a get answers it once, and the
// fault lifted, listings are as before.
func TestListedTwice(t *testing.T) {
	h := newSim(t, ProfileWS2022)
	nw := mustNetwork(t, h, "cbr0", hnslb.NetworkTypeL2Bridge)
	ep := mustEndpoint(t, h, nw.ID, endpointDoc("10.244.1.5"))
	lb, err := h.CreateLoadBalancer(ctx, lbDoc("10.96.0.10", 80, ep.ID))
	if err != nil {
		t.Fatal(err)
	}
	h.SetFaults(Faults{ListedTwice: 1})
	lbs, err := h.ListLoadBalancers(ctx)
	if err != nil || len(lbs) != 2 || lbs[0].ID != lb.ID || lbs[1].ID != lb.ID {
		t.Errorf("load balancers listed %+v, %v; want %s twice", lbs, err, lb.ID)
	}
	eps, err := h.ListEndpointsOfNetwork(ctx, nw.ID)
	if err != nil || len(eps) != 2 || eps[0].ID != ep.ID || eps[1].ID != ep.ID {
		t.Errorf("endpoints listed %+v, %v; want %s twice", eps, err, ep.ID)
	}
	if got, err := h.GetLoadBalancerByID(ctx, lb.ID); err != nil || got.ID != lb.ID {
		t.Errorf("get %+v, %v", got, err)
	}
	h.SetFaults(Faults{})
	if lbs, err := h.ListLoadBalancers(ctx); err != nil || len(lbs) != 1 {
		t.Errorf("after the fault lifted: %d load balancers listed, %v; want 1", len(lbs), err)
	}
}

// TestLeftOutOfListings: Faults.LeftOutOfListings leaves listed objects
// out of a listing while HNS holds them: a get still finds one, and the
// fault lifted, the next listing shows it again.
func TestLeftOutOfListings(t *testing.T) {
	h := newSim(t, ProfileWS2022)
	nw := mustNetwork(t, h, "cbr0", hnslb.NetworkTypeL2Bridge)
	ep := mustEndpoint(t, h, nw.ID, endpointDoc("10.244.1.5"))
	lb, err := h.CreateLoadBalancer(ctx, lbDoc("10.96.0.10", 80, ep.ID))
	if err != nil {
		t.Fatal(err)
	}
	h.SetFaults(Faults{LeftOutOfListings: 1})
	if lbs, err := h.ListLoadBalancers(ctx); err != nil || len(lbs) != 0 {
		t.Errorf("load balancers listed %+v, %v; want none", lbs, err)
	}
	if eps, err := h.ListEndpointsOfNetwork(ctx, nw.ID); err != nil || len(eps) != 0 {
		t.Errorf("endpoints listed %+v, %v; want none", eps, err)
	}
	if got, err := h.GetLoadBalancerByID(ctx, lb.ID); err != nil || got.ID != lb.ID {
		t.Errorf("get %+v, %v; want the load balancer HNS holds", got, err)
	}
	h.SetFaults(Faults{})
	if lbs, err := h.ListLoadBalancers(ctx); err != nil || len(lbs) != 1 || lbs[0].ID != lb.ID {
		t.Errorf("after the fault lifted: %+v, %v; want %s", lbs, err, lb.ID)
	}
}

// TestLeftOutInARow: with Faults.LeftOutInARow, a listing leaves one
// object out at most that many times in a row, even where every draw
// would leave it out; then the count starts again.
func TestLeftOutInARow(t *testing.T) {
	h := newSim(t, ProfileWS2022)
	nw := mustNetwork(t, h, "cbr0", hnslb.NetworkTypeL2Bridge)
	ep := mustEndpoint(t, h, nw.ID, endpointDoc("10.244.1.5"))
	if _, err := h.CreateLoadBalancer(ctx, lbDoc("10.96.0.10", 80, ep.ID)); err != nil {
		t.Fatal(err)
	}
	h.SetFaults(Faults{LeftOutOfListings: 1, LeftOutInARow: 2})
	var shown []int
	for range 6 {
		lbs, err := h.ListLoadBalancers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		shown = append(shown, len(lbs))
	}
	if want := []int{0, 0, 1, 0, 0, 1}; !slices.Equal(shown, want) {
		t.Errorf("load balancers each listing showed %v, want %v", shown, want)
	}
}
