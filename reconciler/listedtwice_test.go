package reconciler

import (
	"testing"

	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// A listing that answers an object twice (sim Faults.ListedTwice) shows one
// object, not two: a restart adopts each of its load balancers and remote
// endpoints once and deletes none of them as a duplicate of itself, and a
// drift repair over such a listing finds nothing to do.
func TestARestartWhoseListingAnswersEachObjectTwiceDeletesNothing(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2019, sim.ProfileWS2025} {
		t.Run(profile, func(t *testing.T) {
			e := newEnv(t, profile)
			want := e.threeServices()
			e.started(want...)
			e.hns.SetFaults(sim.Faults{ListedTwice: 1})
			r, res := e.start(e.hns, want...)
			e.converge(r)
			if err := r.Repair(ctx); err != nil {
				t.Fatal(err)
			}
			e.converge(r)
			if c := e.counters(); c.Writes() != 0 || res.Deleted != 0 {
				t.Errorf("restart and repair over listings answering each object twice: first Sync %+v, HNS calls %v; want no writes", res, c.Calls)
			}
			e.hns.SetFaults(sim.Faults{})
			e.assertRealized(want)
			e.assertStateFileMatchesHNS()
		})
	}
}

// The shortest listing that repeats an object is one load balancer answered
// twice (a node with a single Service): it too is adopted once and kept,
// where a listing of two entries taken for already unique made a restart
// delete the node's only load balancer as its own duplicate.
func TestARestartWhoseListingAnswersItsOnlyLoadBalancerTwiceDeletesNothing(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2019, sim.ProfileWS2025} {
		t.Run(profile, func(t *testing.T) {
			e := newEnv(t, profile)
			e.local("10.244.1.10")
			want := []intent.LB{lb("10.96.0.10", 53, loc("10.244.1.10"))}
			e.started(want...)
			e.hns.SetFaults(sim.Faults{ListedTwice: 1})
			r, res := e.start(e.hns, want...)
			e.converge(r)
			if c := e.counters(); c.Writes() != 0 || res.Deleted != 0 {
				t.Errorf("restart over a listing answering the one load balancer twice: first Sync %+v, HNS calls %v; want no writes", res, c.Calls)
			}
			e.hns.SetFaults(sim.Faults{})
			e.assertRealized(want)
			e.assertStateFileMatchesHNS()
		})
	}
}

// A cleanup over listings answering each object twice deletes each once
// and says so: the second delete of a repeated endpoint, answered "not
// found", counted it deleted again, and the operator read twice as many
// endpoints deleted as hnsproxy had.
func TestACleanupWhoseListingAnswersEachObjectTwiceCountsEachDeleteOnce(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	foreignLB, foreignEP := e.foreign()
	e.started(e.threeServices()...)
	e.hns.SetFaults(sim.Faults{ListedTwice: 1})
	res, err := Cleanup(ctx, e.hns, e.options())
	if err != nil {
		t.Fatal(err)
	}
	if res.DeletedLoadBalancers != 3 || res.DeletedEndpoints != 3 || len(res.Failed) != 0 || !res.StateRemoved {
		t.Errorf("cleanup over listings answering each object twice: %+v; want 3 load balancers and 3 remote endpoints deleted, state removed", res)
	}
	e.hns.SetFaults(sim.Faults{})
	e.assertOnlyForeignLeft(foreignLB, foreignEP)
}
