package healthcheck

import (
	"net/http"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// The start of the sync loop, as /healthz and /livez see it: what was
// queued before it is forgiven, a loop that has not finished its first
// sync is alive, and one whose syncs finished without reaching HNS is no
// longer starting, so it is found dead when it stops.

// A change queued while hnsproxy waited for the HNS network counts from
// the loop's start, not from when it was queued: a slow start must not
// turn /healthz unhealthy the moment the loop begins.
func TestAChangeQueuedBeforeTheSyncLoopStartsCountsFromTheStart(t *testing.T) {
	hs, clk, base := newProxyHealth(t, &fixedNode{readyNode()})
	hs.QueuedUpdate(v1.IPv4Protocol)
	clk.Step(timeout)
	hs.SyncLoopStarted(v1.IPv4Protocol)
	clk.Step(timeout - time.Second)
	if a := fetch(t, base+"/healthz"); a.code != http.StatusOK || !a.health.Healthy {
		t.Errorf("/healthz just inside the timeout after the loop started = %d %s, want 200", a.code, a.raw)
	}
}

// Until the loop finishes its first sync (caches, the Node's addresses,
// the reconciler's start) it is starting, hence alive, however long a
// change waits and though no HNS call was seen.
func TestLivezKeepsAStartingLoopAlive(t *testing.T) {
	hs, clk, base := newProxyHealth(t, &fixedNode{readyNode()})
	hs.SetHNSActivity(&fakeHNSActivity{lastEnded: clk.Now().Add(-time.Hour)})
	hs.SyncLoopStarted(v1.IPv4Protocol)
	hs.QueuedUpdate(v1.IPv4Protocol)
	clk.Step(3 * timeout)
	if a := fetch(t, base+"/livez"); a.code != http.StatusOK || !a.health.Healthy {
		t.Errorf("/livez before the first sync finished = %d %s, want 200", a.code, a.raw)
	}
}

// A first sync that finished without reaching HNS ends the start: a loop
// that then stops (a change waits past the timeout, no sync finishes, no
// HNS call under way or ended lately) is dead, and the kubelet restarts it.
func TestLivezFailsWhenTheLoopStopsAfterSyncsThatNeverReachedHNS(t *testing.T) {
	hs, clk, base := newProxyHealth(t, &fixedNode{readyNode()})
	hs.SetHNSActivity(&fakeHNSActivity{lastEnded: clk.Now().Add(-time.Hour)})
	hs.SyncLoopStarted(v1.IPv4Protocol)
	hs.SyncRan(v1.IPv4Protocol)
	hs.QueuedUpdate(v1.IPv4Protocol)
	clk.Step(timeout)
	if a := fetch(t, base+"/livez"); a.code != http.StatusServiceUnavailable || a.health.Healthy {
		t.Errorf("/livez with the loop stopped after a sync HNS never took = %d %s, want 503", a.code, a.raw)
	}
}

// A healthy answer says lastUpdated is now (kube-proxy's compatibility for
// clients that read it as "the loop runs"), each family keeping its own
// last sync; an unhealthy one says the latest sync of any family.
func TestLastUpdatedIsNowWhenHealthyAndTheLatestSyncOtherwise(t *testing.T) {
	hs, clk, base := newProxyHealth(t, &fixedNode{readyNode()})
	hs.Updated(v1.IPv4Protocol)
	synced4 := clk.Now()
	clk.Step(10 * time.Second)
	hs.Updated(v1.IPv6Protocol)
	synced6 := clk.Now()
	clk.Step(10 * time.Second)
	a := fetch(t, base+"/healthz")
	if a.code != http.StatusOK || !a.health.LastUpdated.Equal(clk.Now()) {
		t.Errorf("healthy /healthz = %d %s, want 200 with lastUpdated = now", a.code, a.raw)
	}
	if !a.health.Status[v1.IPv4Protocol].LastUpdated.Equal(synced4) {
		t.Errorf("healthy /healthz = %s, want IPv4's lastUpdated its own sync", a.raw)
	}
	hs.QueuedUpdate(v1.IPv4Protocol)
	clk.Step(timeout)
	for range 20 { // the families are kept in a map: ask often enough to meet both orders
		a := fetch(t, base+"/healthz")
		if a.code != http.StatusServiceUnavailable || !a.health.LastUpdated.Equal(synced6) {
			t.Fatalf("unhealthy /healthz = %d %s, want 503 with lastUpdated = IPv6's sync, the latest", a.code, a.raw)
		}
	}
}
