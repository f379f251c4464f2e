package reconciler

import (
	"fmt"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// A create HNS applied while its reply was lost, where listings leave
// that object out (sim Faults.LeftOutOfListings): a load balancer's lookup
// (did the lost create make it?) shows nothing, and a remote endpoint is
// created again without asking. HNS refuses the second create on the
// frontend or address the first one holds, and the refusal's own lookup
// shows the holder, which is taken: on a tenant's frontend (an external
// IP) too, where another agent's is never taken, as the lost create's
// (lostunseen.go). Where that listing leaves it out as well, the refusal
// is kept answered ("held by nothing") and the next drift repair's
// listing, which answers every lookup, shows it. Either way: one object
// in HNS, owned, and the Service served, not a second object or a leaked
// first one.
func TestALostCreateListingsLeaveOutIsTakenOnceShown(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2019, sim.ProfileWS2022, sim.ProfileWS2025} {
		for _, c := range []struct {
			kind      string // the lost create's: "cluster-ip", "external-ip" or "endpoint"
			listings  int
			repair    bool // the refusal's listing left it out
			dropNames bool // HNS answers remote endpoints without their names
		}{
			{"cluster-ip", 1, false, false}, {"cluster-ip", 3, true, false},
			{"external-ip", 1, false, false}, {"external-ip", 3, true, false},
			{"endpoint", 1, true, false}, {"endpoint", 3, true, false}, {"endpoint", 1, true, true},
		} {
			t.Run(fmt.Sprintf("%s/%s/%d/names-dropped=%v", profile, c.kind, c.listings, c.dropNames), func(t *testing.T) {
				e := newEnv(t, profile)
				if c.dropNames {
					e.declaringEndpoints()
				}
				r := e.started()
				d := e.createLostLeftOut(r, c.kind, c.listings)
				if c.repair {
					e.clock.Step(5 * time.Minute)
					if err := r.Repair(ctx); err != nil {
						t.Fatal(err)
					}
				}
				e.converge(r)
				e.assertRealized([]intent.LB{d})
				e.assertStateFileMatchesHNS()
				if n, m := len(e.loadBalancerIDs()), len(e.remoteIPs()); n != 1 || c.kind == "endpoint" && m != 1 {
					t.Errorf("HNS holds %d load balancers and %d remote endpoints, want the one the lost create made beside what else the Service needs", n, m)
				}
			})
		}
	}
}

// A load balancer whose create's reply was lost, whose Service goes
// before a listing showed what it made: listings that leave it out do not
// make it nobody's. Up to silentListings listings look for it, the
// first that shows it hands it over, and it is deleted.
func TestALostCreateOfAServiceGoneListingsLeaveOutIsDeleted(t *testing.T) {
	for _, kind := range []string{"cluster-ip", "external-ip"} {
		for listings := 1; listings < silentListings; listings++ {
			t.Run(fmt.Sprintf("%s/%d", kind, listings), func(t *testing.T) {
				e := newEnv(t, sim.ProfileWS2022)
				r := e.started()
				d := e.createLostLeftOut(r, kind, 0)
				remove(r, d.Key)
				e.leftOutFor(r, listings)
				e.converge(r)
				if n := len(e.loadBalancerIDs()); n != 0 {
					t.Errorf("HNS holds %d load balancers after the Service went, want none", n)
				}
				e.assertStateFileMatchesHNS()
			})
		}
	}
}

// createLostLeftOut makes the create of a Service of kind ("cluster-ip",
// "external-ip" or "endpoint", a remote endpoint's) reach HNS and lose its
// reply, then syncs r while listings leave out every object until n ran;
// it returns the Service.
func (e *env) createLostLeftOut(r *Reconciler, kind string, n int) intent.LB {
	e.t.Helper()
	var d intent.LB
	switch kind {
	case "endpoint":
		d = lb("10.96.0.41", 80, rem("10.244.2.10", "10.0.0.2"))
		e.endpointCreateLost(r, d)
	case "external-ip":
		d = e.backedLB("10.244.1.10", "203.0.113.40", false, intent.OriginExternalIP, false)
		upsert(r, d)
		e.createApplied(r, hnslb.CodeManagerStopped)
	default:
		d = e.backedLB("10.244.1.10", "10.96.0.40", false, intent.OriginClusterIP, false)
		upsert(r, d)
		e.createApplied(r, hnslb.CodeManagerStopped)
	}
	e.leftOutFor(r, n)
	return d
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
