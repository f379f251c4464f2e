package reconciler

import (
	"context"
	"fmt"
	"maps"
)

// Repair lists HNS (load balancers and the network's endpoints) and marks
// for the next Sync every object that drifted behind our back:
//   - a realized load balancer or remote endpoint a Service wants that the
//     listing left out is read by ID at the next Sync, and forgotten (and
//     recreated) if it vanished (unlistedrealized.go), as are the load
//     balancers that used a vanished endpoint;
//   - a realized load balancer whose listing differs from its baseline (what
//     HNS answered when we wrote it, baseline.go), or that uses an endpoint
//     ID HNS no longer has (a pod recreated by the CNI), is updated;
//   - load balancers that left backends out are retried if the refreshed
//     local endpoint index now knows them;
//   - owned objects no desired object uses are deleted (leaks), listed or
//     not: a listing may leave out one HNS holds, and the delete's "not
//     found" drops an ID HNS no longer has from the state file (unlisted.go);
//   - deletes HNS reported done are confirmed, and an object HNS kept is
//     owned again and deleted again (deleted.go).
//
// If listing fails nothing changes: unavailable HNS is never "not found".
//
// The listing runs without the lock (listing.go), so a change programmed
// meanwhile is not held back; what Syncs touched during the listing, or what
// an abandoned HNS call held at any time during it (deadline.go), is not
// judged by this repair but by the next one. Each listed document is judged against
// what was realized as the listing began and then dropped, unless the
// judging under the lock needs it (listed.go).
func (r *Reconciler) Repair(ctx context.Context) error {
	// A listing of a network that is gone would take all its endpoints for
	// vanished; say what happened instead (network.go).
	if changed := r.checkNetwork(ctx); changed != nil {
		return changed
	}
	listingNo, err := r.beginListing("Repair")
	if err != nil {
		return err
	}
	defer r.repairing.Unlock()
	r.listing = newListingChanges(r.client.busyTokens())
	indexBefore := maps.Clone(r.localIndex)
	listedFrom := r.clock.Now()
	listed := r.newListedHNS()
	listed.localBefore = indexBefore
	r.mu.Unlock()

	err = r.listForRepair(ctx, listed)

	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flushStatusLocked()
	changed := r.listing
	r.listing = nil
	if err != nil {
		return err
	}
	listed.atStart = nil
	var drift driftTally
	usedEPs := map[string]struct{}{}
	usedLBs := map[string]struct{}{}
	// What the judging marks is the repair's work, taken by Syncs in
	// chunks after what they are handed (repairwork.go).
	r.withRepairMarks(func() {
		r.claimCarried(ctx, listed, listedFrom, changed)
		r.takeListedIndex(listed.local, indexBefore)
		unlisted := r.judgeListed(listed, changed, usedLBs, usedEPs, &drift)
		r.keepUnlisted(unlisted, &drift)
	})
	// What a lookup was answered with is its object's to take at its turn.
	handed := map[string]struct{}{}
	for _, id := range r.answerLookups(listed, listingNo) {
		usedLBs[id], usedEPs[id], handed[id] = struct{}{}, struct{}{}, struct{}{}
	}
	drift.log(r.log)
	r.claimPartials(listed, true)
	// Until the first Sync, owned objects may still be claimed by Upserts.
	if r.pruned {
		r.settleDeletes(listed, changed, handed)
		r.repairOwned(recordLoadBalancer, usedLBs, r.staleLBs, changed, listed.hasLB)
		r.repairOwned(recordRemoteEndpoint, usedEPs, r.staleEPs, changed, listed.hasEP)
		r.staleOnLocalAddress(listed, changed)
	}
	// Baselines changed by modifies and adoptions go to the state file
	// with the next Sync.
	r.baselinesDue = len(r.unsavedBaselines) > 0
	return nil
}

// judgeListed judges each realized remote endpoint and load balancer by
// the listing, marking what drifted, and collects the IDs in use and the
// wanted objects the listing left out (unlistedrealized.go).
func (r *Reconciler) judgeListed(listed *listedHNS, changed *listingChanges, usedLBs, usedEPs map[string]struct{}, drift *driftTally) (unlisted unlistedFound) {
	for ip, ep := range r.eps {
		if ep.id == "" {
			continue
		}
		if changed.touchedEP(ip) || r.unjudged(changed, epToken(ip), idToken(ep.id)) {
			usedEPs[ep.id] = struct{}{} // not judged: the listing may predate its change
			continue
		}
		if !listed.hasEP(ep.id) && ep.desired() {
			unlisted.addEP(ip, ep)
		}
		// Listed, being deleted, or wanted and left out: a listing that
		// left it out does not make it gone; its delete or a read tells
		// (unlisted.go, unlistedrealized.go).
		usedEPs[ep.id] = struct{}{}
	}
	for _, e := range r.lbs {
		if !changed.touchedLB(e.key) && !r.unjudged(changed, lbToken(e.key), idToken(e.realizedID)) {
			if r.repairLB(e, listed, &unlisted, drift) {
				unlisted.lbs = append(unlisted.lbs, e)
			}
		}
		if e.realizedID != "" {
			usedLBs[e.realizedID] = struct{}{}
		}
	}
	return unlisted
}

// listForRepair lists load balancers and the network's endpoints into
// listed; called without the lock.
func (r *Reconciler) listForRepair(ctx context.Context, listed *listedHNS) error {
	if err := r.client.WalkLoadBalancers(ctx, listed.addLB); err != nil {
		return fmt.Errorf("repair: list load balancers: %w", err)
	}
	if err := r.client.WalkEndpointsOfNetwork(ctx, r.opts.NetworkID, listed.addEP); err != nil {
		return fmt.Errorf("repair: list endpoints of network %q: %w", r.opts.NetworkID, err)
	}
	return nil
}

// repairLB judges e by the listing and reports whether the listing left
// out e's realized load balancer, which e still wants; leftOut are the
// wanted remote endpoints it left out.
func (r *Reconciler) repairLB(e *lbEntry, listed *listedHNS, leftOut *unlistedFound, drift *driftTally) (unlisted bool) {
	if e.realizedID != "" {
		if _, found := listed.lbs[e.realizedID]; !found {
			// Being deleted: its delete tells whether it is gone
			// (unlisted.go). Wanted: a read tells (unlistedrealized.go).
			unlisted = e.desired != nil
		} else if r.repairRealized(e, listed, leftOut, drift) {
			return false
		}
	}
	for _, ip := range e.missing {
		if r.localIndex[ip] != "" {
			r.markLB(e)
			break
		}
	}
	return unlisted
}

// repairRealized judges e's realized load balancer, which the listing
// has, and reports whether it marked e.
func (r *Reconciler) repairRealized(e *lbEntry, listed *listedHNS, leftOut *unlistedFound, drift *driftTally) bool {
	l := listed.lbs[e.realizedID]
	backends := e.realized.HostComputeEndpoints // l matched: the listing has exactly these
	var same, rebase bool
	if l.doc != nil {
		same, rebase = r.judge(e.realized, l.doc)
	}
	switch {
	case l.doc == nil:
		if !l.unchangedSinceStart(e, r.baselines) {
			return false // judged against another document: the next repair judges it
		}
	case !same:
		drift.found(r.log, driftLBChanged, e.key.String()).Info("Load balancer differs in HNS; repairing it", "key", e.key, "id", e.realizedID)
		r.driftFound(KindLoadBalancer)
		r.setRealized(e, e.realizedID, l.doc, nil)
		r.markLB(e)
		return true
	default:
		if rebase {
			// No baseline (a write answered with no document): the listing
			// adoptionMatch accepted becomes it. Or HNS answers otherwise
			// since the baseline was taken (echoChanged): the listing
			// becomes it, so the next repair matches it at once.
			r.ownLB(e.realizedID, e.realized, l.doc)
		}
		backends = l.doc.HostComputeEndpoints
	}
	for _, id := range backends {
		if !listed.hasEP(id) && !r.rechecking(id) && !leftOut.hasEP(id) {
			r.log.V(2).Info("Load balancer uses a vanished endpoint; repairing it", "key", e.key, "endpoint", id)
			r.driftFound(KindLoadBalancer)
			r.markLB(e)
			return true
		}
	}
	return false
}

// repairOwned marks owned objects that nothing uses (and that are not
// being deleted already) as stale, listed or not: the delete of one HNS no
// longer has answers "not found", which forgets it (unlisted.go). IDs
// that became ours during the listing, or that an abandoned call held
// during it, are left for the next repair.
func (r *Reconciler) repairOwned(kind recordKind, used map[string]struct{}, stale map[string]*staleObj, changed *listingChanges, exists func(string) bool) {
	for id := range r.ownedSet(kind) {
		if changed.touchedID(id) || r.unjudged(changed, idToken(id)) {
			continue
		}
		if s := stale[id]; s != nil && s.network != "" {
			continue // on another network: its delete's answer says whether it is gone
		}
		_, inUse := used[id]
		switch {
		case inUse || stale[id] != nil:
			// Used, or being deleted: a listing that left it out does not
			// make it gone (unlisted.go); its delete tells.
		case !exists(id):
			stale[id] = unlistedStale()
		default:
			r.log.Info("Owned HNS object is used by nothing; deleting it", "id", id)
			stale[id] = &staleObj{reason: "ours, leaked"}
		}
	}
}
