package sim

import (
	"slices"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// oneLoadBalancer is a simulator whose network holds one endpoint and a
// load balancer on it.
func oneLoadBalancer(t *testing.T) (*HNS, *hnslb.Network, *hnslb.Endpoint, *hnslb.LoadBalancer) {
	t.Helper()
	h := newSim(t, ProfileWS2022)
	nw := mustNetwork(t, h, "cbr0", hnslb.NetworkTypeL2Bridge)
	ep := mustEndpoint(t, h, nw.ID, endpointDoc("10.244.1.5"))
	lb, err := h.CreateLoadBalancer(ctx, lbDoc("10.96.0.10", 80, ep.ID))
	if err != nil {
		t.Fatal(err)
	}
	return h, nw, ep, lb
}

// TestListedTwice: Faults.ListedTwice answers a listed object twice, the
// copy right after it, in every listing; a get answers it once, and the
// fault lifted, listings are as before.
func TestListedTwice(t *testing.T) {
	h, nw, ep, lb := oneLoadBalancer(t)
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
	h, nw, _, lb := oneLoadBalancer(t)
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
	h, _, _, _ := oneLoadBalancer(t)
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

// TestGetsLeaveOut: with Faults.GetsLeaveOut, gets by ID and by name leave
// the object out as listings do, answering each kind's "not found", in one
// run with the listings' under LeftOutInARow; without it, gets find what a
// listing leaves out.
func TestGetsLeaveOut(t *testing.T) {
	h, nw, ep, lb := oneLoadBalancer(t)
	gets := map[string]func() error{
		"load balancer by ID": func() error { _, err := h.GetLoadBalancerByID(ctx, strings.ToUpper(lb.ID)); return err },
		"endpoint by ID":      func() error { _, err := h.GetEndpointByID(ctx, ep.ID); return err },
		"endpoint by name":    func() error { _, err := h.GetEndpointByName(ctx, ep.Name); return err },
		"network by ID":       func() error { _, err := h.GetNetworkByID(ctx, nw.ID); return err },
		"network by name":     func() error { _, err := h.GetNetworkByName(ctx, nw.Name); return err },
	}
	h.SetFaults(Faults{LeftOutOfListings: 1})
	for what, get := range gets {
		if err := get(); err != nil {
			t.Errorf("%s without GetsLeaveOut: %v; want it found", what, err)
		}
	}
	h.SetFaults(Faults{LeftOutOfListings: 1, GetsLeaveOut: true})
	for what, get := range gets {
		if err := get(); !hnslb.IsNotFound(err) {
			t.Errorf("%s with GetsLeaveOut: %v; want not found", what, err)
		}
	}
	// A listing, then a get, leave the load balancer out; the next get,
	// the third look in a row, finds it.
	h.SetFaults(Faults{LeftOutOfListings: 1, LeftOutInARow: 2, GetsLeaveOut: true})
	var shown []bool
	if lbs, err := h.ListLoadBalancers(ctx); err != nil || len(lbs) != 0 {
		t.Fatalf("listing: %+v, %v; want it left out", lbs, err)
	}
	for range 3 {
		_, err := h.GetLoadBalancerByID(ctx, lb.ID)
		if err != nil && !hnslb.IsNotFound(err) {
			t.Fatal(err)
		}
		shown = append(shown, err == nil)
	}
	if want := []bool{false, true, false}; !slices.Equal(shown, want) {
		t.Errorf("gets after a listing that left the load balancer out found it %v, want %v", shown, want)
	}
}
