package reconciler

import (
	"maps"
	"slices"
	"testing"

	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// A change made while a drift repair lists HNS is programmed before the
// repair ends; the repair still repairs the drift it found; and what the
// change created or deleted is neither deleted, recreated, duplicated nor
// disowned because the listing predates it. Either listing may predate it:
// the endpoints' listing shows a remote endpoint (named ours, names.go) that
// the change then deletes, which the first repair after Start must not take
// for a late create.
func TestChangeDuringRepairListingIsNotHeldBack(t *testing.T) {
	for _, tc := range []struct {
		profile string
		held    sim.Op
	}{
		{sim.ProfileWS2022, sim.OpListLoadBalancers}, {sim.ProfileWS2025, sim.OpListLoadBalancers},
		{sim.ProfileWS2022, sim.OpListEndpoints}, {sim.ProfileWS2025, sim.OpListEndpoints},
	} {
		profile := tc.profile
		t.Run(profile+"/"+string(tc.held), func(t *testing.T) {
			e := newEnv(t, profile)
			want := e.threeServices()
			r := e.started(want...)
			// Drift the repair must find: a load balancer deleted by hand.
			drifted := e.hnsLB(want[0].Key)
			if err := e.hns.DeleteLoadBalancerOutOfBand(drifted.ID); err != nil {
				t.Fatal(err)
			}

			// The listing reads HNS, then its reply hangs: it shows HNS as it
			// was before the changes below.
			e.hns.SetFaults(sim.Faults{HangReply: []sim.Op{tc.held}})
			repaired := make(chan error, 1)
			go func() { repaired <- r.Repair(ctx) }()
			if err := e.hns.WaitHeld(ctx, 1); err != nil {
				t.Fatal(err)
			}
			e.local("10.244.1.12")
			added := lb("10.96.0.40", 80, loc("10.244.1.12"), rem("10.244.4.40", "192.168.0.4"))
			handOver(r, []intent.LB{added}, nil)
			remove(r, want[2].Key) // its remote endpoint 10.244.3.31 goes too
			res := r.Sync(ctx)     // would wait for the repair if it held the lock
			if res.Created != 2 || res.Failed != 0 {
				t.Fatalf("sync during the listing: %+v", res)
			}
			addedLB := e.hnsLB(added.Key)
			if addedLB == nil || e.hnsLB(want[2].Key) != nil {
				t.Fatal("the change was not programmed while the repair listed")
			}
			select {
			case err := <-repaired:
				t.Fatalf("repair ended (%v) before its listing was released", err)
			default:
			}

			e.hns.SetFaults(sim.Faults{})
			if err := <-repaired; err != nil {
				t.Fatal(err)
			}
			e.hns.ResetCounters()
			e.converge(r)
			final := []intent.LB{want[0], want[1], added}
			e.assertRealized(final)
			if c := e.counters(); c.Count(sim.OpCreateLoadBalancer) != 1 || c.Count(sim.OpDeleteLoadBalancer) != 0 ||
				c.Count(sim.OpCreateEndpoint) != 0 || c.Count(sim.OpDeleteEndpoint) != 0 {
				t.Errorf("after the repair: %v, want only the drifted load balancer created", c.Calls)
			}
			if got := e.hnsLB(added.Key); got == nil || got.ID != addedLB.ID {
				t.Errorf("the load balancer added during the listing was replaced: %v → %v", addedLB, got)
			}
			saved, err := loadState(e.stateFile)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range e.snapshot().LoadBalancers {
				if !slices.Contains(saved.LoadBalancers, l.ID) {
					t.Errorf("load balancer %s in HNS is not owned in the state file", l.ID)
				}
			}
			for _, ep := range e.snapshot().Endpoints {
				if ep.IsRemote() && !slices.Contains(saved.RemoteEndpoints, ep.ID) {
					t.Errorf("remote endpoint %s (%s) in HNS is not owned in the state file", ep.ID, ep.IP())
				}
			}
		})
	}
}

// The local index a repair's listing found keeps what Syncs changed while
// it listed: a pod's endpoint found meanwhile stays, one forgotten meanwhile
// stays forgotten; the rest is the listing's.
func TestRepairKeepsIndexChangesMadeDuringItsListing(t *testing.T) {
	before := map[string]string{"10.244.1.10": "a", "10.244.1.11": "b", "10.244.1.12": "c"}
	now := map[string]string{"10.244.1.10": "a", "10.244.1.12": "c", "10.244.1.13": "d"} // b forgotten, d found
	listed := map[string]string{"10.244.1.10": "a2", "10.244.1.11": "b", "10.244.1.12": "c"}
	got := keepIndexChanges(listed, before, now)
	want := map[string]string{"10.244.1.10": "a2", "10.244.1.12": "c", "10.244.1.13": "d"}
	if !maps.Equal(got, want) {
		t.Errorf("index %v, want %v", got, want)
	}
}
