package reconciler

import (
	"maps"
	"slices"
	"time"

	"github.com/hnsproxy/hnsproxy/intent"
)

// A drift repair that finds most objects gone (an HNS restart that dropped
// them) marks thousands at once. Done in one Sync, every change handed in
// meanwhile waited behind all of them under the lock: 85 s at 10k Services
// on overlay. So what a repair marks is its work, kept apart from what the
// caller hands in: each Sync takes everything it was handed, then a chunk
// of the repair's work sized to take about repairSyncBudget, and reports
// the rest (SyncResult.RepairLeft) for the caller to sync again at once.
// Each Sync stays whole (ordered, minimal writes, state file written), only
// shorter; a change waits for at most one chunk.

const (
	// repairSyncBudget is about what one Sync spends on a repair's work.
	repairSyncBudget = 100 * time.Millisecond
	// A chunk counts objects (load balancers and the endpoints they take
	// along). The first is small, and each Sync sizes the next by what its
	// own took: halved and more when it overran the budget, doubled when it
	// took under half; HNS's speed per call is not known ahead.
	repairChunkFirst = 64
	repairChunkMin   = 4
	repairChunkMax   = 4096
)

// repairWork is the objects a repair marked that no Sync has taken yet.
type repairWork struct {
	lbs map[intent.LBKey]struct{}
	eps map[string]struct{} // by IP
	// lbOrder and epOrder are lbs and eps in order, taken from the front;
	// they may hold keys taken otherwise since (handed in again), which
	// are skipped. sorted is false when keys were added since the sort.
	lbOrder []intent.LBKey
	epOrder []string
	sorted  bool
	// chunk is the number of objects the next Sync takes.
	chunk int
	// since is when the work began (the first repair that left some),
	// syncs how many Syncs took part of it, done how many objects.
	since       time.Time
	syncs, done int
}

func (w *repairWork) left() int { return len(w.lbs) + len(w.eps) }

// withRepairMarks runs judge, a repair's judging under the lock, so that
// what it marks becomes repair work rather than handed: what was handed
// before stays handed, even where judge marks it too.
func (r *Reconciler) withRepairMarks(judge func()) {
	handedLBs, handedEPs := r.dirtyLBs, r.dirtyEPs
	r.dirtyLBs, r.dirtyEPs = map[intent.LBKey]struct{}{}, map[string]struct{}{}
	judge()
	w := &r.repairWork
	added := 0
	for k := range r.dirtyLBs {
		if !has(handedLBs, k) && addNew(w.lbs, k) {
			added++
		}
	}
	for ip := range r.dirtyEPs {
		if !has(handedEPs, ip) && addNew(w.eps, ip) {
			added++
		}
	}
	r.dirtyLBs, r.dirtyEPs = handedLBs, handedEPs
	if added == 0 {
		return
	}
	w.lbOrder, w.epOrder, w.sorted = nil, nil, false
	if w.chunk == 0 {
		w.chunk = repairChunkFirst
	}
	if w.since.IsZero() {
		w.since = r.clock.Now()
	}
}

// handed takes k or ip out of the repair's work: it was handed in (or a
// Sync marked it), so the next Sync takes it whole.
func (w *repairWork) handedLB(k intent.LBKey) { delete(w.lbs, k) }
func (w *repairWork) handedEP(ip string)      { delete(w.eps, ip) }

// processed takes out of the repair's work the load balancers a Sync
// processed: those it added to its work on its way (the users of an
// endpoint it made, of a local endpoint that moved) were done with it.
func (w *repairWork) processed(lbs map[intent.LBKey]struct{}) {
	if len(w.lbs) == 0 {
		return
	}
	for k := range lbs {
		delete(w.lbs, k)
	}
}

// takeRepairWork adds to a Sync's work (lbs, eps) a chunk of the repair's:
// load balancers in order, each with the endpoints of the repair's work it
// uses, so that none is written while a backend it needs waits; once no
// load balancer is left, endpoints alone. The load balancers handed in take
// the endpoints of the repair's work they use first. It returns how many
// objects it took.
func (r *Reconciler) takeRepairWork(lbs map[intent.LBKey]struct{}, eps map[string]struct{}) int {
	w := &r.repairWork
	if w.left() == 0 {
		return 0
	}
	taken := 0
	for k := range lbs {
		taken += r.takeBackendsOf(k, eps)
	}
	if !w.sorted {
		w.lbOrder = sortedKeys(w.lbs)
		w.epOrder = slices.AppendSeq(make([]string, 0, len(w.eps)), maps.Keys(w.eps))
		intent.SortIPs(w.epOrder)
		w.sorted = true
	}
	for taken < w.chunk && len(w.lbOrder) > 0 {
		k := w.lbOrder[0]
		w.lbOrder = w.lbOrder[1:]
		if !has(w.lbs, k) {
			continue
		}
		delete(w.lbs, k)
		lbs[k] = struct{}{}
		taken += 1 + r.takeBackendsOf(k, eps)
	}
	for taken < w.chunk && len(w.lbs) == 0 && len(w.epOrder) > 0 {
		ip := w.epOrder[0]
		w.epOrder = w.epOrder[1:]
		if has(w.eps, ip) {
			delete(w.eps, ip)
			eps[ip] = struct{}{}
			taken++
		}
	}
	return taken
}

// takeBackendsOf moves from the repair's work into eps the remote
// endpoints k's desired load balancer uses, and the one on its VIP (on
// overlay each cluster IP has one, winkernel's), so that a Service is
// whole once its chunk is done; it returns how many.
func (r *Reconciler) takeBackendsOf(k intent.LBKey, eps map[string]struct{}) int {
	e := r.lbs[k]
	if e == nil || e.desired == nil {
		return 0
	}
	n := 0
	take := func(ip string) {
		if has(r.repairWork.eps, ip) {
			delete(r.repairWork.eps, ip)
			eps[ip] = struct{}{}
			n++
		}
	}
	take(k.VIP)
	for _, b := range e.desired.Backends {
		if !b.Local {
			take(b.IP)
		}
	}
	return n
}

// noteRepairWorkDone sizes the next chunk by what this Sync, which took
// taken objects of the repair's work, spent (elapsed), and says when the
// work is done: also when changes handed in took the last of it.
func (r *Reconciler) noteRepairWorkDone(taken int, elapsed time.Duration) {
	w := &r.repairWork
	if w.since.IsZero() {
		return // no work since the last done
	}
	if taken > 0 {
		w.syncs++
		w.done += taken
		switch {
		case elapsed > repairSyncBudget:
			w.chunk = max(repairChunkMin, int(int64(w.chunk)*int64(repairSyncBudget)/int64(elapsed)))
		case elapsed < repairSyncBudget/2 && taken >= w.chunk:
			w.chunk = min(repairChunkMax, 2*w.chunk)
		}
	}
	if left := w.left(); left > 0 {
		if taken == 0 {
			return
		}
		r.log.V(2).Info("Synced part of a drift repair's work; the rest follows in the next Sync", "took", taken, "left", left, "nextChunk", w.chunk)
		return
	}
	r.log.Info("Drift repair's work done", "objects", w.done, "syncs", w.syncs, "seconds", r.clock.Since(w.since).Seconds())
	w.syncs, w.done, w.since = 0, 0, time.Time{}
}
