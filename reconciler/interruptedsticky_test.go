package reconciler

import (
	"fmt"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// TestRestartAfterAnInterruptedStickyCreateWhoseServiceDroppedAffinity:
// hnsproxy sends a sticky load balancer's create, HNS applies it and the
// reply is lost, and hnsproxy dies before the next listing; while it is
// down the Service turns session affinity off. The start claims the load
// balancer from its declaration with no baseline to judge it by, and HNS
// may answer it without its distribution (the drop-distribution echo):
// read as listed it would match the Service without affinity and be kept,
// sticky until its Service next changes. Where HNS modifies, the start
// modifies it once; where it cannot, it is kept, as replacing would cut
// every frontend Start claims without a baseline (baseline.go,
// distributionUnanswered). Found by the overlay fault soak (seed 1,
// --echo=all, ws2025, 2026-12-02: "distribution 2, want 0" after five
// minutes of quiet).
func TestRestartAfterAnInterruptedStickyCreateWhoseServiceDroppedAffinity(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2025} {
		for _, name := range []string{"", sim.EchoDropDistribution, "all"} {
			for _, origin := range []intent.Origin{intent.OriginClusterIP, intent.OriginExternalIP} {
				t.Run(fmt.Sprintf("%s/echo=%s/%v", profile, name, origin), func(t *testing.T) {
					echo, err := sim.ParseEcho(name)
					if err != nil {
						t.Fatal(err)
					}
					e := newEnv(t, profile)
					e.hns.SetEcho(echo)
					sticky := e.backedLB("10.244.1.12", "203.0.113.5", false, origin, true)
					killed := e.started()
					upsert(killed, sticky)
					e.createApplied(killed, hnslb.CodeTimeout)
					if made := e.hnsLB(sticky.Key); made == nil {
						t.Fatal("HNS did not apply the create")
					}
					plain := sticky
					plain.Distribution = hnslb.DistributionNone
					r, _ := e.start(e.hns, plain)
					e.converge(r)
					e.assertRealized([]intent.LB{plain})
					got := e.hnsLB(plain.Key)
					if d := got.PortMappings[0].DistributionType; d != hnslb.DistributionNone {
						t.Errorf("HNS holds distribution %d after the restart, want none: the Service dropped affinity", d)
					}
					if st := statusOf(r, plain.Key); st.State != StateDone {
						t.Errorf("status %+v, want done", st)
					}
				})
			}
		}
	}
}
