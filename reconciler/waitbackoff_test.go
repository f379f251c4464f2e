package reconciler

import (
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// Waiting for a listing is not a failure: a create whose reply is lost
// again and again backs off 1, 2, 4 s, once per failure, although before
// each retry it waits for the listing that says whether the last one made
// the load balancer. Counted as failures, the waits made it 1, 4, 16 s
// (the fault soak, seed 32: 16 s idle after its faults ended).
func TestWaitingForAListingDoesNotLengthenTheBackoff(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	e.local("10.244.1.10")
	r := e.started()
	e.hns.SetFaults(sim.Faults{
		ErrorRate: map[sim.Op]float64{sim.OpCreateLoadBalancer: 1},
		Errors:    []hnslb.ErrorCode{hnslb.CodeTimeout},
	})
	want := lb("10.96.0.10", 80, loc("10.244.1.10"))
	upsert(r, want)
	for i := range 3 {
		var res SyncResult
		if i == 0 {
			res = r.Sync(ctx)
		} else {
			next, _ := r.NextRetry()
			e.clock.Step(next.Sub(e.clock.Now()))
			res = e.syncListed(r) // the retry waits for a listing, then creates
		}
		if res.Failed != 1 {
			t.Fatalf("attempt %d: %+v, want its create failed", i+1, res)
		}
		if got, due := statusOf(r, want.Key).NextRetry.Sub(e.clock.Now()), DefaultRetryBase<<i; got != due {
			t.Errorf("after failure %d the retry is in %v, want %v", i+1, got, due)
		}
	}
	e.hns.SetFaults(sim.Faults{})
	e.converge(r)
	e.assertRealized([]intent.LB{want})
}
