package reconciler

import (
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
	// probeFoundGone: the probe met an object of hnsproxy's gone (probe.go).
	probeFoundGone bool
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
	// deferredDeletes counts the deferred stale deletes made (syncStale);
	// repairing: the Sync took some of a repair's work, or left some, and
	// makes none.
	deferredDeletes int
	repairing       bool
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
	r.readUnlisted(run)
	run.lbs = takeDue(run.now, &r.dirtyLBs, r.retryLBs, func(k intent.LBKey) time.Time { return r.lbs[k].st.nextRetry })
	epWork := takeDue(run.now, &r.dirtyEPs, r.retryEPs, func(ip string) time.Time { return r.eps[ip].st.nextRetry })
	repairTaken := r.takeRepairWork(run.lbs, epWork)
	run.repairing = repairTaken > 0 || r.repairWork.left() > 0
	ips := slices.AppendSeq(make([]string, 0, len(epWork)), maps.Keys(epWork))
	intent.SortIPs(ips)
	// First: what the index learns decides which endpoints are wanted now
	// (nodeunknown.go).
	r.refreshLocalIfNeeded(run, ips)
	r.setIPs(run, ips)
	run.unchecked = r.findHeldFrontends(run)
	run.noCreates = !r.declareCreates(run.lbs, ips, run.unchecked)

	r.syncStale(run, r.staleLBs, r.client.DeleteLoadBalancer, recordLoadBalancer, staleFirst)
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
	r.syncStale(run, r.staleLBs, r.client.DeleteLoadBalancer, recordLoadBalancer, staleDeferred)
	// Stale endpoints wait until no stale load balancer (which may use them) is left.
	if len(r.staleLBs) == 0 {
		r.syncStale(run, r.staleEPs, r.client.DeleteEndpoint, recordRemoteEndpoint, staleAll)
	}

	r.repairWork.processed(run.lbs)
	r.listing.noteSync(run.lbs, ips)
	r.noteSynced(run.lbs, ips)
	r.settleCreates(run.lbs)
	if r.takeover {
		// A takeover lasts until the first Sync ends; the snapshot that
		// says so ends it for a restart too (TakeoverPending).
		r.takeover, r.snapshotDue = false, true
	}
	run.res.ForeignHeld = r.foreignHeldList()
	run.res.LeftOut = r.leftOutLocals()
	r.takeFailedCreates()
	r.tellRefusals()
	if err := r.writeState(); err != nil {
		r.logStateWriteFailed(err, "Writing hnsproxy state file failed; retrying after the next Sync")
	}
	r.noteRepairWorkDone(repairTaken, r.clock.Since(run.now))
	r.probe(run)
	r.checkSuspectedNetwork(run)
	r.reportProbe(run)
	run.res.Pending = r.pending()
	run.res.RepairLeft = r.repairWork.left()
	run.res.LearnedBackendCap = r.learnedCap
	run.res.ListingWanted = r.wantsListing()
	run.res.HNSDown, run.res.HNSBack = r.outage.open, run.outageEnded
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
	return len(r.dirtyLBs) + len(r.dirtyEPs) + r.repairWork.left() + len(r.retryLBs) + len(r.retryEPs) + len(r.staleLBs) + len(r.staleEPs)
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
// it, its replacement rewrites those that used it), so they are sorted
// again only when that added some: a cold start's 10,000 keys were sorted
// once for each step that walks them.
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

// stalePass says which stale objects a syncStale pass deletes.
type stalePass uint8

const (
	staleFirst    stalePass = iota // all but the deferred, before the creates
	staleDeferred                  // the deferred alone, after the creates and updates
	staleAll
)

// syncStale deletes due stale objects (ours left over, foreign blockers) of
// the pass; deferred ones once a repair's work is done, maxUnlistedReads
// per Sync (unreadStale).
func (r *Reconciler) syncStale(run *syncRun, stale map[string]*staleObj, del func(context.Context, string) error, owned recordKind, pass stalePass) {
	for _, id := range slices.Sorted(maps.Keys(stale)) {
		s := stale[id]
		if s.st.nextRetry.After(run.now) || s.deferred && pass == staleFirst || !s.deferred && pass == staleDeferred {
			continue
		}
		if s.deferred {
			if run.deferredDeletes == maxUnlistedReads || run.repairing {
				continue // due still: the next Sync takes them
			}
			run.deferredDeletes++
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
		log := r.log
		if s.quiet {
			log = log.V(4)
		}
		log.Info("Deleted HNS object", "id", id, "reason", s.reason)
		r.afterDelete(owned, id, err)
		r.dropStale(stale, id)
		if s.network != "" {
			r.snapshotDue = true // it may have been the last on its network (endpointNetworks)
		}
		run.res.Deleted++
	}
}
