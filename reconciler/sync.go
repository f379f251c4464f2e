package reconciler

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

// syncRun is one Sync's scratch state.
type syncRun struct {
	ctx context.Context
	now time.Time
	res SyncResult
	// outageEnded: HNS answered in this Sync after refusing a probe too
	// (outage.go); checkInstance says whether it restarted.
	outageEnded bool
	lbs         map[intent.LBKey]struct{} // load balancers to process in this Sync
	// askedEPs are the remote endpoints a Get asked HNS for in this Sync
	// after a write met a missing backend (forgetMissingBackends).
	askedEPs map[string]struct{}
	// sortedLBs are lbs in order, as lbKeys last sorted them.
	sortedLBs []intent.LBKey
	// noCreates: the state file cannot record new objects now (see
	// declareCreates); creates wait, everything else goes on.
	noCreates bool
	// unchecked are new frontends no listing has checked for a foreign
	// holder yet (findHeldFrontends): not created in this Sync.
	unchecked map[intent.LBKey]struct{}
	// epCreates and lbCreates are the creates made ahead
	// (createEndpointsAhead, createLoadBalancersAhead), each taken by its
	// object's turn.
	epCreates map[string]createdEP
	lbCreates map[intent.LBKey]createdLB
	// epDeletes are the deletes of unwanted endpoints made ahead
	// (deleteEndpointsAhead), by IP, each taken by its endpoint's turn.
	epDeletes map[string]deletedEP
	// ips are the endpoints this Sync processes, sorted; unwanted are those
	// of them not desired when it began, which nothing changes during a
	// Sync (r.mu is held): what freedDeletes, asked once for each chunk of
	// load balancers, looks through (a cold start's 20 chunks each looked
	// up all of its 10,000 endpoints, none unwanted).
	ips, unwanted []string
}

// deletedEP is the outcome of one endpoint delete made ahead: the ID it
// deleted and HNS's answer.
type deletedEP struct {
	id  string
	err error
}

// createdEP is the outcome of one endpoint create: the ID HNS gave it.
type createdEP struct {
	id  string
	err error
}

// reply is the create's reply as far as its turn reads it (the ID).
func (c createdEP) reply() *hnslb.Endpoint {
	if c.err != nil {
		return nil
	}
	return &hnslb.Endpoint{ID: c.id}
}

// createdLB is the outcome of one load balancer create, its document, and
// the backends resolved for it (ids, missing) as of resolveGen gen.
type createdLB struct {
	doc, lb      *hnslb.LoadBalancer
	err          error
	ids, missing []string
	gen          uint64
	// replaced: the load balancer it replaces was deleted ahead with it;
	// deleteErr: that delete failed, and the create was not made.
	replaced  bool
	deleteErr error
	// modified: where HNS can modify, the write made ahead was the modify
	// of the realized load balancer in place, lb and err its reply (the
	// turn takes them in modifyLB, updateOnce).
	modified bool
}

// errStateUnwritable is the status of an object whose create waits for the
// state file to work again.
var errStateUnwritable = errors.New("not created while the state file cannot be written: an object hnsproxy cannot record as its own could leak")

// Sync processes dirty objects and those whose retry is due, in an order
// that keeps references valid: stale and removed load balancers are deleted
// first, then remote endpoints are created, then load balancers are created
// or updated, and last remote endpoints that no realized load balancer uses
// are deleted. A failing object gets an error status and a retry with
// exponential backoff; it never stops the others, and Sync never stops half
// way. Sync writes the state file when the set of owned IDs changed. Before
// Start it does nothing.
func (r *Reconciler) Sync(ctx context.Context) SyncResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flushStatusLocked()
	if !r.started {
		return SyncResult{Pending: r.pending()}
	}
	if !r.pruned {
		r.pruneOrphans()
	}
	run := &syncRun{ctx: ctx, now: r.clock.Now()}
	r.probeOutage(run)
	r.retryAfterHang(run)
	r.checkInstance(run)
	run.lbs = takeDue(run.now, &r.dirtyLBs, r.retryLBs, func(k intent.LBKey) time.Time { return r.lbs[k].st.nextRetry })
	epWork := takeDue(run.now, &r.dirtyEPs, r.retryEPs, func(ip string) time.Time { return r.eps[ip].st.nextRetry })
	ips := slices.AppendSeq(make([]string, 0, len(epWork)), maps.Keys(epWork))
	intent.SortIPs(ips)
	r.setIPs(run, ips)
	run.unchecked = r.findHeldFrontends(run)
	run.noCreates = !r.declareCreates(run.lbs, ips, run.unchecked)

	r.refreshLocalIfNeeded(run)
	r.syncStale(run, r.staleLBs, r.client.DeleteLoadBalancer, recordLoadBalancer)
	for _, k := range run.lbKeys() {
		if e := r.lbs[k]; e != nil && e.desired == nil {
			r.syncRemovedLB(run, e)
		}
	}
	r.createEndpointsAhead(run, ips)
	for _, ip := range ips {
		if ep := r.eps[ip]; ep != nil && ep.desired() {
			r.syncWantedEP(run, ip)
		}
	}
	// The endpoints' creates may have added some. Load balancers are made
	// ahead a chunk at a time, each chunk then taken by its turns: a cold
	// start's 10,000 documents and HNS's answers, all held until their
	// turn, were the process's peak of memory.
	for chunk := range slices.Chunk(run.lbKeys(), createAheadChunk) {
		r.createLoadBalancersAhead(run, chunk)
		for _, k := range chunk {
			if e := r.lbs[k]; e != nil && e.desired != nil {
				r.syncLB(run, e)
			}
		}
	}
	r.dropUnusedCreates(run)
	r.deleteEndpointsAhead(run, run.unwanted)
	for _, ip := range run.unwanted {
		if ep := r.eps[ip]; ep != nil && !ep.desired() {
			r.syncUnwantedEP(run, ip)
		}
	}
	// Stale endpoints wait until no stale load balancer (which may use them) is left.
	if len(r.staleLBs) == 0 {
		r.syncStale(run, r.staleEPs, r.client.DeleteEndpoint, recordRemoteEndpoint)
	}

	r.listing.noteSync(run.lbs, ips)
	r.noteSynced(run.lbs, ips)
	r.settleCreates(run.lbs)
	r.takeover = false // a takeover lasts until the first Sync ends
	run.res.ForeignHeld = r.foreignHeldList()
	run.res.LeftOut = r.leftOutLocals()
	r.takeFailedCreates()
	if err := r.writeState(); err != nil {
		r.log.Error(err, "Writing hnsproxy state file failed; retrying after the next Sync", "path", r.opts.StateFile)
	}
	r.checkSuspectedNetwork(run)
	run.res.Pending = r.pending()
	run.res.LearnedBackendCap = r.learnedCap
	run.res.ListingWanted = r.wantsListing()
	return run.res
}

// setIPs makes ips, sorted, the endpoints run processes.
func (r *Reconciler) setIPs(run *syncRun, ips []string) {
	run.ips, run.unwanted = ips, nil
	for _, ip := range ips {
		if ep := r.eps[ip]; ep != nil && !ep.desired() {
			run.unwanted = append(run.unwanted, ip)
		}
	}
}

func (r *Reconciler) pending() int {
	return len(r.dirtyLBs) + len(r.dirtyEPs) + len(r.retryLBs) + len(r.retryEPs) + len(r.staleLBs) + len(r.staleEPs)
}

// takeDue empties dirty and returns its keys plus the keys of retry whose
// retry time has come.
func takeDue[K comparable](now time.Time, dirty *map[K]struct{}, retry map[K]struct{}, nextRetry func(K) time.Time) map[K]struct{} {
	// The dirty set itself becomes the work and a fresh one takes its
	// place: clearing it would keep a cold start's capacity for 10,000
	// keys, which every later Sync would walk.
	work := *dirty
	*dirty = map[K]struct{}{}
	for k := range retry {
		if !nextRetry(k).After(now) {
			work[k] = struct{}{}
		}
	}
	return work
}

// lbKeys are the load balancers to process in this Sync, in order. A Sync
// only adds to lbs (an endpoint's create frees frontends that waited for
// it), so they are sorted again only when that added some: a cold start's
// 10,000 keys were sorted once for each step that walks them.
func (run *syncRun) lbKeys() []intent.LBKey {
	if len(run.sortedLBs) != len(run.lbs) {
		run.sortedLBs = sortedKeys(run.lbs)
	}
	return run.sortedLBs
}

func sortedKeys(m map[intent.LBKey]struct{}) []intent.LBKey {
	keys := slices.AppendSeq(make([]intent.LBKey, 0, len(m)), maps.Keys(m))
	intent.SortLBKeys(keys)
	return keys
}

// syncStale deletes due stale objects (ours left over, foreign blockers).
func (r *Reconciler) syncStale(run *syncRun, stale map[string]*staleObj, del func(context.Context, string) error, owned recordKind) {
	for _, id := range slices.Sorted(maps.Keys(stale)) {
		s := stale[id]
		if s.st.nextRetry.After(run.now) {
			continue
		}
		ref := objectRef{id: id}
		if r.awaitingAbandoned(run, ref, &s.st, idToken(id)) {
			continue
		}
		if n := len(r.refs[id]); n > 0 { // an endpoint a realized load balancer still uses
			r.wait(run, ref, &s.st, fmt.Errorf("not deleted yet: %d realized load balancers still use it", n))
			continue
		}
		err := del(run.ctx, id)
		if err != nil && !hnslb.IsNotFound(err) {
			r.fail(run, ref, &s.st, KindStale, id, err)
			continue
		}
		r.log.Info("Deleted HNS object", "id", id, "reason", s.reason)
		r.limiter.Forget(ref)
		r.afterDelete(owned, id, err)
		delete(stale, id)
		run.res.Deleted++
	}
}

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
	delete(r.lbs, e.key)
}

// removeRealizedLB deletes e's load balancer from HNS, including one a
// lost create may have made.
func (r *Reconciler) removeRealizedLB(run *syncRun, e *lbEntry) error {
	if e.realizedID == "" && e.uncertain != nil {
		if err := r.resolveUncertainLB(e); err != nil {
			return err
		}
	}
	if e.realizedID != "" {
		if err := r.deleteLB(run, e.realizedID); err != nil {
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
// (of this document, or of an older one whose create was lost too, where
// hnsproxy may take foreign ones: foreign.go) and becomes e's realized
// load balancer.
func (r *Reconciler) resolveUncertainLB(e *lbEntry) error {
	found, answered := r.lostLBAnswer(e.key)
	if !answered {
		return awaiting(whyLostLB)
	}
	r.forgetLB(e.key)
	switch {
	case found == nil:
	case r.unchanged(e.uncertain, found):
		r.setRealized(e, found.ID, e.uncertain, found)
	default:
		// An older document whose create was lost too; but on a frontend
		// a tenant chose, a different one may be foreign: never claimed.
		if _, owned := r.ownedLBs[found.ID]; !owned && r.mayTakeForeign(e.desired) {
			r.setRealized(e, found.ID, found, nil)
		}
	}
	e.uncertain = nil
	return nil
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
	if e.realizedID != "" && sameLB(e.realized, doc) {
		r.settle(run, ref, &e.st, missing)
		return
	}
	replacing := e.realizedID != "" || ahead.replaced
	if run.noCreates && (!replacing || !r.modifyOn()) {
		r.wait(run, ref, &e.st, errStateUnwritable)
		return
	}
	if _, skip := run.unchecked[e.key]; skip {
		r.wait(run, ref, &e.st, awaiting(whyHeld))
		return
	}
	if replacing && r.modifyOn() {
		outcome, err := r.modifyLB(run, e, doc)
		switch {
		case err != nil:
			r.fail(run, ref, &e.st, KindLoadBalancer, e.key.String(), err)
			return
		case outcome == modified:
			run.res.Updated++
			r.settle(run, ref, &e.st, missing)
			return
		case outcome == vanished:
			replacing = false
		}
	} else if e.realizedID != "" { // not replaced ahead
		if err := r.deleteLB(run, e.realizedID); err != nil {
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
	r.settle(run, ref, &e.st, missing)
}

// lbExists reports whether HNS still holds the load balancer; when it cannot
// tell, it says yes, so that nothing is created beside one that may exist.
func (r *Reconciler) lbExists(run *syncRun, id string) bool {
	_, err := r.client.GetLoadBalancerByID(run.ctx, id)
	return err == nil || !hnslb.IsNotFound(err)
}

// resolve maps a desired load balancer's backends to HNS endpoint IDs;
// missing are the IPs with no usable endpoint yet. A remote endpoint about
// to be replaced counts as missing. Each missing backend's place goes to
// the next spare that resolves (intent.LB.Spares): over the backend cap,
// only backends HNS can realize compete.
func (r *Reconciler) resolve(d *intent.LB) (ids, missing []string) {
	ids, missing, _, _ = r.resolveAfter(d, nil)
	return ids, missing
}

// resolveAfter is resolve for a load balancer written in the batch that
// first creates the endpoints of created (IP → the create's place in the
// batch): each such backend gets a place in ids that the create's ID
// fills. ok is false when the turns between the batch and the load
// balancer's own could resolve it otherwise: an endpoint it uses is
// replaced in its turn, or a spare would stand in for a backend missing
// now and resolve only once created.
func (r *Reconciler) resolveAfter(d *intent.LB, created map[string]int) (ids, missing []string, fills []endpointFill, ok bool) {
	ids = make([]string, 0, len(d.Backends))
	for i, b := range d.Backends {
		if i > 0 && d.Backends[i-1].IP == b.IP {
			continue
		}
		if id := r.endpointID(b); id != "" {
			ids = append(ids, id)
			continue
		}
		if created != nil && !b.Local {
			if at, made := created[b.IP]; made {
				fills = append(fills, endpointFill{pos: len(ids), ep: at})
				ids = append(ids, "")
				continue
			}
			if ep := r.eps[b.IP]; ep != nil && ep.id != "" {
				return nil, nil, nil, false // replaced in its turn
			}
		}
		missing = append(missing, b.IP)
	}
	spares := d.Spares
	for range missing {
		for len(spares) > 0 {
			id := r.endpointID(spares[0])
			if _, made := created[spares[0].IP]; made && id == "" {
				return nil, nil, nil, false
			}
			spares = spares[1:]
			if id != "" {
				ids = append(ids, id)
				break
			}
		}
	}
	return ids, missing, fills, true
}

// resolveForTurn is resolve for a load balancer's turn: what its create
// made ahead resolved, if nothing resolve reads changed since (resolving
// twice was a tenth of a cold start's reconciler CPU), else anew.
func (r *Reconciler) resolveForTurn(run *syncRun, e *lbEntry) (ids, missing []string) {
	if ahead, ok := run.lbCreates[e.key]; ok && ahead.gen == r.resolveGen {
		return ahead.ids, ahead.missing
	}
	return r.resolve(e.desired)
}

// docForTurn is the document for ids: the one made ahead if it was built
// from the same backends.
func (r *Reconciler) docForTurn(run *syncRun, e *lbEntry, ids []string) *hnslb.LoadBalancer {
	if ahead, ok := run.lbCreates[e.key]; ok && slices.Equal(ahead.ids, ids) {
		return ahead.doc
	}
	return BuildLB(e.desired, ids)
}

// endpointID is the HNS endpoint a backend uses, "" if none is usable yet.
func (r *Reconciler) endpointID(b intent.Backend) string {
	if b.Local {
		return r.localIndex[b.IP]
	}
	if ep := r.eps[b.IP]; ep != nil && ep.wanted && ep.id != "" && remoteMatches(ep.spec, ep.realizedSpec) {
		return ep.id
	}
	return ""
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
	ours := r.oursLB(blocker.ID) || r.claimCarriedLB(run.ctx, e.key, blocker)
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

// syncWantedEP creates (or replaces) a desired remote endpoint.
func (r *Reconciler) syncWantedEP(run *syncRun, ip string) {
	ep := r.eps[ip]
	ref := objectRef{ip: ip}
	delete(r.retryEPs, ip)
	ahead, madeAhead := run.epCreates[ip]
	if !madeAhead && r.awaitingAbandoned(run, ref, &ep.st, epToken(ip), idToken(ep.id)) {
		return
	}
	if ep.id != "" && remoteMatches(ep.spec, ep.realizedSpec) {
		r.succeed(ref, &ep.st)
		return
	}
	if run.noCreates {
		r.wait(run, ref, &ep.st, errStateUnwritable)
		return
	}
	if ep.id != "" {
		if err := r.removeEP(run, ep); err != nil {
			r.fail(run, ref, &ep.st, KindRemoteEndpoint, ip, err)
			return
		}
	}
	got, wrote, err := r.createEP(run, ip, ep, ahead, madeAhead)
	if err != nil {
		if !isAwaiting(err) {
			ep.uncertain = ep.uncertain || !definitive(err)
		}
		r.failOrWait(run, ref, &ep.st, KindRemoteEndpoint, ip, err)
		return
	}
	r.forgetEP(ip)
	ep.id, ep.realizedSpec, ep.uncertain = got.ID, ep.spec, false
	r.resolveGen++
	r.own(recordRemoteEndpoint, got.ID)
	delete(r.staleEPs, got.ID) // adopted: a repair may have taken it for a leak
	if wrote {
		run.res.Created++
	}
	if wrote && !madeAhead { // a batch's creates taught it already (endpointsMadeAhead)
		r.learnNames(namesShown(got))
	}
	r.succeed(ref, &ep.st)
	// Load balancers that had to leave this backend out can use it now.
	for k := range r.waiting[ip] {
		run.lbs[k] = struct{}{}
	}
}

// createEndpointsAhead makes, in one batch, the creates syncWantedEP would
// make one by one: those of wanted endpoints HNS does not hold yet, none
// with an abandoned call on it. On a cold start those are every remote
// endpoint; a batch of one is left to syncWantedEP, unless load balancers
// that use it join the batch (createEndpointsThenLoadBalancers).
func (r *Reconciler) createEndpointsAhead(run *syncRun, ips []string) {
	if run.noCreates {
		return
	}
	planned := make([]string, 0, len(ips))
	specs := make([]intent.RemoteEndpoint, 0, len(ips))
	for _, ip := range ips {
		if ep := r.eps[ip]; ep != nil && ep.desired() && ep.id == "" && !r.client.busy(epToken(ip)) && r.lookups.eps[ip] == nil {
			planned = append(planned, ip)
			specs = append(specs, ep.spec)
		}
	}
	if len(planned) == 0 {
		return
	}
	if r.createEndpointsThenLoadBalancers(run, planned, specs) {
		return
	}
	if len(planned) < 2 {
		return
	}
	res := r.client.WriteBatch(run.ctx, r.opts.NetworkID, specs, nil, nil)
	r.endpointsMadeAhead(run, planned, res)
}

// endpointsMadeAhead records the endpoint creates made ahead for their
// turns (syncWantedEP).
func (r *Reconciler) endpointsMadeAhead(run *syncRun, planned []string, res writeBatchResult) {
	run.epCreates = make(map[string]createdEP, len(planned))
	for i, ip := range planned {
		run.epCreates[ip] = createdEP{res.epIDs[i], res.epErrs[i]}
	}
	r.learnNames(res.epNames)
}

// createEndpointsThenLoadBalancers makes the endpoint creates of planned
// and, in the same batch, the load balancer writes that their turns will
// make with those endpoints, and the endpoint deletes those free
// (writeAhead): a Sync of one chunk of load balancers or fewer (a change,
// not a cold start). It returns false, having made nothing, if there is
// no such write.
func (r *Reconciler) createEndpointsThenLoadBalancers(run *syncRun, planned []string, specs []intent.RemoteEndpoint) bool {
	if len(run.lbs) > createAheadChunk {
		return false
	}
	created := make(map[string]int, len(planned))
	for i, ip := range planned {
		created[ip] = i
	}
	var keys []intent.LBKey
	var made []createdLB
	var writes []pendingLB
	for _, k := range run.lbKeys() {
		if w, c, ok := r.planLB(run, k, created); ok && len(w.fills) > 0 {
			keys, made, writes = append(keys, k), append(made, c), append(writes, w)
		}
	}
	if len(writes) == 0 {
		return false
	}
	deleteIPs, deletes := r.freedDeletes(run, writes)
	r.writeAhead(run, planned, specs, keys, made, writes, deleteIPs, deletes)
	return true
}

// writeAhead makes one batch (WriteBatch): the endpoint creates of planned
// (specs), the load balancer writes of keys (made: what their turns take),
// and the deletes of the unwanted endpoints at deleteIPs those writes free
// (freedDeletes); and records each outcome for its object's turn.
func (r *Reconciler) writeAhead(run *syncRun, planned []string, specs []intent.RemoteEndpoint, keys []intent.LBKey, made []createdLB, writes []pendingLB, deleteIPs []string, deletes []freedDelete) {
	res := r.client.WriteBatch(run.ctx, r.opts.NetworkID, specs, writes, deletes)
	if len(planned) > 0 {
		r.endpointsMadeAhead(run, planned, res)
	}
	for i, k := range keys {
		if res.lbDocs[i] == nil {
			// An endpoint it uses was not created (errEndpointNotMade), or
			// not tried (the batch stopped before it): nothing was made,
			// and its turn makes it as it would after two batches.
			continue
		}
		made[i].doc, made[i].lb, made[i].err = res.lbDocs[i], res.lbs[i], res.lbErrs[i]
		made[i].ids = res.lbDocs[i].HostComputeEndpoints
		r.madeAhead(run, k, made[i], writes[i].replaces, res.lbDeleteErrs[i])
	}
	for i, ip := range deleteIPs {
		if errors.Is(res.epDeleteErrs[i], errStillUsed) {
			continue // its turn waits for the load balancer, as before
		}
		if run.epDeletes == nil {
			run.epDeletes = map[string]deletedEP{}
		}
		run.epDeletes[ip] = deletedEP{deletes[i].id, res.epDeleteErrs[i]}
	}
}

// freedDeletes are the deletes a batch of writes can make after them: of
// the Sync's unwanted endpoints with a known ID (none with an abandoned call
// on it, none deleted ahead already) whose every user, a realized load
// balancer, the batch deletes (a replacement where HNS cannot modify) or
// modifies; each waits for those writes. An endpoint no load balancer uses
// goes too.
func (r *Reconciler) freedDeletes(run *syncRun, writes []pendingLB) (ips []string, deletes []freedDelete) {
	var replacing map[string]int // a replaced or modified load balancer's ID → its write
	for j, w := range writes {
		if old := cmp.Or(w.replaces, w.modifies); old != "" {
			if replacing == nil {
				replacing = make(map[string]int, len(writes))
			}
			replacing[old] = j
		}
	}
	for _, ip := range run.unwanted {
		ep := r.eps[ip]
		if ep == nil || ep.desired() || ep.id == "" || madeDelete(run, ip) || r.client.busy(epToken(ip), idToken(ep.id)) {
			continue
		}
		users := r.refs[ep.id]
		after := make([]int, 0, len(users))
		for _, u := range users {
			j, ok := replacing[u.realizedID]
			if !ok {
				break
			}
			after = append(after, j)
		}
		if len(after) < len(users) {
			continue
		}
		ips, deletes = append(ips, ip), append(deletes, freedDelete{id: ep.id, after: after})
	}
	return ips, deletes
}

// deleteEndpointsAhead makes, in one batch, the deletes syncUnwantedEP
// would make one by one: those of unwanted endpoints with a known ID that
// no realized load balancer uses, none with an abandoned call on it. A
// Service scaled down or deleted at thousands of nodes drops dozens at
// once; a batch of one is left to syncUnwantedEP.
func (r *Reconciler) deleteEndpointsAhead(run *syncRun, ips []string) {
	var planned []string
	var deletes []freedDelete
	for _, ip := range ips {
		ep := r.eps[ip]
		if ep == nil || ep.desired() || ep.id == "" || len(r.refs[ep.id]) > 0 || madeDelete(run, ip) || r.client.busy(epToken(ip), idToken(ep.id)) {
			continue
		}
		planned = append(planned, ip)
		deletes = append(deletes, freedDelete{id: ep.id})
	}
	if len(planned) < 2 {
		return
	}
	errs := r.client.WriteBatch(run.ctx, r.opts.NetworkID, nil, nil, deletes).epDeleteErrs
	if run.epDeletes == nil {
		run.epDeletes = make(map[string]deletedEP, len(planned))
	}
	for i, ip := range planned {
		run.epDeletes[ip] = deletedEP{deletes[i].id, errs[i]}
	}
}

// deleteEndpointOnce is the delete of endpoint id at ip: the one made ahead
// in this Sync if it deleted that ID, else a call now.
func (r *Reconciler) deleteEndpointOnce(run *syncRun, ip, id string) error {
	if d, ok := run.epDeletes[ip]; ok && d.id == id {
		delete(run.epDeletes, ip)
		return d.err
	}
	return r.client.DeleteEndpoint(run.ctx, id)
}

// createAheadChunk is how many load balancers a Sync makes ahead at once:
// enough that a batch's deadline goroutine and bookkeeping are paid once
// per hundreds of calls, few enough that its documents and answers weigh
// little.
const createAheadChunk = 512

// createLoadBalancersAhead makes, in one batch, the creates syncLB would
// make one by one for new load balancers (none realized, none uncertain, no
// foreign holder known, a backend resolved, no abandoned call on it), and,
// where HNS cannot modify, the deletes and creates of the updates (each
// create after its delete), then the deletes of the endpoints those free
// (writeAhead). On a cold start those are every load balancer; a batch of
// one call is left to syncLB.
func (r *Reconciler) createLoadBalancersAhead(run *syncRun, keys []intent.LBKey) {
	if run.noCreates {
		return
	}
	planned := make([]intent.LBKey, 0, len(keys))
	made := make([]createdLB, 0, len(keys))
	writes := make([]pendingLB, 0, len(keys))
	calls := 0
	for _, k := range keys {
		w, c, ok := r.planLB(run, k, nil)
		if !ok {
			continue
		}
		planned, made, writes = append(planned, k), append(made, c), append(writes, w)
		calls += w.calls()
	}
	if calls == 0 {
		return
	}
	deleteIPs, deletes := r.freedDeletes(run, writes)
	if calls+len(deletes) < 2 {
		return // a batch of one call: its turn makes it
	}
	r.writeAhead(run, nil, nil, planned, made, writes, deleteIPs, deletes)
}

// madeDelete reports whether the endpoint at ip was deleted ahead in this
// Sync.
func madeDelete(run *syncRun, ip string) bool {
	_, ok := run.epDeletes[ip]
	return ok
}

// planLB is the write a load balancer's turn would make that a batch can
// make ahead (see createLoadBalancersAhead), resolved after the batch's
// endpoint creates of created (nil: none; resolveAfter), with what its
// turn takes from it; ok is false if there is none.
func (r *Reconciler) planLB(run *syncRun, k intent.LBKey, created map[string]int) (w pendingLB, c createdLB, ok bool) {
	e := r.lbs[k]
	modifies := e != nil && e.realizedID != "" && r.modifyOn()
	if e == nil || e.desired == nil || e.uncertain != nil || r.foreignHeld[k] != "" ||
		has(run.unchecked, k) || r.lookups.lbs[k] != nil || r.client.busy(lbToken(k), idToken(e.realizedID)) ||
		// Where HNS may report a modify done without applying it, the
		// turn reads each one back (modifyApplied).
		modifies && hnslb.ModifyMayIgnoreBackends(r.opts.Features.Version) {
		return w, c, false
	}
	if _, done := run.lbCreates[k]; done {
		return w, c, false
	}
	ids, missing, fills, ok := r.resolveAfter(e.desired, created)
	if !ok || len(ids) == 0 {
		return w, c, false
	}
	doc := BuildLB(e.desired, ids)
	if len(fills) == 0 && e.realizedID != "" && sameLB(e.realized, doc) {
		return w, c, false
	}
	c = createdLB{doc: doc, ids: ids, missing: missing, gen: r.resolveGen, modified: modifies}
	if modifies {
		return pendingLB{lbWrite: lbWrite{doc: doc}, modifies: e.realizedID, fills: fills}, c, true
	}
	return pendingLB{lbWrite: lbWrite{doc: doc, replaces: e.realizedID}, fills: fills}, c, true
}

// calls is how many HNS calls w makes: its create or modify, and a delete
// first if it replaces one.
func (w pendingLB) calls() int {
	if w.replaces != "" {
		return 2
	}
	return 1
}

// madeAhead records a load balancer write made ahead for its turn: the
// create's outcome in c, and where it replaced one, whether that delete
// went through (what HNS now holds is recorded at once; the turn counts
// it).
func (r *Reconciler) madeAhead(run *syncRun, k intent.LBKey, c createdLB, replaces string, deleteErr error) {
	if replaces != "" {
		if deleteErr == nil || hnslb.IsNotFound(deleteErr) {
			r.afterDelete(recordLoadBalancer, replaces, deleteErr)
			r.clearRealized(r.lbs[k])
			c.replaced = true
		} else {
			c.deleteErr = deleteErr
		}
	}
	if run.lbCreates == nil {
		run.lbCreates = map[intent.LBKey]createdLB{}
	}
	run.lbCreates[k] = c
}

// createOnce is the create of doc for e: the one made ahead in this Sync
// if it made the same document, else a call now. A different document (an
// earlier load balancer's failure made a local backend unknown since) has
// the one made ahead deleted first; where the create made ahead lost its
// reply, it may be in HNS, so it becomes e's uncertain create for the next
// Sync to find (resolveUncertainLB), and nothing is created now.
func (r *Reconciler) createOnce(run *syncRun, e *lbEntry, doc *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	ahead, ok := run.lbCreates[e.key]
	if !ok {
		return r.client.CreateLoadBalancer(run.ctx, doc)
	}
	delete(run.lbCreates, e.key)
	if ahead.doc == doc || sameLB(ahead.doc, doc) {
		return ahead.lb, ahead.err
	}
	if ahead.err != nil && !definitive(ahead.err) {
		e.uncertain = ahead.doc
		return nil, ahead.err
	}
	if ahead.err == nil {
		r.own(recordLoadBalancer, ahead.lb.ID) // ours: its delete is confirmed as any
		if err := r.deleteLB(run, ahead.lb.ID); err != nil {
			r.keepToDelete(ahead.lb.ID)
			return nil, err // not definitive: the key's next Sync looks for what it holds
		}
	}
	return r.client.CreateLoadBalancer(run.ctx, doc)
}

// keepToDelete makes a load balancer made ahead whose delete failed
// hnsproxy's, due for deletion: left unowned, the next Sync would take it
// for another agent's on its frontend and, on a tenant's frontend, never
// remove it (found by the fault soak, seed 3).
func (r *Reconciler) keepToDelete(id string) {
	r.own(recordLoadBalancer, id)
	r.staleLBs[id] = &staleObj{reason: "ours, made ahead and not used"}
}

// dropUnusedCreates deletes the load balancers made ahead that their turn
// did not take (their backends became unknown since), so none is left
// unowned on a desired frontend; their load balancers are synced again. A
// modify made ahead and not taken is recorded as what HNS now holds.
func (r *Reconciler) dropUnusedCreates(run *syncRun) {
	for k, ahead := range run.lbCreates {
		if ahead.err != nil {
			r.keepUncertainAhead(k, ahead)
			continue
		}
		if ahead.modified {
			if e := r.lbs[k]; e != nil && e.realizedID != "" {
				r.setModified(e, ahead.doc, ahead.lb)
				r.markLB(e)
			}
			continue
		}
		r.own(recordLoadBalancer, ahead.lb.ID) // ours: its delete is confirmed as any
		if err := r.deleteLB(run, ahead.lb.ID); err != nil {
			r.log.Error(err, "Deleting a load balancer made ahead and not used failed; it is deleted later", "key", k, "id", ahead.lb.ID)
			r.keepToDelete(ahead.lb.ID)
		}
		if e := r.lbs[k]; e != nil {
			r.markLB(e)
		}
	}
	run.lbCreates = nil
}

// keepUncertainAhead makes a create made ahead whose reply was lost, and
// that its turn did not take, its key's uncertain create: HNS may have made
// it, and left unowned on a tenant's frontend it would be taken for another
// agent's for good (found by the fault soak, seed 5). The key's next Sync
// looks for it (resolveUncertainLB) and then deletes or updates it.
func (r *Reconciler) keepUncertainAhead(k intent.LBKey, ahead createdLB) {
	e := r.lbs[k]
	if definitive(ahead.err) || e == nil || e.realizedID != "" || e.uncertain != nil {
		return
	}
	e.uncertain = ahead.doc
	r.markLB(e)
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

// createEP creates ep's remote endpoint at ip: the create made ahead in
// this Sync, if any, else a call now. If HNS refuses it because the address
// is taken (made by someone else, or by us before a lost reply: same IP,
// same network), ep waits for a listing to show what holds it (lookup.go);
// an endpoint of ep's kind that matches its spec is then adopted, and one
// of ours that does not, which nothing uses (HNS kept it after its delete,
// deleted.go), is deleted before the create. A create refused again after
// such a listing fails with HNS's error, the answer kept for the next try.
// wrote is false when nothing was created.
func (r *Reconciler) createEP(run *syncRun, ip string, ep *remoteEP, ahead createdEP, madeAhead bool) (got *hnslb.Endpoint, wrote bool, err error) {
	listed := false
	var holders []*hnslb.Endpoint // what the listing showed on ip, but one of ours deleted now
	if l := r.lookups.eps[ip]; l != nil && l.purpose != lookupAddress {
		r.forgetEP(ip) // a create now: what a lost one made is its to meet
	} else if l != nil {
		if !l.answered {
			return nil, false, awaiting(whyAddress)
		}
		found := endpointOfKind(l.found, ep.spec.Local)
		if found != nil && remoteMatches(ep.spec, remoteSpecOf(found)) {
			r.log.Info("Adopted existing remote endpoint", "ip", ip, "id", found.ID)
			return found, false, nil
		}
		holders = l.found
		if found != nil && r.unusedEPOfOurs(found.ID) {
			r.log.Info("Deleting an endpoint of ours that holds the address", "ip", ip, "id", found.ID)
			err := r.client.DeleteEndpoint(run.ctx, found.ID)
			if err != nil && !hnslb.IsNotFound(err) {
				return nil, false, fmt.Errorf("deleting endpoint %s of ours, which holds the address: %w", found.ID, err)
			}
			r.afterDelete(recordRemoteEndpoint, found.ID, err)
			run.res.Deleted++
			holders = slices.DeleteFunc(slices.Clone(holders), func(h *hnslb.Endpoint) bool { return h == found })
		}
		listed = true
	}
	got, err = ahead.reply(), ahead.err
	if !madeAhead {
		got, err = r.client.CreateEndpoint(run.ctx, r.opts.NetworkID, buildRemoteEndpoint(r.opts.NetworkID, ep.spec))
	}
	if hnslb.IsAddressRefused(err) {
		if !listed {
			r.askEP(ip, lookupAddress)
			return nil, false, awaiting(whyAddress)
		}
		err = &AddressRefusedError{IP: ip, Holders: holders, Err: err}
	}
	return got, err == nil, err
}

// endpointOfKind is the first of eps that is remote, or local when local
// is set (the kind of endpoint hnsproxy makes for the address).
func endpointOfKind(eps []*hnslb.Endpoint, local bool) *hnslb.Endpoint {
	for _, ep := range eps {
		if ep.IsRemote() != local {
			return ep
		}
	}
	return nil
}

// syncUnwantedEP deletes a remote endpoint no longer desired, once no
// realized load balancer uses it.
func (r *Reconciler) syncUnwantedEP(run *syncRun, ip string) {
	ep := r.eps[ip]
	ref := objectRef{ip: ip}
	delete(r.retryEPs, ip)
	if r.awaitingAbandoned(run, ref, &ep.st, epToken(ip), idToken(ep.id)) {
		return
	}
	if ep.id == "" && ep.uncertain {
		// A lost create may have made it: a listing begun after it finds
		// it (lookup.go), and it is deleted.
		found, answered := r.epAnswer(ip, lookupLostCreate)
		if !answered {
			r.wait(run, ref, &ep.st, awaiting(whyLostEP))
			return
		}
		r.forgetEP(ip)
		if f := endpointOfKind(found, ep.spec.Local); f != nil && remoteMatches(ep.spec, remoteSpecOf(f)) {
			ep.id = f.ID
		}
		ep.uncertain = false
	}
	if ep.id != "" {
		if n := len(r.refs[ep.id]); n > 0 {
			r.wait(run, ref, &ep.st, fmt.Errorf("not deleted yet: %d realized load balancers still use it", n))
			return
		}
		err := r.deleteEndpointOnce(run, ip, ep.id)
		if err != nil && !hnslb.IsNotFound(err) {
			r.fail(run, ref, &ep.st, KindRemoteEndpoint, ip, err)
			return
		}
		r.afterDelete(recordRemoteEndpoint, ep.id, err)
		run.res.Deleted++
	}
	r.limiter.Forget(ref)
	r.published.epGone(ip, ep)
	r.forgetEP(ip)
	delete(r.eps, ip)
	r.resolveGen++
}
