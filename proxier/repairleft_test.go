package proxier

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/hnsproxy/hnsproxy/proxier/desired"
	"github.com/hnsproxy/hnsproxy/reconciler"
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

// chunkedReconciler reports part of a drift repair's work left after each
// of its first chunks Syncs, and counts its Syncs.
type chunkedReconciler struct {
	repairCounter
	chunks int
	syncs  atomic.Int32
}

func (r *chunkedReconciler) Sync(context.Context) reconciler.SyncResult {
	n := int(r.syncs.Add(1))
	if n <= r.chunks {
		return reconciler.SyncResult{RepairLeft: r.chunks - n + 1}
	}
	return reconciler.SyncResult{}
}

// TestRunSyncsEachChunkOfRepairWorkPastMinSyncPeriod: the sync loop itself
// (not only the queue) runs the syncs that take a drift repair's work one
// after another, however long --min-sync-period is. The loop's own wait
// for --min-sync-period deferred each to a period after the one before,
// so an HNS restart's recovery took a min-sync-period per chunk.
func TestRunSyncsEachChunkOfRepairWorkPastMinSyncPeriod(t *testing.T) {
	node := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: nodeName},
		Status:     v1.NodeStatus{Addresses: []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: nodeIP}}},
	}
	client := fake.NewClientset(node)
	factory := informers.NewSharedInformerFactory(client, 0)
	rec := &chunkedReconciler{chunks: 3}
	p, err := New(Options{
		NodeName: nodeName, Kube: client, Reconciler: rec,
		Config:        desired.Config{Mode: desired.L2Bridge},
		MinSyncPeriod: time.Hour, SyncPeriod: 2 * time.Hour,
	}, factory)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	factory.Start(ctx.Done())
	go func() { done <- p.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	want := int32(rec.chunks + 1) // the first sync, then one per chunk left
	if err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) { return rec.syncs.Load() >= want, nil }); err != nil {
		t.Fatalf("%d syncs ran with repair work left after each of the first %d, want %d at once, past --min-sync-period", rec.syncs.Load(), rec.chunks, want)
	}
}
