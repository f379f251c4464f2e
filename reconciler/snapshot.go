package reconciler

import (
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hnsproxy/hnsproxy/intent"
)

// StatusSnapshot is the reconciler's status at one moment. Readers get one
// without waiting for the lock Sync holds while it talks to HNS, so a debug
// page never waits behind a slow sync. It is shared: readers must not
// modify it (its Desired load balancers are the reconciler's own, which
// Upsert replaces and never changes in place).
type StatusSnapshot struct {
	LoadBalancers   []Status         // sorted by key
	RemoteEndpoints []EndpointStatus // sorted by IP
	// LearnedBackendCap is the backend cap HNS was found to enforce (0: none; backendcap.go).
	LearnedBackendCap int
	// Gathering says the status is not handed over yet: a first look, or
	// the first after statusReaderIdle with none, met a Start, Sync or
	// Repair in progress, and the statuses come with its end. The snapshot
	// is empty then; look again.
	Gathering bool
}

// ObjectCounts counts the tracked load balancers and remote endpoints.
type ObjectCounts struct{ LoadBalancers, RemoteEndpoints KindCounts }

// KindCounts counts objects of one kind: desired (wanted now), done (HNS
// holds exactly that) and failed (the last attempt errored).
type KindCounts struct{ Desired, Done, Failed int }

// How the status reaches readers without costing the sync path more than
// what it changed: every Sync (and Start, Repair, an idle reader) flushes
// the status of the objects it touched (statusChanges) into a delta, under
// the reconciler's lock, in time proportional to those objects. A reader
// folds the deltas into the last snapshot, in time proportional to the
// whole status, holding only the publisher's locks. So the sync path never
// walks every object (at 111,000 objects that walk took 415 ms), and a
// snapshot read during a Sync is the status at the end of the last one.
//
// Until a first reader asks, a flush keeps only the counts: it hands over
// no statuses, which nobody would fold and which at 111,000 objects held
// about a sixth of the peak RSS. The first reader has the next flush hand
// over every object (its own, if the reconciler is idle; else the one that
// ends the Start, Sync or Repair in progress, and until then it reads an
// empty status that says it is Gathering).
//
// A flush that finds no reader has asked for statusReaderIdle stops the
// hand-over and drops what it kept for readers (the last snapshot, the
// deltas, the IPs by endpoint ID): an operator's one look at /debug/hns, or
// one load balancer HNS refused once, no longer has the node keep every
// object's status twice for the rest of the process's life (at 10,000
// Services on overlay about 5 MiB live). The next reader is a first reader
// again.

// statusReaderIdle is how long the hand-over goes on with no reader. An
// operator looking again and again, or the observer reading after every
// Sync while a refusal it reported stands, keeps it; a look after it costs
// one walk of every object.
const statusReaderIdle = 10 * time.Minute

// statusChanges are the objects whose status may have changed since the
// last flush; the reconciler's lock guards them.
type statusChanges struct {
	lbs   map[intent.LBKey]struct{}
	eps   map[string]struct{} // by IP
	epIDs map[string]struct{} // endpoints whose realized users changed, by HNS ID
}

func (c *statusChanges) lb(k intent.LBKey) {
	if c.lbs == nil {
		c.lbs = map[intent.LBKey]struct{}{}
	}
	c.lbs[k] = struct{}{}
}

func (c *statusChanges) ep(ip string) {
	if c.eps == nil {
		c.eps = map[string]struct{}{}
	}
	c.eps[ip] = struct{}{}
}

// usersChanged notes that the realized load balancers using endpoint id
// changed: only a status shows them, so before a first reader nothing is
// noted (the first reader's full hand-over covers them).
func (p *publishedStatus) usersChanged(id string) {
	if p.read.Load() {
		p.changed.epID(id)
	}
}

func (c *statusChanges) epID(id string) {
	if c.epIDs == nil {
		c.epIDs = map[string]struct{}{}
	}
	c.epIDs[id] = struct{}{}
}

// statusClass is what ObjectCounts counts of one object.
type statusClass struct{ desired, done, failed bool }

func classOf(desired bool, st State) statusClass {
	return statusClass{desired: desired, done: st == StateDone, failed: st == StateError}
}

// flushedEP is what the last flush said about one remote endpoint.
type flushedEP struct {
	id    string // its RealizedID
	class statusClass
}

// flushMark is what the last flush counted of one tracked object, kept in
// its entry (lbEntry, remoteEP) in four bytes: maps of them beside the
// entries held some 3 MB at 10,000 Services on overlay.
type flushMark struct {
	class   statusClass
	counted bool
}

// publishedStatus carries the status from the reconciler to readers.
type publishedStatus struct {
	// Under the reconciler's lock: what changed since the last flush, what
	// the flushes so far counted of objects no longer tracked (what they
	// counted of tracked ones is in their entries' flushMark), and, once a
	// reader has asked, the IP of each flushed endpoint ID (to find an
	// endpoint by the ID a load balancer references).
	changed statusChanges
	goneLBs map[intent.LBKey]statusClass
	goneEPs map[string]flushedEP // by IP
	ipOfID  map[string]string    // flushed RealizedID → IP
	counted ObjectCounts         // the flushed objects' counts

	// mu guards the hand-over: deltas not yet folded (nil: gone) and the
	// counts as of the last flush. It is held only to add or take them.
	mu sync.Mutex
	// fullDue says the next flush hands over every object (for the first
	// reader, or when the deltas passed their bound: pastBound); rebase says the
	// deltas held are every object, so the reader replaces its snapshot
	// with them instead of folding them in.
	fullDue, rebase bool
	lbDelta         map[intent.LBKey]*Status
	epDelta         map[string]*EndpointStatus
	counts          ObjectCounts
	// learnedCap is the reconciler's learnedCap as of the last flush.
	learnedCap int
	// read says a reader has asked for a snapshot since the hand-over last
	// stopped; set under mu, and cleared under mu and merging. lastRead is
	// when a reader last asked (under mu).
	read     atomic.Bool
	lastRead time.Time

	// merging orders readers; it guards latest and gathered, which says
	// latest is built on a hand-over of every object since read was set.
	merging  sync.Mutex
	latest   *StatusSnapshot
	gathered bool
}

var (
	emptyStatus     = &StatusSnapshot{}
	gatheringStatus = &StatusSnapshot{Gathering: true}
)

// StatusSnapshot returns the current status when no Start, Sync or Repair
// holds the lock, and otherwise, without waiting for it, the status at the
// end of the last one, or, if none handed the statuses over since the
// hand-over started (a first reader, or the first after statusReaderIdle),
// an empty status that says it is Gathering. It never waits for HNS.
func (r *Reconciler) StatusSnapshot() *StatusSnapshot {
	p := &r.published
	p.merging.Lock()
	defer p.merging.Unlock()
	p.mu.Lock()
	p.lastRead = r.clock.Now()
	if !p.read.Load() {
		p.read.Store(true)
		p.fullDue = true
	}
	p.mu.Unlock()
	if r.mu.TryLock() {
		r.flushStatusLocked()
		r.mu.Unlock()
	}
	p.mu.Lock()
	lbs, eps, learnedCap, rebase := p.lbDelta, p.epDelta, p.learnedCap, p.rebase
	p.lbDelta, p.epDelta, p.rebase = nil, nil, false
	p.mu.Unlock()
	switch {
	case rebase:
		p.latest, p.gathered = emptyStatus, true
	case !p.gathered:
		p.latest = gatheringStatus
	}
	if len(lbs)+len(eps) > 0 {
		p.latest = &StatusSnapshot{
			LoadBalancers:     fold(p.latest.LoadBalancers, lbs, func(s *Status) intent.LBKey { return s.Key }, intent.CompareLBKeys),
			RemoteEndpoints:   fold(p.latest.RemoteEndpoints, eps, func(s *EndpointStatus) string { return s.Endpoint.IP }, intent.CompareIPs),
			LearnedBackendCap: p.latest.LearnedBackendCap,
			Gathering:         p.latest.Gathering,
		}
	}
	if p.latest.LearnedBackendCap != learnedCap {
		next := *p.latest
		next.LearnedBackendCap = learnedCap
		p.latest = &next
	}
	return p.latest
}

// ObjectCounts returns the counts as of the end of the last Start, Sync or
// Repair, without waiting for the reconciler's lock.
func (r *Reconciler) ObjectCounts() ObjectCounts {
	r.published.mu.Lock()
	defer r.published.mu.Unlock()
	return r.published.counts
}

// fold returns base (sorted by cmp) with delta applied: a nil value
// removes its key, any other replaces or adds it. With no delta it is base
// itself: snapshots share what did not change (nobody modifies one), and a
// read after a change of load balancers alone copies no endpoint.
func fold[T any, K comparable](base []T, delta map[K]*T, key func(*T) K, cmp func(a, b K) int) []T {
	if len(delta) == 0 {
		return base
	}
	keys := slices.SortedFunc(maps.Keys(delta), cmp)
	out := make([]T, 0, len(base)+len(keys))
	i := 0
	for _, k := range keys {
		for ; i < len(base) && cmp(key(&base[i]), k) < 0; i++ {
			out = append(out, base[i])
		}
		if i < len(base) && cmp(key(&base[i]), k) == 0 {
			i++
		}
		if v := delta[k]; v != nil {
			out = append(out, *v)
		}
	}
	return append(out, base[i:]...)
}

// touchAll marks every tracked object changed (Start).
func (r *Reconciler) touchAll() {
	for k := range r.lbs {
		r.published.changed.lb(k)
	}
	for ip := range r.eps {
		r.published.changed.ep(ip)
	}
}

// flushStatusLocked hands the status of every object changed since the last
// flush over to readers (once one has asked; before, it only counts); the
// caller holds the reconciler's lock.
func (r *Reconciler) flushStatusLocked() {
	p := &r.published
	p.mu.Lock()
	// A reader folding now holds merging: it is no idle reader.
	if p.read.Load() && r.clock.Since(p.lastRead) >= statusReaderIdle && p.merging.TryLock() {
		p.stopHandOver()
		p.merging.Unlock()
	}
	read, full := p.read.Load(), p.fullDue
	p.fullDue = false
	p.mu.Unlock()
	if full {
		r.touchAll()
	}
	c := &p.changed
	for id := range c.epIDs {
		if ip, ok := p.ipOfID[id]; ok {
			c.ep(ip)
		}
	}
	if len(c.lbs)+len(c.eps) == 0 {
		c.epIDs = nil
		p.mu.Lock()
		p.learnedCap = r.learnedCap
		if full && read { // every object is none: the reader's snapshot empties
			p.lbDelta, p.epDelta, p.rebase = nil, nil, true
		}
		p.mu.Unlock()
		return
	}
	if read && p.ipOfID == nil { // only a reader's flushes fill it
		p.ipOfID = map[string]string{}
	}
	var lbs map[intent.LBKey]*Status
	var eps map[string]*EndpointStatus
	if read {
		lbs = make(map[intent.LBKey]*Status, len(c.lbs))
		eps = make(map[string]*EndpointStatus, len(c.eps))
	}
	counts := &p.counted
	for k := range c.lbs {
		if old, ok := p.goneLBs[k]; ok {
			counts.LoadBalancers.add(old, -1)
			delete(p.goneLBs, k)
			if read {
				lbs[k] = nil
			}
		}
		if e := r.lbs[k]; e != nil {
			if e.flushed.counted {
				counts.LoadBalancers.add(e.flushed.class, -1)
			}
			class := classOf(e.desired != nil, e.st.state)
			counts.LoadBalancers.add(class, 1)
			e.flushed = flushMark{class: class, counted: true}
			if read {
				s := e.status()
				lbs[k] = &s
			}
		}
	}
	for ip := range c.eps {
		if old, ok := p.goneEPs[ip]; ok {
			counts.RemoteEndpoints.add(old.class, -1)
			delete(p.goneEPs, ip)
			p.forgetID(old.id, ip)
			if read {
				eps[ip] = nil
			}
		}
		if ep := r.eps[ip]; ep != nil {
			if ep.flushed.counted {
				counts.RemoteEndpoints.add(ep.flushed.class, -1)
				p.forgetID(ep.flushedID, ip)
			}
			class := classOf(ep.desired(), ep.st.state)
			if ep.shadowed && ep.id == "" {
				class = statusClass{} // neither wanted nor held (nodeunknown.go)
			}
			counts.RemoteEndpoints.add(class, 1)
			ep.flushed, ep.flushedID = flushMark{class: class, counted: true}, ep.id
			if read && ep.id != "" {
				p.ipOfID[ep.id] = ip
			}
			if read {
				s := r.endpointStatusOf(ep)
				eps[ip] = &s
			}
		}
	}
	*c = statusChanges{}

	p.mu.Lock()
	// The cap with the statuses it goes with: set before they were
	// gathered, a reader meeting this flush got it beside the last ones.
	p.counts, p.learnedCap = p.counted, r.learnedCap
	if p.lbDelta == nil || full && read { // every object replaces what no reader took
		p.lbDelta, p.epDelta = lbs, eps
	} else {
		maps.Copy(p.lbDelta, lbs)
		maps.Copy(p.epDelta, eps)
	}
	p.rebase = p.rebase || full && read
	rebuild := p.pastBound(len(r.lbs) + len(r.eps))
	p.mu.Unlock()
	if rebuild {
		r.flushStatusLocked()
	}
}

// stopHandOver drops what the hand-over keeps for readers, none of whom
// asked for statusReaderIdle; the caller holds the reconciler's lock,
// p.mu and p.merging.
func (p *publishedStatus) stopHandOver() {
	p.read.Store(false)
	p.fullDue, p.rebase = false, false
	p.lbDelta, p.epDelta = nil, nil
	p.latest, p.gathered = nil, false
	p.ipOfID, p.changed.epIDs = nil, nil
}

// minDeltasDropped is how many statuses the hand-over holds at least
// before pastBound has them replaced.
const minDeltasDropped = 256

// pastBound reports whether the deltas no reader took hold more than twice
// the tracked objects, and then has the next flush hand over every object;
// p.mu is held. The caller flushes again at once, which replaces them with
// every tracked object (never past the bound). Once a reader has asked (an
// operator's /debug/hns, the observer after a refusal), every flush hands
// over, and each object gone since the last read stays as a removal until
// the next one: on a node whose Services and pods come and go, with nobody
// reading for weeks, that grew with every frontend and pod IP ever seen.
// The deltas stay until replaced, and the replacement is made before the
// reconciler's lock is let go: a reader meeting a Sync in progress, or
// one whose own flush passed the bound, still reads the status of the last
// flush, not that of its own last read. A full hand-over costs a walk of
// the tracked objects, at most once per that many changes.
func (p *publishedStatus) pastBound(tracked int) bool {
	if len(p.lbDelta)+len(p.epDelta) <= max(minDeltasDropped, 2*tracked) {
		return false
	}
	p.fullDue = true
	return true
}

// forgetID drops id's entry in ipOfID if it still names ip.
func (p *publishedStatus) forgetID(id, ip string) {
	if p.ipOfID[id] == ip {
		delete(p.ipOfID, id)
	}
}

// lbGone keeps, for the next flush to uncount, what the last one counted
// of e, which is no longer tracked; the caller holds the reconciler's lock.
func (p *publishedStatus) lbGone(e *lbEntry) {
	p.changed.lb(e.key)
	if !e.flushed.counted {
		return
	}
	if p.goneLBs == nil {
		p.goneLBs = map[intent.LBKey]statusClass{}
	}
	p.goneLBs[e.key] = e.flushed.class
}

// epGone is lbGone for a remote endpoint.
func (p *publishedStatus) epGone(ip string, ep *remoteEP) {
	p.changed.ep(ip)
	if !ep.flushed.counted {
		return
	}
	if p.goneEPs == nil {
		p.goneEPs = map[string]flushedEP{}
	}
	p.goneEPs[ip] = flushedEP{id: ep.flushedID, class: ep.flushed.class}
}

func (c *KindCounts) add(s statusClass, n int) {
	if s.desired {
		c.Desired += n
	}
	if s.done {
		c.Done += n
	}
	if s.failed {
		c.Failed += n
	}
}

// noteSynced marks the objects a Sync processed changed.
func (r *Reconciler) noteSynced(lbs map[intent.LBKey]struct{}, ips []string) {
	for k := range lbs {
		r.published.changed.lb(k)
	}
	for _, ip := range ips {
		r.published.changed.ep(ip)
	}
}
