package sim

import (
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// TestAFaultedReadIsNeverApplied: Faults.Committed applies to writes; a
// faulted get or list fails before it reaches HNS's state and costs one hcn
// call, as any failed call does (docs/simulator.md, "HNS as a service").
func TestAFaultedReadIsNeverApplied(t *testing.T) {
	h := newSim(t, ProfileWS2022)
	backend := sharedBackend(t, h)
	lb, err := h.CreateLoadBalancer(ctx, lbDoc("10.96.0.10", 80, backend))
	if err != nil {
		t.Fatal(err)
	}
	h.SetFaults(Faults{ErrorRate: map[Op]float64{OpListLoadBalancers: 1, OpGetLoadBalancer: 1, OpListEndpoints: 1},
		Errors: []hnslb.ErrorCode{hnslb.CodeTimeout}, Committed: 1})
	before := h.Counters().HCNCalls
	_, err = h.ListLoadBalancers(ctx)
	wantCode(t, err, hnslb.CodeTimeout)
	_, err = h.GetLoadBalancerByID(ctx, lb.ID)
	wantCode(t, err, hnslb.CodeTimeout)
	_, err = h.ListEndpoints(ctx)
	wantCode(t, err, hnslb.CodeTimeout)
	if got := h.Counters().HCNCalls - before; got != 3 {
		t.Errorf("three failed reads cost %d hcn calls, want 3", got)
	}
}
