package reconciler

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/klog/v2/ktesting"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// timedWrites is the simulator seen through a decorator that steps the
// fake clock by each on every create, as HNS's time per call would pass.
type timedWrites struct {
	hnslb.Client
	clock *clocktesting.FakeClock
	each  time.Duration
}

func (w *timedWrites) CreateEndpoint(ctx context.Context, n string, ep *hnslb.Endpoint) (*hnslb.Endpoint, error) {
	w.clock.Step(w.each)
	return w.Client.CreateEndpoint(ctx, n, ep)
}

func (w *timedWrites) CreateLoadBalancer(ctx context.Context, l *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	w.clock.Step(w.each)
	return w.Client.CreateLoadBalancer(ctx, l)
}

// remoteServices are n load balancers, each with a remote backend of its own.
func remoteServices(n int) []intent.LB {
	lbs := make([]intent.LB, n)
	for i := range lbs {
		lbs[i] = lb(fmt.Sprintf("10.96.%d.%d", i/250, i%250+1), 80, rem(fmt.Sprintf("10.244.%d.%d", 2+i/250, i%250+1), ""))
	}
	return lbs
}

// An HNS restart that drops every load balancer and remote endpoint leaves
// a repair with all of them to make again. The changes handed in after it
// are made in the next Sync, before the repair's work, which Syncs take in
// chunks of about repairSyncBudget; together they make each object once.
func TestNoChangeWaitsBehindRepairWork(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	const n = 300
	want := remoteServices(n)
	hns := &timedWrites{Client: e.hns, clock: e.clock, each: 2 * time.Millisecond}
	r, res := e.start(hns, want...)
	if res.Failed+res.Pending+res.RepairLeft != 0 || res.Created != 2*n {
		t.Fatalf("cold start %+v, want %d objects created and none left", res, 2*n)
	}
	if err := e.hns.RestartLosing(0, sim.RestartLosesRemoteEndpoints); err != nil {
		t.Fatal(err)
	}
	if err := r.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	e.hns.ResetCounters()

	// Handed in after the repair: a new Service whose backends are a new
	// pod and the pod of the last load balancer in the repair's order
	// (whose endpoint the restart dropped), and a changed one the repair
	// also marked.
	added := lb("10.96.9.1", 80, rem("10.244.9.1", ""), want[n-1].Backends[0])
	changed := want[n/2]
	changed.Backends = append(changed.Backends, rem("10.244.9.2", ""))
	upsert(r, added, changed)
	want[n/2] = changed
	want = append(want, added)

	res = r.Sync(ctx)
	if res.RepairLeft == 0 || res.RepairLeft >= 2*n-3 {
		t.Fatalf("first Sync after the repair %+v: want the handed changes and a chunk of the repair's work, and the rest left", res)
	}
	for _, d := range []intent.LB{added, changed} {
		got := e.hnsLB(d.Key)
		if got == nil {
			t.Fatalf("%s not made in the first Sync after the repair (%+v)", d.Key, res)
		}
		if ips := e.backendIPs(got); fmt.Sprint(ips) != fmt.Sprint(ipsOf(d.Backends)) {
			t.Errorf("%s made with backends %v, want %v", d.Key, ips, ipsOf(d.Backends))
		}
	}
	if next, ok := r.NextRetry(); !ok || next.After(e.clock.Now()) {
		t.Errorf("NextRetry %v %v with repair work left, want now", next, ok)
	}

	syncs := 1
	deletes := func() int {
		c := e.counters()
		return c.Count(sim.OpDeleteLoadBalancer) + c.Count(sim.OpDeleteEndpoint)
	}
	for res.RepairLeft > 0 {
		if d := deletes(); d != 0 {
			t.Fatalf("%d deletes by ID before Sync %d, while the repair's work goes on; want none", d, syncs+1)
		}
		began := e.clock.Now()
		res = r.Sync(ctx)
		syncs++
		// One chunk may overrun by what its last object took, and a
		// chunk sized from one that ran short may take twice as long.
		if took := e.clock.Since(began); took > 2*repairSyncBudget {
			t.Errorf("Sync %d took %v of HNS's time on the repair's work, want at most %v", syncs, took, 2*repairSyncBudget)
		}
		if res.Failed != 0 || syncs > n {
			t.Fatalf("Sync %d: %+v", syncs, res)
		}
	}
	if res.Pending != 2*n { // the old IDs' deletes (below)
		t.Errorf("last Sync %+v left %d objects pending, want the %d old IDs to delete", res, res.Pending, 2*n)
	}
	// 2 ms per create: about 50 creates fit a budget, 603 to make.
	if syncs < 8 {
		t.Errorf("the repair's work took %d Syncs; want chunks of about %v each", syncs, repairSyncBudget)
	}
	e.assertRealized(want)
	c := e.counters()
	if lbs, eps := c.Count(sim.OpCreateLoadBalancer), c.Count(sim.OpCreateEndpoint); lbs != n+1 || eps != n+2 {
		t.Errorf("made %d load balancers and %d endpoints, want each once: %d and %d", lbs, eps, n+1, n+2)
	}
	// Taken for vanished unread (past the cap of reads), each old ID is
	// deleted by ID once the repair's work is done: HNS answers "not
	// found" to each, and the state file forgets them.
	e.converge(r)
	if d := deletes(); d != 2*n {
		t.Errorf("%d deletes by ID, want one for each object the restart dropped: %d", d, 2*n)
	}
	e.assertStateFileMatchesHNS()
}

// A chunk grows while Syncs take under half the budget, and never past a
// Sync's worth: HNS's speed per call is not known ahead.
func TestRepairChunkFollowsHNSSpeed(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	r := &Reconciler{log: ktesting.NewLogger(t, ktesting.NewConfig()), clock: clk}
	r.repairWork = repairWork{lbs: map[intent.LBKey]struct{}{{VIP: "10.96.0.1"}: {}}, chunk: repairChunkFirst, since: clk.Now()}
	for range 20 {
		r.noteRepairWorkDone(r.repairWork.chunk, time.Millisecond)
	}
	if got := r.repairWork.chunk; got != repairChunkMax {
		t.Errorf("chunk %d after fast Syncs, want the most, %d", got, repairChunkMax)
	}
	r.noteRepairWorkDone(r.repairWork.chunk, 8*repairSyncBudget)
	if got := r.repairWork.chunk; got != repairChunkMax/8 {
		t.Errorf("chunk %d after a Sync 8 times over budget, want %d", got, repairChunkMax/8)
	}
	r.noteRepairWorkDone(r.repairWork.chunk, time.Hour)
	if got := r.repairWork.chunk; got != repairChunkMin {
		t.Errorf("chunk %d after a Sync that took an hour, want the least, %d", got, repairChunkMin)
	}
	before := r.repairWork.chunk
	r.noteRepairWorkDone(1, time.Millisecond)
	if got := r.repairWork.chunk; got != before {
		t.Errorf("chunk %d after a Sync that ran out of work, want it kept at %d", got, before)
	}
}

// Work that changes handed in took to its end (each object marked again
// before a Sync took it) is done too: the next repair's work starts its
// own count.
func TestRepairWorkTakenByChangesIsDone(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	r := &Reconciler{log: ktesting.NewLogger(t, ktesting.NewConfig()), clock: clk}
	k := intent.LBKey{VIP: "10.96.0.1"}
	r.repairWork = repairWork{lbs: map[intent.LBKey]struct{}{k: {}}, eps: map[string]struct{}{}, chunk: repairChunkFirst, since: clk.Now()}
	r.noteRepairWorkDone(0, time.Millisecond)
	if r.repairWork.since.IsZero() {
		t.Fatal("work left, yet counted done")
	}
	r.repairWork.handedLB(k)
	r.noteRepairWorkDone(0, time.Millisecond)
	if !r.repairWork.since.IsZero() {
		t.Error("the last of the work handed in, yet not counted done")
	}
}
