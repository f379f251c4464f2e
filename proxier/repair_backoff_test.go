package proxier

import (
	"context"
	"errors"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/internal/klogtest"
	"github.com/hnsproxy/hnsproxy/reconciler"
	"github.com/hnsproxy/hnsproxy/sim"
)

// repairCounter is a Reconciler that only counts drift repairs and lookup
// listings, and fails them while down is set.
type repairCounter struct {
	repairs, lookups int
	down             bool
	why              string // the error while down, if not "HNS unavailable"
}

func (r *repairCounter) Start(context.Context) error                { return nil }
func (r *repairCounter) Upsert(intent.LB)                           {}
func (r *repairCounter) Delete(intent.LBKey)                        {}
func (r *repairCounter) UpsertEndpoint(intent.RemoteEndpoint)       {}
func (r *repairCounter) DeleteEndpoint(string)                      {}
func (r *repairCounter) RecheckLocal([]string)                      {}
func (r *repairCounter) LocalReturned([]string)                     {}
func (r *repairCounter) Expect(int, int)                            {}
func (r *repairCounter) Sync(context.Context) reconciler.SyncResult { return reconciler.SyncResult{} }
func (r *repairCounter) NextRetry() (time.Time, bool)               { return time.Time{}, false }
func (r *repairCounter) LearnedBackendCap() int                     { return 0 }
func (r *repairCounter) CallsReturned() <-chan struct{}             { return nil }
func (r *repairCounter) Repair(context.Context) error {
	r.repairs++
	return r.listed()
}

func (r *repairCounter) Lookup(context.Context) error {
	r.lookups++
	return r.listed()
}

func (r *repairCounter) listed() error {
	if r.down && r.why != "" {
		return errors.New(r.why)
	}
	if r.down {
		return errors.New("HNS unavailable")
	}
	return nil
}

// syncAndRepair runs one sync and waits for the drift repair it started, if any.
func syncAndRepair(p *Proxier) { syncAndRepairCtx(context.Background(), p) }

// TestFailedRepairBacksOff: a drift repair that fails (HNS down) is retried
// with backoff, not at every sync: each attempt lists all of HNS, and with a
// zero MinSyncPeriod the loop would otherwise spin on it.
func TestFailedRepairBacksOff(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(10000, 0))
	rec := &repairCounter{down: true}
	p := idleProxier(t, Options{Clock: clk, RepairPeriod: time.Hour, Reconciler: rec})
	ctx := context.Background()
	p.Sync(ctx) // initializes; a repair is not due yet
	p.mu.Lock()
	p.lastRepair = clk.Now().Add(-time.Hour)
	p.mu.Unlock()

	syncAndRepair(p)
	syncAndRepair(p)
	if rec.repairs != 1 {
		t.Fatalf("%d repair attempts in two immediate syncs while HNS is down, want 1", rec.repairs)
	}
	clk.Step(repairRetryMax)
	syncAndRepair(p)
	if rec.repairs != 2 {
		t.Fatalf("%d repair attempts after the backoff, want 2", rec.repairs)
	}
	rec.down = false
	clk.Step(repairRetryMax)
	syncAndRepair(p)
	syncAndRepair(p)
	if rec.repairs != 3 {
		t.Fatalf("%d repair attempts once HNS is back, want 3 (then none until the period)", rec.repairs)
	}
	clk.Step(time.Hour)
	syncAndRepair(p)
	if rec.repairs != 4 {
		t.Fatalf("%d repair attempts after a repair period, want 4", rec.repairs)
	}
}

// TestZeroRepairPeriodTurnsRepairOff: --drift-repair-period=0 means no
// drift repair at all, however much time passes.
func TestZeroRepairPeriodTurnsRepairOff(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(10000, 0))
	rec := &repairCounter{}
	p := idleProxier(t, Options{Clock: clk, RepairPeriod: 0, Reconciler: rec})
	ctx := context.Background()
	for range 3 {
		p.Sync(ctx)
		clk.Step(24 * time.Hour)
	}
	if rec.repairs != 0 {
		t.Errorf("%d drift repairs with RepairPeriod 0, want none", rec.repairs)
	}
}

// returningReconciler reports HNS's return from a restart in the Syncs
// while returned is set, objects waiting for a listing while wanted is, and
// objects its probe found gone while gone is.
type returningReconciler struct {
	repairCounter
	returned, wanted, gone bool
}

func (r *returningReconciler) Sync(context.Context) reconciler.SyncResult {
	return reconciler.SyncResult{HNSReturned: r.returned, ListingWanted: r.wanted, ObjectsGone: r.gone}
}

// repairDueInAnHour is an initialized proxier over a returningReconciler,
// with a drift repair period of an hour and its last repair now.
func repairDueInAnHour(t *testing.T) (*Proxier, *returningReconciler, *clocktesting.FakeClock) {
	clk := clocktesting.NewFakeClock(time.Unix(10000, 0))
	rec := &returningReconciler{}
	p := idleProxier(t, Options{Clock: clk, RepairPeriod: time.Hour, Reconciler: rec})
	syncAndRepair(p) // initializes
	p.mu.Lock()
	p.lastRepair = clk.Now() // as Run sets it after Start
	p.mu.Unlock()
	return p, rec, clk
}

// TestObjectsGoneMakesARepairDue: a Sync whose probe found an object of
// hnsproxy's deleted behind its back (a runbook's Remove-HnsPolicyList)
// makes a drift repair due at once, not a repair period after the last,
// and once; with drift repair off nothing lists HNS.
func TestObjectsGoneMakesARepairDue(t *testing.T) {
	p, rec, clk := repairDueInAnHour(t)
	rec.gone = true
	syncAndRepair(p)
	rec.gone = false
	repairsOnceThenWaits(t, p, rec, "the probe found objects gone")
	noRepairWhenOff(t, clk, &returningReconciler{gone: true})
}

// TestObjectsGoneDuringARepairBackoffRepairsAtOnce: objects the probe found
// gone make a drift repair due at once even while an earlier repair that
// failed waits for its retry: the backoff was for an HNS that did not
// answer, and this Sync's probe heard it answer.
func TestObjectsGoneDuringARepairBackoffRepairsAtOnce(t *testing.T) {
	p, rec, clk := repairDueInAnHour(t)
	p.mu.Lock()
	p.lastRepair = clk.Now().Add(-time.Hour)
	p.mu.Unlock()
	rec.down = true
	syncAndRepair(p) // the repair fails and backs off
	if rec.repairs != 1 {
		t.Fatalf("%d repairs, want the one that failed", rec.repairs)
	}
	rec.down, rec.gone = false, true
	syncAndRepair(p)
	rec.gone = false
	syncAndRepair(p)
	if rec.repairs != 2 {
		t.Fatalf("%d repairs in the Sync after the probe found objects gone, within the failed repair's backoff; want 2", rec.repairs)
	}
}

// repairsOnceThenWaits checks that the next Sync, the one after the Sync
// that found why, starts one repair, and the Sync after it none: the
// repair is then due again only at its period.
func repairsOnceThenWaits(t *testing.T, p *Proxier, rec *returningReconciler, why string) {
	t.Helper()
	syncAndRepair(p)
	if rec.repairs != 1 {
		t.Fatalf("%d repairs in the Sync after %s, want 1", rec.repairs, why)
	}
	syncAndRepair(p)
	if rec.repairs != 1 {
		t.Fatalf("%d repairs after that, want still 1 (then none until the period)", rec.repairs)
	}
}

// noRepairWhenOff checks that with drift repair off, syncs that report
// what would make a repair due list nothing, and that the operator reads
// at -v=0 why what the sync found stays unrepaired.
func noRepairWhenOff(t *testing.T, clk *clocktesting.FakeClock, off *returningReconciler) {
	t.Helper()
	p := idleProxier(t, Options{Clock: clk, RepairPeriod: 0, Reconciler: off})
	ctx, log := klogtest.Context(context.Background(), 0)
	for range 3 {
		syncAndRepairCtx(ctx, p)
	}
	if off.repairs != 0 {
		t.Errorf("%d repairs with drift repair off, want none", off.repairs)
	}
	if log.Count("drift repair is off") == 0 {
		t.Errorf("with drift repair off the log does not say why nothing is repaired:\n%s", log)
	}
}

// TestHNSReturnMakesARepairDue: HNS back from a restart it may have lost
// objects in makes a drift repair due at once, not a repair period after
// the last; one that fails is retried after its backoff, and with drift
// repair off nothing lists HNS.
func TestHNSReturnMakesARepairDue(t *testing.T) {
	p, rec, clk := repairDueInAnHour(t)
	rec.returned = true
	syncAndRepair(p) // HNS answered again in this Sync
	rec.returned = false
	if rec.repairs != 0 {
		t.Fatalf("%d repairs before the Sync after HNS returned", rec.repairs)
	}
	repairsOnceThenWaits(t, p, rec, "HNS returned")

	// HNS down again by the time the repair lists: it stays due, after a backoff.
	rec.returned, rec.down = true, true
	syncAndRepair(p)
	rec.returned = false
	syncAndRepair(p)
	syncAndRepair(p)
	if rec.repairs != 2 {
		t.Fatalf("%d repairs, want 2: one failed, none more before its backoff", rec.repairs)
	}
	rec.down = false
	clk.Step(repairRetryMax)
	syncAndRepair(p)
	if rec.repairs != 3 {
		t.Fatalf("%d repairs after the backoff, want 3: the failed one again, not an hour later", rec.repairs)
	}

	noRepairWhenOff(t, clk, &returningReconciler{returned: true})
}

// TestSyncThatWantsAListingStartsALookup: a sync that leaves objects
// waiting for a listing (reconciler.SyncResult.ListingWanted) starts a
// lookup listing at once, beside the loop, even with the periodic repair
// off; no drift repair; none while nothing waits; a failed one is retried
// after its backoff, not at every sync.
func TestSyncThatWantsAListingStartsALookup(t *testing.T) {
	for _, period := range []time.Duration{0, time.Hour} {
		clk := clocktesting.NewFakeClock(time.Unix(10000, 0))
		rec := &returningReconciler{}
		p := idleProxier(t, Options{Clock: clk, RepairPeriod: period, Reconciler: rec})
		syncAndRepair(p) // initializes
		p.mu.Lock()
		p.lastRepair = clk.Now() // as Run sets it after Start
		p.mu.Unlock()
		syncAndRepair(p)
		if rec.lookups != 0 {
			t.Fatalf("period %v: %d lookup listings with nothing waiting", period, rec.lookups)
		}
		rec.wanted = true
		syncAndRepair(p)
		if rec.lookups != 1 || rec.repairs != 0 {
			t.Fatalf("period %v: %d lookup listings and %d repairs after a sync that wants a listing, want 1 lookup in that sync", period, rec.lookups, rec.repairs)
		}
		rec.wanted = false
		syncAndRepair(p)
		if rec.lookups != 1 {
			t.Fatalf("period %v: %d lookup listings once nothing waits, want still 1", period, rec.lookups)
		}

		rec.wanted, rec.down = true, true
		for range 3 {
			syncAndRepair(p)
		}
		if rec.lookups != 2 {
			t.Fatalf("period %v: %d lookup listings while HNS is down, want 2: one failed, none more before its backoff", period, rec.lookups)
		}
		rec.down = false
		clk.Step(repairRetryMax)
		syncAndRepair(p)
		if rec.lookups != 3 || rec.repairs != 0 {
			t.Fatalf("period %v: %d lookup listings and %d repairs after the backoff, want 3 and 0", period, rec.lookups, rec.repairs)
		}
	}
}

// TestFailingListingIsLoggedWhenItStartsOrChanges: a drift repair that
// fails for as long as HNS refuses the listing is retried every 30 s at
// most; at -v=0 that is one error line when the failure starts, one more
// when its error changes or it comes back after a listing worked, not
// one per retry.
func TestFailingListingIsLoggedWhenItStartsOrChanges(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(10000, 0))
	rec := &repairCounter{down: true}
	p := idleProxier(t, Options{Clock: clk, RepairPeriod: time.Hour, Reconciler: rec})
	ctx, log := klogtest.Context(context.Background(), 0)
	p.Sync(ctx) // initializes; a repair is not due yet
	p.mu.Lock()
	p.lastRepair = clk.Now().Add(-time.Hour)
	p.mu.Unlock()
	failures := func() int { return log.Count("failed; will retry") }
	retries := func(n int) {
		for range n {
			syncAndRepairCtx(ctx, p)
			clk.Step(repairRetryMax)
		}
	}

	retries(20)
	if rec.repairs != 20 || failures() != 1 {
		t.Fatalf("%d failure lines at -v=0 over %d failed repairs, want 1:\n%s", failures(), rec.repairs, log.String())
	}
	rec.why = "HNS did not answer within the call deadline"
	retries(5)
	if failures() != 2 {
		t.Errorf("%d failure lines at -v=0 after the error changed, want 2:\n%s", failures(), log.String())
	}
	rec.down = false
	retries(1)
	clk.Step(time.Hour)
	rec.down = true
	retries(5)
	if failures() != 3 {
		t.Errorf("%d failure lines at -v=0 after a failure came back, want 3:\n%s", failures(), log.String())
	}
}

// syncAndRepairCtx is syncAndRepair with ctx.
func syncAndRepairCtx(ctx context.Context, p *Proxier) {
	p.Sync(ctx)
	p.repairs.Wait()
}

// TestFailedRepairBacksOffNoLongerThanItsPeriod: with a
// --drift-repair-period under the 30 s cap of the backoff, a repair that
// keeps failing is tried again at least once a period, as a repair that
// succeeds is: the backoff never waits longer than the period asked for.
func TestFailedRepairBacksOffNoLongerThanItsPeriod(t *testing.T) {
	const period = 5 * time.Second
	clk := clocktesting.NewFakeClock(time.Unix(10000, 0))
	rec := &repairCounter{down: true}
	p := idleProxier(t, Options{Clock: clk, RepairPeriod: period, Reconciler: rec})
	p.Sync(context.Background()) // initializes; a repair is not due yet
	// Ten failures: the backoff doubles from 100 ms past 5 s by the eighth.
	for attempt := 1; attempt <= 10; attempt++ {
		clk.Step(period)
		syncAndRepair(p)
		if rec.repairs != attempt {
			t.Fatalf("%d repair attempts after %d failing periods of %v, want %d", rec.repairs, attempt, period, attempt)
		}
	}
}

// slowLookupReconciler wants a listing at every Sync, and its lookup
// listing runs until release is closed.
type slowLookupReconciler struct {
	repairCounter
	release chan struct{}
}

func (r *slowLookupReconciler) Sync(context.Context) reconciler.SyncResult {
	return reconciler.SyncResult{ListingWanted: true}
}

func (r *slowLookupReconciler) Lookup(context.Context) error {
	<-r.release
	return nil
}

// TestSyncDuringAListingQueuesNoSyncForIt: objects wait for a listing
// that is under way. The listing's end asks for the sync that uses it;
// until then a sync can do nothing for them, so the next is queued for
// the sync period, not every --min-sync-period (empty syncs burning CPU
// and skewing the sync metrics while a listing of thousands of objects
// runs).
func TestSyncDuringAListingQueuesNoSyncForIt(t *testing.T) {
	const minSyncPeriod = time.Second
	clk := clocktesting.NewFakeClock(time.Unix(10000, 0))
	rec := &slowLookupReconciler{release: make(chan struct{})}
	p := idleProxier(t, Options{Clock: clk, MinSyncPeriod: minSyncPeriod, SyncPeriod: time.Hour, Reconciler: rec})
	p.Sync(context.Background()) // initializes and starts the lookup its objects want
	t.Cleanup(func() { close(rec.release); p.repairs.Wait() })
	p.mu.Lock()
	listing := p.repairing
	p.mu.Unlock()
	if !listing {
		t.Fatal("no listing under way after a sync that wants one")
	}

	// A marker due when a sync queued every --min-sync-period would be:
	// the queue hands out what is due in the order it was added, so a
	// sync queued for then comes out before it.
	const marker = "marker"
	p.queue.AddAfter(marker, minSyncPeriod)
	clk.Step(minSyncPeriod)
	var before []string
	for {
		key, _ := p.queue.Get()
		p.queue.Done(key)
		if key == marker {
			break
		}
		before = append(before, key)
	}
	if len(before) != 0 {
		t.Errorf("syncs queued %v after a sync while the listing runs: %q, want none before the listing ends or the sync period", minSyncPeriod, before)
	}
}

// TestStartsListingIsTheLastRepairOfTheFirstSync: the reconciler's Start
// lists all of HNS to adopt what is there; that listing is a drift
// repair's as good as one, so the first sync after it starts none (a
// second full listing straight after the first, at every restart of every
// node): the next is due a repair period after the start.
func TestStartsListingIsTheLastRepairOfTheFirstSync(t *testing.T) {
	n := newTestNode(t, sim.ProfileWS2022, "10.244.1.5")
	n.apply(service("web", "10.96.0.10"), slice("web", endpoint{"10.244.1.5", nodeName}))
	obs := &recordingObserver{}
	n.observer = obs
	n.start()
	n.eventually("the first sync", func() bool { return obs.anySync(func(SyncStats) bool { return true }) })
	n.proxier.WaitForRepair() // one the first sync started, if any
	if lists := n.hns.Counters().Count(sim.OpListLoadBalancers); lists != 1 {
		t.Errorf("HNS's load balancers listed %d times by the first sync's end, want once (the start's)", lists)
	}
}
