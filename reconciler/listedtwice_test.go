package reconciler

import (
	"testing"

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
