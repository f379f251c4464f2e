package reconciler

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

// syncRemovedLB deletes a load balancer no longer desired.
func (r *Reconciler) syncRemovedLB(run *syncRun, e *lbEntry) {
	ref := objectRef{lb: e.key}
	delete(r.retryLBs, e.key)
	delete(r.foreignHeld, e.key)
	if r.awaitingAbandoned(run, ref, &e.st, lbToken(e.key), idToken(e.realizedID)) {
		return
	}
	if err := r.removeRealizedLB(run, e); err != nil {
		r.failOrWait(run, ref, &e.st, KindLoadBalancer, e.key.String(), err)
		return
	}
	r.limiter.Forget(ref)
	r.setMissing(e, nil)
	r.published.lbGone(e)
	r.forgetLB(e.key)
	delete(r.lookups.unseen, e.key)
	delete(r.lbs, e.key)
}

// removeRealizedLB deletes e's load balancer from HNS, including one a
// lost create may have made.
func (r *Reconciler) removeRealizedLB(run *syncRun, e *lbEntry) error {
	if e.realizedID == "" {
		r.unseenAgain(e)
	}
	if e.realizedID == "" && e.uncertain != nil {
		if err := r.resolveUncertainLB(e); err != nil {
			return err
		}
	}
	if e.realizedID != "" {
		if err := r.deleteLB(run, e.realizedID); err != nil {
			r.writeUnknown(e, err)
			return err
		}
		r.clearRealized(e)
		run.res.Deleted++
	}
	return nil
}

// resolveUncertainLB looks for the load balancer a lost create may have
// made, in a listing begun after it (lookup.go; until one answered, it
// returns an AwaitingListingError): one nobody owns on e's frontend is ours
// (of this document, or of it less backends HNS dropped since, or of an
// older one whose create was lost too, where hnsproxy may take foreign
// ones: foreign.go) and becomes e's realized load balancer.
func (r *Reconciler) resolveUncertainLB(e *lbEntry) error {
	asked := r.lookups.lbs[e.key]
	found, answered := r.lostLBAnswer(e.key)
	if !answered {
		return awaiting(whyLostLB)
	}
	if found == nil && r.lookAgainForLost(e, asked) {
		return awaiting(whyLostLB)
	}
	r.forgetLB(e.key)
	if found == nil {
		r.keepUnseen(e)
		return nil
	}
	_, owned := r.ownedLBs[found.ID]
	echo, found := found, r.distributionUnechoed(found, e.uncertain)
	same := r.unchanged(e.uncertain, found)
	switch {
	case same && found != echo:
		// Ours only where HNS answers no distribution: where it does,
		// this is a load balancer without the affinity sent (another
		// agent's, made after the create failed). Taken as listed, it is
		// written once more with the sent distribution, right either way.
		r.setRealized(e, found.ID, echo, echo)
	case same:
		r.setRealized(e, found.ID, e.uncertain, echo)
	case !owned && (madeLessDropped(found, e.uncertain) || r.mayTakeForeign(e.desired)):
		// Its create's, less backends whose endpoints were deleted since
		// (left unclaimed on a tenant's frontend, nothing would ever delete
		// it), or an older document whose create was lost too; but on a
		// frontend a tenant chose, any other may be foreign: never claimed.
		r.setRealized(e, found.ID, found, nil)
	}
	e.uncertain = nil
	return nil
}

// distributionUnechoed is found, listed on the frontend of a create of
// sent whose reply was lost, read with sent's distribution where HNS
// answered none (docs/simulator.md, echo drop-distribution): no public
// capture shows HNS answering a sticky load balancer, and read as listed,
// the lost create's own sticky load balancer was left on a tenant's
// frontend as another agent's for good (found by the fault soak, seed
// 48213). One of hnsproxy's that HNS reported deleted and kept
// (microsoft/Windows-Containers#631: the old, non-sticky one, where
// affinity was turned on) is read as listed, never taken for the new one,
// as is one it owns, which its baseline judges. One so read is written
// again (resolveUncertainLB): under an exact echo it is not the create's.
func (r *Reconciler) distributionUnechoed(found, sent *hnslb.LoadBalancer) *hnslb.LoadBalancer {
	if len(found.PortMappings) != 1 || len(sent.PortMappings) != 1 || r.oursLB(found.ID) ||
		found.PortMappings[0].DistributionType != hnslb.DistributionNone ||
		sent.PortMappings[0].DistributionType == hnslb.DistributionNone {
		return found
	}
	read := *found
	read.PortMappings = []hnslb.PortMapping{found.PortMappings[0]}
	read.PortMappings[0].DistributionType = sent.PortMappings[0].DistributionType
	return &read
}

// syncLB creates or updates a desired load balancer.
func (r *Reconciler) syncLB(run *syncRun, e *lbEntry) {
	ref := objectRef{lb: e.key}
	delete(r.retryLBs, e.key)
	ahead, madeAhead := run.lbCreates[e.key]
	if !madeAhead && r.awaitingAbandoned(run, ref, &e.st, lbToken(e.key), idToken(e.realizedID)) {
		return
	}
	if ahead.deleteErr != nil {
		// Deleting the load balancer it replaces failed ahead: the
		// create was not made, and the old one stays realized.
		delete(run.lbCreates, e.key)
		r.writeUnknown(e, ahead.deleteErr)
		r.fail(run, ref, &e.st, KindLoadBalancer, e.key.String(), ahead.deleteErr)
		return
	}
	heldBy := r.foreignHeld[e.key]
	delete(r.foreignHeld, e.key) // set again if a foreign one still holds it
	if e.realizedID == "" && e.uncertain != nil {
		// A create whose reply was lost or abandoned may have made it:
		// claim it as ours before a create meets it as a blocker.
		if err := r.resolveUncertainLB(e); err != nil {
			r.wait(run, ref, &e.st, err)
			return
		}
	}
	ids, missing := r.resolveForTurn(run, e)
	r.setMissing(e, missing)
	if len(ids) == 0 {
		// Nothing to balance to (HNS refuses a load balancer without
		// backends): keep none rather than one pointing at stale endpoints.
		if err := r.removeRealizedLB(run, e); err != nil {
			r.failOrWait(run, ref, &e.st, KindLoadBalancer, e.key.String(), err)
			return
		}
		if ahead.replaced {
			run.res.Deleted++
		}
		r.settle(run, ref, &e.st, missing)
		return
	}
	doc := r.docForTurn(run, e, ids)
	if realizedAs(e, doc) {
		r.settle(run, ref, &e.st, missing)
		return
	}
	replacing := e.realizedID != "" || ahead.replaced
	inPlace := r.modifiesTo(e, doc)
	if run.noCreates && !inPlace {
		r.wait(run, ref, &e.st, errStateUnwritable)
		return
	}
	if _, skip := run.unchecked[e.key]; skip {
		r.wait(run, ref, &e.st, awaiting(whyHeld))
		return
	}
	if inPlace {
		outcome, err := r.modifyLB(run, e, doc)
		switch {
		case err != nil: // the create a failed modify leads to waits for the state file too
			r.writeUnknown(e, err)
			r.failOrWait(run, ref, &e.st, KindLoadBalancer, e.key.String(), err)
			return
		case outcome == modified:
			run.res.Updated++
			r.settleWritten(run, ref, &e.st, missing)
			return
		case outcome == vanished:
			replacing = false
		}
	} else if e.realizedID != "" { // not replaced ahead
		if err := r.deleteLB(run, e.realizedID); err != nil {
			r.writeUnknown(e, err)
			r.fail(run, ref, &e.st, KindLoadBalancer, e.key.String(), err)
			return
		}
		r.clearRealized(e)
	}
	wrote, err := r.createLB(run, e, doc, heldBy)
	if err != nil && r.capRefusal(err, doc) {
		wrote, err = r.createAtLegacyCap(run, e, doc, err)
	}
	switch {
	case err != nil:
		if hnslb.IsMissingReference(err) {
			// The new load balancer cannot be what is missing: a backend is.
			r.forgetMissingBackends(run, e)
		}
		if replacing {
			run.res.Deleted++ // the old one is gone; the create is retried
		}
		r.failOrWait(run, ref, &e.st, KindLoadBalancer, e.key.String(), err)
		return
	case wrote && replacing:
		run.res.Updated++
	case wrote:
		run.res.Created++
	}
	if wrote {
		r.settleWritten(run, ref, &e.st, missing)
		return
	}
	r.settle(run, ref, &e.st, missing)
}

// lbExists reports whether HNS still holds the load balancer; when it cannot
// tell, it says yes, so that nothing is created beside one that may exist.
func (r *Reconciler) lbExists(run *syncRun, id string) bool {
	_, err := r.client.GetLoadBalancerByID(run.ctx, id)
	return err == nil || !hnslb.IsNotFound(err)
}

// deleteLB deletes the load balancer id and records the outcome: gone
// (disowned), or reported done (confirmed later, deleted.go).
func (r *Reconciler) deleteLB(run *syncRun, id string) error {
	err := r.client.DeleteLoadBalancer(run.ctx, id)
	if err != nil && !hnslb.IsNotFound(err) {
		return err
	}
	r.afterDelete(recordLoadBalancer, id, err)
	return nil
}

// createLB creates doc for e. If HNS refuses the frontend as taken ("port
// already exists", or "already exists" for an identical document, as HNS
// answers after keeping load balancers across a restart), e waits for a
// listing to show what holds it (lookup.go); with the answer, one of ours,
// or a foreign one hnsproxy may take (foreign.go), is adopted if identical,
// else deleted and the create retried once; any other foreign one stays,
// and the create fails with a *ForeignFrontendError. Where the listing
// shows none, a create refused again fails with a
// *FrontendHeldByNothingError. wrote is false when nothing was created
// (adopted).
//
// heldBy is the foreign load balancer that held the frontend at the last
// attempt: while it is there nothing is tried (one Get); once it is gone
// the key is declared (declareNow), as declareCreates left it out.
func (r *Reconciler) createLB(run *syncRun, e *lbEntry, doc *hnslb.LoadBalancer, heldBy string) (wrote bool, err error) {
	if heldBy != "" {
		if r.lbExists(run, heldBy) {
			r.foreignHeld[e.key] = heldBy
			return false, &ForeignFrontendError{Key: e.key, ID: heldBy, Origin: e.desired.Origin}
		}
		if err := r.declareNow(e.key); err != nil {
			return false, fmt.Errorf("%w: %w", errStateUnwritable, err)
		}
	}
	listedNone := false
	if l := r.lookups.lbs[e.key]; l != nil && l.refused {
		switch {
		case !l.answered:
			return false, awaiting(whyRefused)
		case l.holder != nil:
			r.forgetLB(e.key)
			return r.takeFrontend(run, e, doc, l.holder)
		}
		listedNone = true
	}
	got, err := r.createOnce(run, e, doc)
	if refusedAsTaken(err) {
		// Nothing was made, so the Sync's end withdraws the declaration
		// (settleCreates): a restart before the listing answers claims no
		// foreign holder.
		if listedNone && (r.recheckAfterDelete(e.key) || r.askRefusedAgain(e.key)) {
			return false, awaiting(whyRefused)
		}
		if listedNone {
			// Kept answered: the next try needs no listing of its own;
			// every repair's listing answers it again.
			return false, &FrontendHeldByNothingError{Key: e.key, Portless: r.lookups.lbs[e.key].portless, Err: err}
		}
		r.askRefused(e.key)
		return false, awaiting(whyRefused)
	}
	return r.created(e, doc, got, err)
}

// refusedAsTaken reports a create HNS refused because its frontend is
// taken.
func refusedAsTaken(err error) bool {
	return hnslb.IsPortAlreadyExists(err) || hnslb.IsAlreadyExists(err)
}

// takeFrontend deals with blocker, the load balancer a listing showed on
// e's frontend after HNS refused e's create: adopted if identical, else
// deleted and the create retried once, where it is ours or hnsproxy may
// take a foreign one; reported as a *ForeignFrontendError otherwise.
func (r *Reconciler) takeFrontend(run *syncRun, e *lbEntry, doc, blocker *hnslb.LoadBalancer) (wrote bool, err error) {
	ours := r.oursLB(blocker.ID) || r.claimCarriedLB(run.ctx, e.key, blocker) || r.unseenMade(e.key, blocker)
	if !ours && !r.mayTakeForeign(e.desired) {
		r.foreignHeld[e.key] = blocker.ID
		r.undeclare(e.key)
		return false, &ForeignFrontendError{Key: e.key, ID: blocker.ID, Origin: e.desired.Origin}
	}
	if r.unchanged(doc, blocker) {
		r.log.Info("Adopted existing identical load balancer", "key", e.key, "id", blocker.ID)
		r.setRealized(e, blocker.ID, doc, blocker)
		return false, nil
	}
	r.log.Info("Deleting load balancer that blocks a desired frontend", "key", e.key, "id", blocker.ID, "ours", ours)
	if err := r.deleteLB(run, blocker.ID); err != nil {
		return false, fmt.Errorf("deleting load balancer %s, which blocks the frontend: %w", blocker.ID, err)
	}
	run.res.Deleted++
	got, err := r.client.CreateLoadBalancer(run.ctx, doc)
	return r.created(e, doc, got, err)
}

// created records the outcome of a create of doc for e: realized, or
// uncertain if HNS may have made it.
func (r *Reconciler) created(e *lbEntry, doc, got *hnslb.LoadBalancer, err error) (wrote bool, _ error) {
	if err != nil {
		if !definitive(err) && e.uncertain == nil { // createOnce may have set it
			e.uncertain = doc
		}
		return false, err
	}
	r.setRealized(e, got.ID, doc, got)
	return true, nil
}

// definitive reports a create error after which HNS surely made nothing:
// a refusal, or a call not made. Other errors (HNS unavailable, a timeout,
// anything unknown) may come after HNS applied the write.
func definitive(err error) bool {
	return errors.Is(err, errCallNotMade) || hnslb.IsPortAlreadyExists(err) || hnslb.IsAddressRefused(err) || hnslb.IsInvalidParameter(err) ||
		hnslb.IsNotImplemented(err) || hnslb.IsMissingReference(err)
}

// setMissing records the backend IPs e left out, in e and in r.waiting.
func (r *Reconciler) setMissing(e *lbEntry, missing []string) {
	for _, ip := range e.missing {
		if w := r.waiting[ip]; w != nil {
			delete(w, e.key)
			if len(w) == 0 {
				delete(r.waiting, ip)
			}
		}
	}
	e.missing = missing
	for _, ip := range missing {
		w := r.waiting[ip]
		if w == nil {
			w = map[intent.LBKey]struct{}{}
			r.waiting[ip] = w
		}
		w[e.key] = struct{}{}
	}
}

// madeLessDropped reports whether listed is what a create of sent made,
// less backends HNS dropped since: deleting an endpoint takes it out of the
// load balancers that use it (docs/simulator.md; a pod's endpoint goes with
// the pod, before the proxy has seen it go).
func madeLessDropped(listed, sent *hnslb.LoadBalancer) bool {
	kept := foldedSet(listed.HostComputeEndpoints)
	narrowed := *sent
	narrowed.HostComputeEndpoints = nil
	for _, id := range sent.HostComputeEndpoints {
		if has(kept, strings.ToLower(id)) {
			narrowed.HostComputeEndpoints = append(narrowed.HostComputeEndpoints, id)
		}
	}
	return adoptionMatch(listed, &narrowed)
}
