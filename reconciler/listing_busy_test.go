package reconciler

import (
	"sync/atomic"
	"testing"

	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// A drift repair whose listing began while an abandoned call of ours ran
// does not judge that call's object, even if the call returned before the
// judging: the listing may show what the call did (HNS applied it, the
// reply was late), which is not drift. Before, the repair reported the
// object vanished ("recreating it") and counted it in
// hnsproxy_drift_repairs_total, whose alert fires at more than 5 an hour.
func TestRepairDoesNotJudgeWhatACallAbandonedBeforeItsListingDid(t *testing.T) {
	for _, tc := range []struct {
		name         string
		hung, listed sim.Op
	}{
		{"remote endpoint deleted", sim.OpDeleteEndpoint, sim.OpListEndpoints},
		{"load balancer deleted", sim.OpDeleteLoadBalancer, sim.OpListLoadBalancers},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, sim.ProfileWS2022)
			w := e.withHangWatch(0)
			watched := e.tweak
			var drift atomic.Int32
			e.tweak = func(o *Options) {
				watched(o)
				o.DriftRepaired = func(ObjectKind) { drift.Add(1) }
			}
			e.local("10.244.1.10")
			e.local("10.244.1.11")
			kept := lb("10.96.0.10", 80, loc("10.244.1.10"), rem("10.244.2.20", "192.168.0.2"))
			gone := lb("10.96.0.20", 80, loc("10.244.1.11"))
			r := w.watch(e.started(kept, gone))

			// The delete is applied, its reply held: abandoned.
			e.hns.SetFaults(sim.Faults{HangReply: []sim.Op{tc.hung}})
			want := []intent.LB{kept}
			if tc.hung == sim.OpDeleteEndpoint {
				want = []intent.LB{lb("10.96.0.10", 80, loc("10.244.1.10")), gone}
				upsert(r, want[0])
			} else {
				remove(r, gone.Key)
			}
			e.syncPastHangs(r, 1)
			if got := w.ops(); len(got) != 1 {
				t.Fatalf("timed-out operations %v, want the one delete", got)
			}

			// The repair lists while the call runs; the call returns before
			// the repair judges its listing.
			e.hns.SetFaults(sim.Faults{HangReply: []sim.Op{tc.hung, tc.listed}})
			repaired := make(chan error, 1)
			go func() { repaired <- r.Repair(ctx) }()
			if err := e.hns.WaitHeld(ctx, 2); err != nil {
				t.Fatal(err)
			}
			e.hns.SetFaults(sim.Faults{HangReply: []sim.Op{tc.listed}})
			<-w.returned
			e.hns.SetFaults(sim.Faults{})
			if err := <-repaired; err != nil {
				t.Fatal(err)
			}
			if n := drift.Load(); n != 0 {
				t.Errorf("the repair reported %d objects drifted; what it listed was our own abandoned delete", n)
			}

			e.converge(r)
			e.assertRealized(want)
			if err := r.Repair(ctx); err != nil {
				t.Fatal(err)
			}
			if n := drift.Load(); n != 0 {
				t.Errorf("%d objects reported drifted after all", n)
			}
		})
	}
}
