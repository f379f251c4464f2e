package reconciler

import (
	"fmt"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
)

// TestRefusedCreatesPiledUpAskForAListingWithoutARepair: with the periodic
// drift repair off, a Service whose creates HNS refuses for good (0x57)
// while its pods churn, each refusal leaving a load balancer without port
// mappings. A refusal asks for no listing, so each refused document was
// remembered for a listing that never came, and what each left stayed in
// HNS. None can be forgotten unlooked-for (partial.go); past the bound the
// failures ask for a lookup listing, which claims what they left, and the
// Sync after deletes it: both the record, in memory and in the state file,
// and the leftovers in HNS stay bounded.
func TestRefusedCreatesPiledUpAskForAListingWithoutARepair(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	const steps = 2*minFailuresListed + 10
	pod := func(i int) string { return fmt.Sprintf("10.244.%d.%d", 1+i/200, 10+i%200) }
	for i := range steps + 1 {
		e.local(pod(i))
	}
	r := e.started()
	e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpCreateLoadBalancer: 1}, Errors: []hnslb.ErrorCode{hnslb.CodeInvalidParameter},
		PartialCreates: 1})
	listings := 0
	for i := range steps {
		// A rolling update: one pod replaced by the next at each step.
		upsert(r, lb("10.96.0.10", 80, loc(pod(i)), loc(pod(i+1))))
		if r.Sync(ctx).ListingWanted {
			// What the proxier does, drift repair off or not.
			if err := r.Lookup(ctx); err != nil {
				t.Fatal(err)
			}
			listings++
		}
		r.mu.Lock()
		n := len(r.failedLBs)
		r.mu.Unlock()
		if n > minFailuresListed+1 {
			t.Fatalf("step %d: %d failed creates remembered, past the bound of %d", i, n, minFailuresListed)
		}
		if left := len(e.portless()); left > minFailuresListed+2 {
			t.Fatalf("step %d: HNS lists %d load balancers without port mappings", i, left)
		}
	}
	if listings != 2 {
		t.Errorf("%d listings over %d refused documents, want 2", listings, steps)
	}
	st, err := loadState(e.stateFile)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(st.FailedLoadBalancerCreates); n > minFailuresListed+1 {
		t.Errorf("the state file remembers %d failed creates", n)
	}
	// Nothing was lost: a repair still finds what every failure left.
	e.hns.SetFaults(sim.Faults{})
	if err := r.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	e.converge(r)
	if left := e.portless(); len(left) != 0 {
		t.Errorf("%d load balancers without port mappings left", len(left))
	}
}
