package reconciler

import (
	"fmt"
	"testing"

	"github.com/hnsproxy/hnsproxy/intent"
)

// Passing the hand-over's bound (pastBound) must not cost a reader the current
// status: a reader that meets a Sync in progress still gets the status the
// last flush ended with, and an idle reader whose own flush is the one
// that passes the bound gets the current status, not the one it read
// before (a Service created since missing, one deleted since still there).
func TestASnapshotAfterTheHandOverIsDroppedIsStillCurrent(t *testing.T) {
	e, lbs := fiftyWithOneRemoteEach(t)
	r := e.started(lbs...)
	assertSnapshotIsFullStatus(t, r)
	live, n := lbs, 0
	churn := func() { // every load balancer and remote endpoint replaced: ~200 statuses
		var next []intent.LB
		for i := range 50 {
			next = append(next, lb(fmt.Sprintf("10.97.%d.%d", n, i), 80, loc("10.244.1.10"), rem(fmt.Sprintf("10.245.%d.%d", n, i), "192.168.0.2")))
		}
		n++
		for _, l := range live {
			r.Delete(l.Key)
		}
		upsert(r, next...)
		live = next
	}

	// Two Syncs of churn pass the bound at the second's flush; a reader
	// then meets the next Sync in progress.
	for range 2 {
		churn()
		r.Sync(ctx)
	}
	wantLBs, wantEPs := r.Statuses(), r.EndpointStatuses()
	r.mu.Lock()
	during := r.StatusSnapshot()
	r.mu.Unlock()
	assertSnapshotIs(t, "during the Sync after the bound was passed", during, wantLBs, wantEPs)

	// Syncs bring the hand-over just short of its bound, then changes no
	// Sync has flushed yet: the idle reader's own flush passes it.
	assertSnapshotIsFullStatus(t, r)
	held := func() int {
		r.published.mu.Lock()
		defer r.published.mu.Unlock()
		return len(r.published.lbDelta) + len(r.published.epDelta)
	}
	for i := 0; held()+8 < max(minDeltasDropped, 2*(len(r.lbs)+len(r.eps))); i++ {
		r.Delete(live[i%len(live)].Key)
		live[i%len(live)] = lb(fmt.Sprintf("10.99.%d.%d", i/200, i%200), 80, loc("10.244.1.10"), rem(fmt.Sprintf("10.246.%d.%d", i/200, i%200), "192.168.0.2"))
		upsert(r, live[i%len(live)])
		r.Sync(ctx)
	}
	for i := range 10 {
		upsert(r, lb(fmt.Sprintf("10.100.0.%d", i), 80, loc("10.244.1.10")))
	}
	assertSnapshotIsFullStatus(t, r)
}

func assertSnapshotIs(t *testing.T, when string, s *StatusSnapshot, lbs []Status, eps []EndpointStatus) {
	t.Helper()
	if got, want := len(s.LoadBalancers), len(lbs); got != want || (want > 0 && s.LoadBalancers[0].Key != lbs[0].Key) {
		t.Fatalf("%s: the snapshot holds %d load balancers (first %v), the status %d (first %v)", when, got, firstKey(s.LoadBalancers), want, firstKey(lbs))
	}
	if got, want := len(s.RemoteEndpoints), len(eps); got != want || (want > 0 && s.RemoteEndpoints[0].Endpoint.IP != eps[0].Endpoint.IP) {
		t.Fatalf("%s: the snapshot holds %d remote endpoints, the status %d", when, got, want)
	}
}

func firstKey(s []Status) string {
	if len(s) == 0 {
		return "none"
	}
	return s[0].Key.String()
}
