package reconciler

import (
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/sim"
)

// TestGUIDCaseChangedUnderARunningHnsproxy: HNS may answer GUIDs in another
// case than it did when hnsproxy made its objects, and not only across
// hnsproxy's restart (TestGUIDCaseChangesAcrossRestart): an update of the
// node that restarts HNS under a running hnsproxy. Its drift repairs then
// find every load balancer and remote endpoint of its own where it was,
// write nothing, and take nothing for another agent's. Before, a repair
// took them all for vanished and made them again: HNS refused each as
// existing, and the load balancer on a tenant's external IP was then taken
// for another agent's, never updated again.
func TestGUIDCaseChangedUnderARunningHnsproxy(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2019, sim.ProfileWS2022, sim.ProfileWS2025} {
		for _, upperFirst := range []bool{false, true} {
			t.Run(profile+map[bool]string{false: "/to upper case", true: "/to lower case"}[upperFirst], func(t *testing.T) {
				e := newEnv(t, profile)
				e.hns.SetEcho(sim.Echo{UpperGUIDs: upperFirst})
				want := e.echoServices()
				r := e.started(want...)
				e.hns.SetEcho(sim.Echo{UpperGUIDs: !upperFirst})
				for period := range 2 {
					e.clock.Step(5 * time.Minute)
					if err := r.Repair(ctx); err != nil {
						t.Fatal(err)
					}
					if res := r.Sync(ctx); res.Pending+res.Failed != 0 || len(res.ForeignHeld) != 0 {
						t.Fatalf("period %d: %+v", period, res)
					}
				}
				if c := e.counters(); c.Writes() != 0 {
					t.Errorf("repairs after the change of case wrote %v", c.Calls)
				}
				r, res := e.start(e.hns, want...)
				if c := e.counters(); c.Writes() != 0 || res.Pending+res.Failed != 0 || len(res.ForeignHeld) != 0 {
					t.Errorf("the next restart: %+v, calls %v", res, c.Calls)
				}
				e.assertRealized(want)
				e.driftIsRepairedInOnePeriod(r, want)
			})
		}
	}
}
