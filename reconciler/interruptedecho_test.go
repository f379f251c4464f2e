package reconciler

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// TestRestartClaimsAnInterruptedCreateUnderEveryEcho: hnsproxy is killed
// after HNS applied a create whose reply was lost; the restart claims the
// load balancer on the declared frontend as its own, on a tenant's
// frontend too, in either family, sticky or not, under every echo: it is
// realized, never left as another agent's, and kept without a write. The
// one exception is a sticky one HNS answers without its distribution: it
// is judged against the Service as it is now (which may have turned
// affinity on meanwhile) and replaced once (docs/reliability.md,
// "Echo-proof identity"). One sent sticky whose Service dropped affinity
// meanwhile is replaced too
// (TestRestartAfterAnInterruptedStickyCreateWhoseServiceDroppedAffinity).
func TestRestartClaimsAnInterruptedCreateUnderEveryEcho(t *testing.T) {
	for _, name := range append(sim.EchoNames(), "", "all") {
		echo, err := sim.ParseEcho(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, ipv6 := range []bool{false, true} {
			for _, origin := range []intent.Origin{intent.OriginExternalIP, intent.OriginClusterIP} {
				for _, sticky := range []bool{false, true} {
					t.Run(fmt.Sprintf("echo=%s/ipv6=%v/%v/sticky=%v", name, ipv6, origin, sticky), func(t *testing.T) {
						e := newEnv(t, sim.ProfileWS2022)
						e.hns.SetEcho(echo)
						ip, vip := "10.244.1.12", "203.0.113.5"
						if ipv6 {
							ip, vip = "fd00:10:244:1::12", "2001:db8::5"
						}
						d := e.backedLB(ip, vip, ipv6, origin, sticky)
						killed := e.started()
						upsert(killed, d)
						e.createApplied(killed, hnslb.CodeTimeout)
						made := e.hnsLB(d.Key)
						if made == nil {
							t.Fatal("HNS did not apply the create")
						}
						e.hns.ResetCounters()
						r, res := e.start(e.hns, d)
						e.converge(r)
						replaced := echo.DropDistribution && sticky
						if c := e.counters(); len(res.ForeignHeld) != 0 || (c.Writes() != 0) != replaced {
							t.Errorf("restart: %+v, calls %v, want a replacement: %v", res, c.Calls, replaced)
						}
						e.assertRealized([]intent.LB{d})
						if st := statusOf(r, d.Key); st.State != StateDone || (!replaced && !strings.EqualFold(st.RealizedID, made.ID)) {
							t.Errorf("status %+v, want done on the interrupted create's %s", st, made.ID)
						}
					})
				}
			}
		}
	}
}
