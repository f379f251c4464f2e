package proxier

import (
	"context"
	"time"

	"k8s.io/klog/v2"
)

// The drift repair runs beside the sync loop, one at a time: the
// reconciler lists HNS without its lock (three HNS calls per object, minutes
// on a large node), so changes go on being programmed while it lists. A
// sync starts it when it is due; when it ends, it records the outcome and
// asks for a sync, which programs the drift it marked.
//
// Besides its period, a repair is due as soon as the reconciler reports
// that HNS restarted (SyncResult.HNSReturned): a restart may have dropped
// load balancers and endpoints (docs/simulator.md, "What a restart
// drops"), and only a listing finds them; so it is when its probe found
// one of hnsproxy's objects deleted behind its back (SyncResult.ObjectsGone). And one starts as soon as a sync
// leaves objects waiting for what only a listing tells
// (SyncResult.ListingWanted: what holds a frontend HNS refused a create on,
// what a lost create made; reconciler/lookup.go), a lookup listing starts
// (Reconciler.Lookup: only what they need is listed, no drift judged), even
// with the periodic repair off: those objects wait for it, and the changes
// after them do not. Repairs and lookup listings run one at a time, and
// share the backoff of failed ones.

// repairDue reports whether a sync should start a drift repair; callers hold p.mu.
func (p *Proxier) repairDue() bool {
	return p.initialized && p.opts.RepairPeriod > 0 && !p.repairing && !p.clock.Now().Before(p.nextRepair())
}

// startRepair runs a drift repair in its own goroutine; callers hold p.mu.
func (p *Proxier) startRepair(ctx context.Context) {
	atOnce := p.repairAtOnce
	p.repairAtOnce = false
	p.startListing(ctx, "Drift repair", p.opts.Reconciler.Repair, func(failed bool) {
		if failed {
			// One due at once stays due, after the backoff.
			p.repairAtOnce = p.repairAtOnce || atOnce
		} else {
			p.lastRepair = p.clock.Now()
		}
	})
}

// startLookup runs a lookup listing in its own goroutine; callers hold p.mu.
func (p *Proxier) startLookup(ctx context.Context) {
	p.startListing(ctx, "Listing HNS for objects that wait for it", p.opts.Reconciler.Lookup, func(bool) {})
}

// startListing runs list (a repair or a lookup listing) in its own
// goroutine, then, holding p.mu, records its outcome (done, then the
// shared backoff) and asks for a sync; callers hold p.mu.
func (p *Proxier) startListing(ctx context.Context, what string, list func(context.Context) error, done func(failed bool)) {
	p.repairing = true
	p.repairs.Add(1)
	logger := klog.FromContext(ctx)
	logger.V(2).Info(listingStarted, "listing", what)
	began := p.clock.Now()
	go func() {
		defer p.repairs.Done()
		err := list(ctx)
		logger.V(2).Info(listingEnded, "listing", what, "failed", err != nil, "seconds", p.clock.Since(began).Seconds())
		p.mu.Lock()
		p.repairing = false
		if p.noteNetworkChanged(ctx, err); p.stopErr != nil {
			p.mu.Unlock()
			return // Run ends: nothing to retry
		}
		done(err != nil)
		if err != nil {
			p.repairRetryAt = p.clock.Now().Add(p.repairBackoff.When(syncKey))
			p.logListingFailed(ctx, what, err)
		} else {
			p.repairRetryAt = time.Time{}
			p.repairBackoff.Forget(syncKey)
			p.listingFailure.ended()
		}
		p.mu.Unlock()
		p.requestSync()
	}()
}

// A listing's start and end are logged at --v=2, as a sync is: how often
// and how long a node lists HNS, and which syncs ran beside a listing (the
// real-process bench reads them to price no change with a listing's CPU).
const (
	listingStarted = "HNS listing started"
	listingEnded   = "HNS listing ended"
)

// logListingFailed logs a failed repair or lookup listing: an error when
// listings start failing or fail otherwise, the same failure again (every
// 30 s at most, for as long as HNS refuses listings) only at --v=4.
// Callers hold p.mu.
func (p *Proxier) logListingFailed(ctx context.Context, what string, err error) {
	p.listingFailure.failed(klog.FromContext(ctx), what+" failed; will retry", what+" failed again; will retry", err, "at", p.repairRetryAt)
}

// lookupDue reports whether the last sync's waiting objects start a
// lookup listing now; callers hold p.mu.
func (p *Proxier) lookupDue() bool {
	return p.listingWanted && p.initialized && !p.repairing && !p.clock.Now().Before(p.repairRetryAt)
}

// WaitForRepair blocks until the drift repair under way, if any, has ended
// (the scale harness measures one as a phase).
func (p *Proxier) WaitForRepair() { p.repairs.Wait() }

// nextRepair is when the next drift repair is due: a repair period after
// the last good one, or now after HNS returned from a restart; later while
// a failed one backs off.
func (p *Proxier) nextRepair() time.Time {
	if p.repairAtOnce {
		return p.repairRetryAt
	}
	next := p.lastRepair.Add(p.opts.RepairPeriod)
	if p.repairRetryAt.After(next) {
		next = p.repairRetryAt
	}
	return next
}

// noteHNSReturned makes a drift repair due now: HNS answered again after a
// restart (SyncResult.HNSReturned). A backoff left by repairs that failed
// while HNS was down no longer applies. Callers hold p.mu.
func (p *Proxier) noteHNSReturned(ctx context.Context) {
	p.repairNow(ctx, "HNS is back after a restart, which may have dropped objects", "listing it now to repair them")
}

// noteHNSBack forgets the backoff of listings that failed while HNS was
// down (SyncResult.HNSBack): a lookup they left waiting (a create HNS
// refused as down may have been applied) starts as soon as a sync wants
// it. That backoff grew through the outage, up to 30 s: what an outage
// that HNS outlived without a restart (no drift repair then) left waiting
// for a lookup waited up to that long once HNS answered, where the rest
// was retried within the reconciler's probe interval
// (TestRefusedCreateIsLookedUpOnceHNSAnswers). Callers hold p.mu.
func (p *Proxier) noteHNSBack() {
	p.repairRetryAt = time.Time{}
	p.repairBackoff.Forget(syncKey)
}

// noteObjectsGone makes a drift repair due now: the reconciler's probe
// found an object of hnsproxy's deleted behind its back
// (SyncResult.ObjectsGone), and a runbook that deletes one deletes them
// all. Callers hold p.mu.
func (p *Proxier) noteObjectsGone(ctx context.Context) {
	p.repairNow(ctx, "HNS objects of hnsproxy's were deleted behind its back", "listing HNS now to repair them")
}

// repairNow makes a drift repair due now, logging what the sync found and
// the listing it starts; with drift repair off, nothing lists after Start,
// and the log says so, since what was found stays unrepaired until the
// Services it touches change. Callers hold p.mu.
func (p *Proxier) repairNow(ctx context.Context, found, listing string) {
	if p.opts.RepairPeriod <= 0 {
		klog.FromContext(ctx).Info(found + "; drift repair is off (--drift-repair-period=0), so nothing lists HNS to repair them")
		return
	}
	p.repairAtOnce = true
	p.repairRetryAt = time.Time{}
	p.repairBackoff.Forget(syncKey)
	klog.FromContext(ctx).Info(found + "; " + listing)
}
