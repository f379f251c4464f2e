package proxier

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// While the reconciler has part of a drift repair's work left, the next
// sync is queued at once, past --min-sync-period: the work is done a chunk
// per sync so that no change waits for all of it, and a min-sync-period
// between chunks would stretch an HNS restart's recovery many times over.
// Without such work a sync right after another waits as before.
func TestSyncFollowsAtOnceWhileRepairWorkIsLeft(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(10000, 0))
	p := idleProxier(t, Options{MinSyncPeriod: 10 * time.Second, SyncPeriod: time.Hour, Clock: clk})
	p.mu.Lock()
	p.markSynced(clk.Now())
	p.repairLeft = true
	p.scheduleNext()
	p.mu.Unlock()
	if p.queue.Len() != 1 {
		t.Fatalf("queue length %d after a sync that left repair work, want the next sync queued at once", p.queue.Len())
	}
	key, _ := p.queue.Get()
	p.queue.Done(key)

	p.mu.Lock()
	p.markSynced(clk.Now())
	p.repairLeft = false
	p.scheduleNext()
	p.mu.Unlock()
	clk.Step(9 * time.Second)
	if p.queue.Len() != 0 {
		t.Fatalf("sync queued within --min-sync-period of the last with no repair work left")
	}
}
