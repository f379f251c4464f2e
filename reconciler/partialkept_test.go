package reconciler

import (
	"strings"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
)

// TestPartialKeptOnItsFrontendIsDeletedAgainWithoutARepair: a failed create
// left a load balancer without port mappings that holds its frontend
// unseen; hnsproxy claims and deletes it, and HNS reports the delete done
// but keeps it (microsoft/Windows-Containers#631). The retried create is
// refused as taken again, and the lookup it asks for shows that load
// balancer on the frontend: hnsproxy's, its delete unconfirmed, so it is
// deleted again and the Service programmed, without waiting for the
// periodic repair (on a node with it off, for good) and without telling the
// operator to delete hnsproxy's own object by hand. Found by a random
// history (seed 166 with hangs and power loss drawn).
func TestPartialKeptOnItsFrontendIsDeletedAgainWithoutARepair(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2022, sim.ProfileWS2025} {
		t.Run(profile, func(t *testing.T) {
			e := newEnv(t, profile)
			e.local("10.244.1.10")
			r := e.started()
			d := lb("10.96.0.30", 443, loc("10.244.1.10"))
			e.failCreatesLeavingPartials(hnslb.CodeInvalidParameter, true)
			upsert(r, d)
			r.Sync(ctx)
			partial := e.portless()
			if len(partial) != 1 {
				t.Fatalf("load balancers without port mappings %v, want the failed create's", partial)
			}
			e.hns.SetFaults(sim.Faults{KeptOnDelete: 1})
			heldByNothing := ""
			for i := 0; i < 20 && e.hnsLB(d.Key) == nil; i++ {
				if e.hns.Counters().KeptOnDelete > 0 {
					e.hns.SetFaults(sim.Faults{}) // kept once: a second delete goes through
				}
				if r.Sync(ctx).ListingWanted {
					if err := r.Lookup(ctx); err != nil {
						t.Fatal(err)
					}
				}
				if st := statusOf(r, d.Key); strings.Contains(st.LastError, "as taken, ") {
					heldByNothing = st.LastError
				}
				e.clock.Step(time.Minute)
			}
			if e.hns.Counters().KeptOnDelete != 1 {
				t.Fatalf("HNS kept %d deletes, want the partial's one", e.hns.Counters().KeptOnDelete)
			}
			if e.hnsLB(d.Key) == nil {
				t.Errorf("%s is not programmed without a repair: %+v", d.Key, statusOf(r, d.Key))
			}
			if heldByNothing != "" {
				t.Errorf("hnsproxy said the frontend is held by no load balancer of its own: %v", heldByNothing)
			}
			if left := e.portless(); len(left) != 0 {
				t.Errorf("load balancers without port mappings %v left", left)
			}
		})
	}
}
