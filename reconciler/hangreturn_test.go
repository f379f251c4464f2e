package reconciler

import (
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// What met a hang is retried when the abandoned call returns, not when its
// backoff, lengthened at each visit while HNS hung, runs out: the create
// that hung (HNS applied it) is found and adopted, and the one not called
// while HNS held the other is made, all without the clock moving.
// Before, each waited for its backoff (16 s and more here).
func TestWhatMetAHangIsRetriedWhenTheCallReturns(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	w := e.withHangWatch(1)
	e.local("10.244.1.10")
	e.local("10.244.1.11")
	hung := lb("10.96.0.10", 80, loc("10.244.1.10"))
	notCalled := lb("10.96.0.20", 80, loc("10.244.1.11"))
	r := w.watch(e.started())
	e.hns.SetFaults(sim.Faults{HangReply: []sim.Op{sim.OpCreateLoadBalancer}})
	upsert(r, hung, notCalled)
	if res := e.syncPastHangs(r, 1); res.Failed != 2 || res.Created != 0 {
		t.Fatalf("sync with a hung create and HNS at its bound of abandoned calls: %+v", res)
	}
	late := e.hnsLB(hung.Key)
	if late == nil {
		t.Fatal("HangReply: HNS did not apply the create")
	}
	for range 8 { // HNS still hangs: every visit lengthens the backoffs
		next, _ := r.NextRetry()
		e.clock.Step(next.Sub(e.clock.Now()))
		r.Sync(ctx)
	}
	if next, _ := r.NextRetry(); next.Sub(e.clock.Now()) < 15*DefaultRetryBase {
		t.Fatalf("after eight visits the next retry is in %v; the test wants backoffs of 15 s and more: %+v", next.Sub(e.clock.Now()), r.Statuses())
	}
	// A create not called surely made nothing: no listing is needed to
	// find out, as one for a create that lost its reply is.
	if st := statusOf(r, notCalled.Key); !strings.Contains(st.LastError, "not called") {
		t.Errorf("status of the create not called: %+v", st)
	}

	e.hns.SetFaults(sim.Faults{})
	<-w.returned
	select {
	case <-r.CallsReturned():
	default:
		t.Error("CallsReturned did not say that the abandoned call returned")
	}
	for i := 0; ; i++ {
		next, ok := r.NextRetry()
		if !ok {
			break
		}
		if d := next.Sub(e.clock.Now()); d > 0 || i == 10 {
			t.Fatalf("after the call returned, sync %d: the next retry is in %v, want now: %+v", i, d, r.Statuses())
		}
		if r.Sync(ctx).ListingWanted {
			if err := r.Lookup(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	e.assertRealized([]intent.LB{hung, notCalled})
	if st := statusOf(r, hung.Key); st.RealizedID != late.ID {
		t.Errorf("status %+v, want the late create's %s adopted", st, late.ID)
	}
}
