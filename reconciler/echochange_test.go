package reconciler

import (
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/sim"
)

// TestAnEchoChangedByAnUpdateOfTheNodeReplacesNothing: how HNS answers may
// change with an update of the node (its v1 view gained fields between
// builds), from any echo option to exact answers or the other way. The
// load balancers HNS kept are hnsproxy's, written as it wants them: the
// restart after the update adopts them without a write (or, where HNS
// restarted under a running hnsproxy, the drift repair keeps them), the
// repairs write nothing, and the next restart neither. Before, each load
// balancer whose flags or distribution HNS answered otherwise than its
// baseline recorded was taken for drift and replaced, a moment without its
// frontend on Windows Server 2019 and 2022. Real drift is still repaired.
func TestAnEchoChangedByAnUpdateOfTheNodeReplacesNothing(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2019, sim.ProfileWS2022, sim.ProfileWS2025} {
		for name, echo := range echoProfiles(t) {
			for _, to := range []bool{true, false} {
				for _, running := range []bool{false, true} {
					before, after := sim.Echo{}, echo
					if !to {
						before, after = echo, sim.Echo{}
					}
					t.Run(profile+"/"+name+map[bool]string{true: "/from exact", false: "/to exact"}[to]+
						map[bool]string{true: "/while running", false: "/across a restart"}[running], func(t *testing.T) {
						e := newEnv(t, profile)
						e.hns.SetEcho(before)
						want := e.echoServices()
						r := e.started(want...)
						e.hns.SetEcho(after) // the update
						if !running {
							var res SyncResult
							r, res = e.start(e.hns, want...)
							if c := e.counters(); c.Writes() != 0 || res.Pending+res.Failed != 0 || len(res.ForeignHeld) != 0 {
								t.Errorf("start after the update: %+v, calls %v", res, c.Calls)
							}
						}
						for range 2 {
							e.clock.Step(5 * time.Minute)
							if err := r.Repair(ctx); err != nil {
								t.Fatal(err)
							}
							r.Sync(ctx)
						}
						if c := e.counters(); c.Writes() != 0 {
							t.Errorf("repairs after the update wrote %v", c.Calls)
						}
						r, res := e.start(e.hns, want...)
						if c := e.counters(); c.Writes() != 0 || res.Pending+res.Failed != 0 {
							t.Errorf("the next restart: %+v, calls %v", res, c.Calls)
						}
						e.assertRealized(want)
						e.driftIsRepairedInOnePeriod(r, want)
					})
				}
			}
		}
	}
}
