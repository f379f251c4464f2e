package reconciler

import (
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// A load balancer on a tenant's frontend (an external IP) whose create
// lost its reply, and whose backend endpoint HNS then dropped (the pod went,
// its endpoint with it), is still the lost create's: a listing finds it on
// the declared frontend with fewer backends than the create sent. Before,
// it was not claimed (it differed, and a tenant's frontend takes no foreign
// one): once the Service was deleted nothing ever removed it, through
// drift repairs and a restart alike; while the Service stayed, its create
// met it as another agent's and the Service was never programmed.
func TestLostCreateWhoseBackendHNSDroppedIsOurs(t *testing.T) {
	t.Run("service deleted", func(t *testing.T) {
		e, r, ext := lostCreateLessABackend(t)
		remove(r, ext.Key)
		e.repairedAndRestarted(r)
		if l := e.hnsLB(ext.Key); l != nil {
			t.Errorf("load balancer %s the lost create made is left in HNS on %s after its Service was deleted", l.ID, ext.Key)
		}
	})
	t.Run("service kept", func(t *testing.T) {
		e, r, _ := lostCreateLessABackend(t)
		kept := externalLB("203.0.113.5", 80, loc("10.244.1.10"))
		upsert(r, kept)
		e.repairedAndRestarted(r, kept)
		e.assertRealized([]intent.LB{kept})
		if n := e.counters().Count(sim.OpCreateLoadBalancer); n != 0 {
			t.Errorf("%d creates, want the lost create's load balancer kept (it is what is wanted)", n)
		}
	})
}

// lostCreateLessABackend makes, on a started reconciler, a create of an
// external IP's load balancer of two local backends whose reply is lost,
// then deletes one backend's endpoint in HNS (its pod went).
func lostCreateLessABackend(t *testing.T) (*env, *Reconciler, intent.LB) {
	e := newEnv(t, sim.ProfileWS2022)
	e.local("10.244.1.10")
	gone := e.local("10.244.1.11")
	r := e.started()
	ext := externalLB("203.0.113.5", 80, loc("10.244.1.10"), loc("10.244.1.11"))
	upsert(r, ext)
	if !r.Sync(ctx).ListingWanted { // its frontend is checked for a foreign holder first
		t.Fatal("a new external IP frontend was not checked by a listing")
	}
	if err := r.Lookup(ctx); err != nil {
		t.Fatal(err)
	}

	// The create reaches HNS and its reply is lost.
	e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpCreateLoadBalancer: 1}, Committed: 1,
		Errors: []hnslb.ErrorCode{hnslb.CodeTimeout}})
	if res := r.Sync(ctx); res.Failed != 1 {
		t.Fatalf("lost reply: %+v", res)
	}
	e.hns.SetFaults(sim.Faults{})
	if e.hnsLB(ext.Key) == nil {
		t.Fatal("the lost create made nothing: the test wants it in HNS")
	}

	// The pod goes: HNS drops its endpoint from the load balancer.
	if err := e.hns.DeleteEndpoint(ctx, gone); err != nil {
		t.Fatal(err)
	}
	e.hns.ResetCounters()
	return e, r, ext
}

// repairedAndRestarted converges r, runs a drift repair, and restarts from
// the state file with want desired, converging and repairing again.
func (e *env) repairedAndRestarted(r *Reconciler, want ...intent.LB) {
	e.t.Helper()
	e.converge(r)
	e.clock.Step(time.Hour)
	if err := r.Repair(ctx); err != nil {
		e.t.Fatal(err)
	}
	e.converge(r)
	r2, _ := e.start(e.hns, want...)
	e.converge(r2)
	e.clock.Step(time.Hour)
	if err := r2.Repair(ctx); err != nil {
		e.t.Fatal(err)
	}
	e.converge(r2)
}
