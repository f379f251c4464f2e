package reconciler

import (
	"strconv"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// A create HNS applied while its reply was lost, where listings leave
// that object out (sim Faults.LeftOutOfListings): a load balancer's lookup
// (did the lost create make it?) takes it for not made, and a remote
// endpoint is created again without asking. HNS refuses the second create
// on the frontend or address the first one holds, and the refusal's own
// lookup shows the holder, which is taken. Where that listing leaves it
// out as well, the refusal is kept answered ("held by nothing") and the
// next drift repair's listing, which answers every lookup, shows it. Either
// way: one object in HNS, owned, and the Service served, not a second
// object or a leaked first one.
func TestALostCreateListingsLeaveOutIsTakenOnceShown(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2019, sim.ProfileWS2022, sim.ProfileWS2025} {
		for _, c := range []struct {
			endpoint  bool
			listings  int
			repair    bool // the refusal's listing left it out
			dropNames bool // HNS answers remote endpoints without their names
		}{{false, 1, false, false}, {false, 3, true, false}, {true, 1, true, false}, {true, 3, true, false}, {true, 1, true, true}} {
			kind := "loadbalancer"
			if c.endpoint {
				kind = "endpoint"
			}
			if c.dropNames {
				kind += "-unnamed"
			}
			t.Run(profile+"/"+kind+"/"+strconv.Itoa(c.listings), func(t *testing.T) {
				e := newEnv(t, profile)
				if c.dropNames {
					e.declaringEndpoints()
				}
				r := e.started()
				var d intent.LB
				if c.endpoint {
					d = lb("10.96.0.41", 80, rem("10.244.2.10", "10.0.0.2"))
					e.endpointCreateLost(r, d)
				} else {
					d = e.backedLB("10.244.1.10", "10.96.0.40", false, intent.OriginClusterIP, false)
					upsert(r, d)
					e.createApplied(r, hnslb.CodeManagerStopped)
				}
				e.leftOutFor(r, c.listings)
				if c.repair {
					e.clock.Step(5 * time.Minute)
					if err := r.Repair(ctx); err != nil {
						t.Fatal(err)
					}
				}
				e.converge(r)
				e.assertRealized([]intent.LB{d})
				e.assertStateFileMatchesHNS()
				if n, m := len(e.loadBalancerIDs()), len(e.remoteIPs()); n != 1 || c.endpoint && m != 1 {
					t.Errorf("HNS holds %d load balancers and %d remote endpoints, want the one the lost create made beside what else the Service needs", n, m)
				}
			})
		}
	}
}

// leftOutFor syncs r, stepping the clock to each retry and answering what
// it waits for with listings that leave out every object, until n such
// listings ran or 20 syncs did.
func (e *env) leftOutFor(r *Reconciler, n int) {
	e.t.Helper()
	e.hns.SetFaults(sim.Faults{LeftOutOfListings: 1})
	defer e.hns.SetFaults(sim.Faults{})
	for i, ran := 0, 0; ran < n && i < 20; i++ {
		if r.Sync(ctx).ListingWanted {
			_ = r.Lookup(ctx)
			ran++
			continue
		}
		if next, ok := r.NextRetry(); ok {
			if d := next.Sub(e.clock.Now()); d > 0 {
				e.clock.Step(d)
			}
		}
	}
}
