package reconciler

import (
	"fmt"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// A listing that leaves out an object HNS holds (sim
// Faults.LeftOutOfListings) does not make hnsproxy forget it: a load
// balancer of its own that no Service wants any more, left out of Start's
// listing or of a drift repair's while its delete waits for a retry, is
// still deleted once listings show it again, rather than left in HNS for
// good as another program's.
func TestALoadBalancerOneListingLeavesOutIsStillDeleted(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2019, sim.ProfileWS2025} {
		t.Run(profile+"/start", func(t *testing.T) {
			e := newEnv(t, profile)
			want := e.threeServices()
			e.started(want...)
			e.hns.SetFaults(sim.Faults{LeftOutOfListings: 1})
			r := New(e.hns, e.options())
			upsert(r, want[:2]...) // the third Service was deleted while hnsproxy was down
			if err := r.Start(ctx); err != nil {
				t.Fatal(err)
			}
			e.hns.SetFaults(sim.Faults{})
			e.leftOutSettles(r)
			e.assertRealized(want[:2])
			e.assertStateFileMatchesHNS()
		})
		t.Run(profile+"/repair", func(t *testing.T) {
			e := newEnv(t, profile)
			want := e.threeServices()
			r := e.started(want...)
			e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpDeleteLoadBalancer: 1, sim.OpDeleteEndpoint: 1}})
			remove(r, want[2].Key)
			r.Sync(ctx) // the deletes fail and wait for their retry
			e.hns.SetFaults(sim.Faults{LeftOutOfListings: 1})
			if err := r.Repair(ctx); err != nil {
				t.Fatal(err)
			}
			e.hns.SetFaults(sim.Faults{})
			e.leftOutSettles(r)
			e.assertRealized(want[:2])
			e.assertStateFileMatchesHNS()
		})
	}
}

// leftOutSettles converges r and runs two drift repairs, each converged,
// as the repair period would.
func (e *env) leftOutSettles(r *Reconciler) {
	e.t.Helper()
	e.converge(r)
	for range 2 {
		e.clock.Step(5 * time.Minute)
		if err := r.Repair(ctx); err != nil {
			e.t.Fatal(err)
		}
		e.converge(r)
	}
}

// A Start after HNS lost more of hnsproxy's objects than a listing leaves
// out by chance (a reboot, a restart that dropped them) reads none of them
// by ID: it forgets them unread, as before, rather than hold the start for
// a read of each.
func TestAStartAfterHNSLostManyObjectsReadsNoneByID(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	e.local("10.244.1.10")
	var want []intent.LB
	for i := range maxUnlistedReads + 1 {
		want = append(want, lb(fmt.Sprintf("10.96.%d.%d", i/250, i%250+1), 80, loc("10.244.1.10")))
	}
	e.started(want...)
	if err := e.hns.RestartLosing(0, sim.RestartLosesLoadBalancers); err != nil {
		t.Fatal(err)
	}
	e.hns.ResetCounters()
	r := e.reconciler()
	upsert(r, want...)
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if n := e.counters().Count(sim.OpGetLoadBalancer); n != 0 {
		t.Errorf("Start read %d lost load balancers by ID, want none", n)
	}
	e.converge(r)
	e.assertRealized(want)
	e.assertStateFileMatchesHNS()
}
