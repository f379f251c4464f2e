package reconciler

import (
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

// Default retry backoff bounds.
const (
	DefaultRetryBase = time.Second
	DefaultRetryMax  = 2 * time.Minute
)

// Options configure a Reconciler.
type Options struct {
	// NetworkID is the HNS network remote endpoints are created on and
	// local endpoints are looked up in.
	NetworkID string
	// NetworkName is its name: repairs, and Syncs after answers that
	// suggest it is gone, read the network by it and report a network
	// gone or replaced (network.go). "" checks nothing.
	NetworkName string
	Features    hnslb.Features
	// LearnBackendCap: when HNS refuses a load balancer of more than 64
	// backends with 0x57, retry at 64 and, if that works, report the cap
	// learned (backendcap.go). Off when an operator fixed the cap.
	LearnBackendCap bool
	// OSBuild is the node's Windows build as the daemon read it: a learned
	// cap is kept in the state file for this build and HNS version only
	// (backendcap.go).
	OSBuild hnslb.OSBuild
	// StateFile records the IDs hnsproxy created; "" disables persistence
	// (then every existing object is treated as foreign at Start).
	StateFile string
	// Takeover, when set and different from the token the state file
	// recorded, makes this Start a takeover (see foreign.go) and records it,
	// so a token takes over once. A Start without a usable state file is a
	// takeover whatever the token.
	Takeover string
	// StateWriteFailed, if set, is told of every failed state file write;
	// streakStart marks the first since the last success (raise an event
	// on those). It runs under the Reconciler's lock: it must not call it.
	StateWriteFailed func(err error, streakStart bool)
	// StateFileSynced, if set, is told of every fsync of the state file
	// (the journal's, a snapshot's) and how long it took, failed or not.
	// It runs under the Reconciler's lock: it must not call it.
	StateFileSynced func(took time.Duration)
	// RetryBase and RetryMax bound the per-object exponential backoff
	// (defaults DefaultRetryBase, DefaultRetryMax).
	RetryBase, RetryMax time.Duration
	// CallTimeout and ListTimeout are the deadlines of HNS calls on one
	// object and of listings; MaxAbandonedCalls bounds the calls left
	// running past their deadline (defaults in deadline.go).
	CallTimeout, ListTimeout time.Duration
	MaxAbandonedCalls        int
	// CallTimedOut, if set, is told of each HNS call abandoned at its
	// deadline, by operation (metrics' operation names).
	CallTimedOut func(op string)
	// StartupCalls, if set, are the start-up calls made through c before
	// New: their deadlines (and the calls they abandoned) are the
	// reconciler's, and the deadline settings above are theirs.
	StartupCalls *StartupCalls
	// Modify says when updates are HNS modifies (modify.go); "" is ModifyAuto.
	Modify ModifyMode
	// ModifyTurnedOff, if set, is told once when ModifyAuto turns modify
	// off for the rest of the process. It runs under the Reconciler's lock.
	ModifyTurnedOff func()
	// RemoteEndpointNames, if set, is told once whether HNS keeps the names
	// of remote endpoints (names.go), when a reply or listing first shows
	// it, and again if a later reply shows otherwise. It runs under the
	// Reconciler's lock.
	RemoteEndpointNames func(kept bool)
	// DriftRepaired, if set, is told of each owned object found changed or
	// gone behind hnsproxy's back (by a Repair, or by a write that met its
	// load balancer gone) and marked for the next Sync to put back. It runs
	// under the Reconciler's lock.
	DriftRepaired func(kind ObjectKind)
	// DeleteKept, if set, is told of each owned object a Repair still
	// listed after HNS reported its delete done (deleted.go); it is
	// deleted again. It runs under the Reconciler's lock.
	DeleteKept func(kind ObjectKind)
	// LoadBalancerRefused, if set, is told of each create, modify or delete
	// of a load balancer a key wants or wanted that HNS refused: not HNS
	// down or not answering, not a delete of one already gone, not a modify
	// HNS does not implement (refusals.go).
	// It runs at the end of the Sync after the call, under the Reconciler's
	// lock.
	LoadBalancerRefused func(LBRefusal)
	// Clock reads the time; the default is the real clock. If it is a
	// clock.Clock, HNS call deadlines use its timers too.
	Clock  clock.PassiveClock
	Logger klog.Logger // default: klog.Background()
}

// Reconciler converges HNS towards the desired load balancers and remote
// endpoints. All methods are safe for concurrent use. Sync and Start hold
// the lock while they talk to HNS; Repair lists HNS without it, so Syncs go
// on meanwhile (listing.go), and takes it to judge what it listed.
type Reconciler struct {
	// repairing orders Repairs; it is taken before mu, never while
	// holding it.
	repairing sync.Mutex
	mu        sync.Mutex
	client    *deadlines
	opts      Options
	// learnedCap is the backend cap HNS was found to enforce (0: none learned).
	learnedCap int
	log        klog.Logger
	clock      clock.PassiveClock
	limiter    workqueue.TypedRateLimiter[objectRef]
	// outage is open while HNS refuses calls as down (outage.go).
	outage outage
	// instance is the HNS service instance last seen (instance.go).
	instance instanceWatch
	// networkCheckAt is when a suspicion may next read the network (network.go).
	networkCheckAt time.Time
	// probeAt is when a Sync next reads a load balancer and an endpoint to
	// tell that they or the network went (probe.go).
	probeAt time.Time
	// probeGone is the last ID the probe reported gone (probe.go).
	probeGone string

	lbs map[intent.LBKey]*lbEntry
	eps map[string]*remoteEP // by IP

	dirtyLBs map[intent.LBKey]struct{}
	dirtyEPs map[string]struct{}
	retryLBs map[intent.LBKey]struct{} // objects with a nextRetry set
	retryEPs map[string]struct{}
	// repairWork is what repairs marked that no Sync took yet (repairwork.go).
	repairWork repairWork

	// localIndex maps a local (CNI) endpoint's IP to its HNS ID.
	localIndex map[string]string
	// recheck are indexed local addresses whose endpoint the next Sync
	// checks HNS still has (RecheckLocal).
	recheck map[string]struct{}
	// recheckAt is when a recheck HNS could not answer is asked again
	// (recheckRef's backoff); zero while none waits.
	recheckAt time.Time
	// unlisted are realized objects a repair's listing left out, which a
	// Sync reads by ID before taking them for vanished
	// (unlistedrealized.go).
	unlisted unlistedRealized
	// heldByOthers maps an address to an endpoint of another program's
	// that Start listed there (borrowedvip.go).
	heldByOthers map[string]othersEndpoint
	// resolveGen counts changes to what resolve reads (localIndex, and a
	// remote endpoint's wanted, spec, id and realizedSpec): a backend list
	// resolved for a create made ahead is reused at its turn only if
	// nothing changed since.
	resolveGen uint64
	// refs maps an HNS endpoint ID to the realized load balancers using it.
	refs map[string]lbUsers
	// waiting maps a backend IP to the load balancers that left it out at
	// their last attempt (lbEntry.missing), so its endpoint's creation
	// retries them at once.
	waiting map[string]map[intent.LBKey]struct{}

	// ownedLBs and ownedEPs are the IDs in the state file: created or
	// adopted by us, possibly still waiting for their deletion.
	ownedLBs, ownedEPs map[string]struct{}
	// unconfirmed are our objects whose delete HNS reported done, until a
	// listing shows them gone (deleted.go); the state file keeps them too.
	unconfirmed unconfirmedDeletes
	// baselines maps an owned load balancer ID to its baseline: what we
	// wrote and HNS echoed, fingerprinted (baseline.go).
	baselines map[string]string
	// sentUnknown are owned load balancer IDs (lower case) that came with
	// no baseline: claimed after a create hnsproxy did not live to record
	// (start.go, carried.go), whose document is not known (baseline.go).
	sentUnknown map[string]struct{}
	// sentSticky are such IDs claimed through a declaration that records a
	// sticky create, with its distribution (sentdecl.go).
	sentSticky map[string]hnslb.Distribution
	// unsavedBaselines are owned IDs whose baseline changed since the state
	// file recorded it; baselinesDue: a Repair ran since, write them.
	unsavedBaselines map[string]struct{}
	baselinesDue     bool
	// unsaved are the state changes not yet in the journal; journalLines
	// counts the journal's lines since the last snapshot.
	unsaved      []journalRecord
	journalLines int
	snapshotDue  bool // the next saveState writes a snapshot (Start's failed)
	appendFailed bool // the last append failed: the next save tries a snapshot
	unsynced     bool // writeState appended without an fsync since the last one
	// unsyncedWithdrawal: one of those appends withdrew a declaration, which
	// the next Sync's first state write makes durable (declareCreates).
	unsyncedWithdrawal bool
	// undurableDeclaration: a declaration was queued that no fsynced save
	// has held since; until one does, no key starts to stand (settleCreates).
	undurableDeclaration bool
	store                stateStore
	// creatingLBs and creatingEPs are the keys and IPs whose create may
	// have made an object whose ID we never recorded (a Sync under way, a
	// lost reply); they are saved before the creates (see declareCreates).
	creatingLBs map[intent.LBKey]struct{}
	creatingEPs map[string]struct{}
	// standingLBs are declared keys that stay declared after their create
	// settled (standing declarations, statefile.go): their later creates
	// need no declaration of their own.
	standingLBs map[intent.LBKey]struct{}
	// declaredSent is what the state file's declaration of a key (creating,
	// standing or carried) records its create sent (sentdecl.go).
	declaredSent map[intent.LBKey]string
	// carried are the declarations loaded at Start whose create may still
	// land (carried.go).
	carried carriedCreates
	// names is whether HNS has shown that it keeps remote endpoint names,
	// which then stand in for their declarations (names.go).
	names nameEcho

	// stale objects to delete: our own leftovers and foreign blockers.
	staleLBs, staleEPs map[string]*staleObj
	// failedLBs are the load balancer creates HNS refused, by partialSig,
	// whose leftover no listing has found and fewer than silentListings
	// have looked for (partial.go). The state file has them.
	failedLBs map[string]failedCreate
	failedSeq uint64
	// partialsOn are the frontends where the last listing that looked
	// found load balancers failed creates left (partial.go).
	partialsOn map[string]struct{}

	started bool
	// Between Start and the first Sync, objects listed at Start that no
	// desired object claimed yet; the first Sync deletes our own ones.
	orphanLBs map[intent.LBKey][]hnslb.LoadBalancer
	orphanEPs map[string]hnslb.Endpoint
	pruned    bool
	// takeover: this Start may adopt or delete foreign load balancers on
	// desired frontends, until the first Sync ends; takeoverToken is what
	// the state file records (foreign.go).
	takeover      bool
	takeoverToken string
	// foreignHeld maps desired frontends a foreign load balancer holds (one
	// hnsproxy may not remove) to its ID.
	foreignHeld map[intent.LBKey]string

	published publishedStatus // what StatusSnapshot returns, see snapshot.go

	// listing is set while a Repair lists HNS without the lock: what Syncs
	// change meanwhile (listing.go).
	listing *listingChanges
	// lookups are what Syncs asked of the next listing (lookup.go).
	lookups lookups

	// modifyTurnedOff: HNS showed it cannot modify (ModifyAuto);
	// modifyFailLogged: the first failure under ModifyEnabled was logged.
	modifyTurnedOff, modifyFailLogged bool
}

// objectRef names an object for the backoff rate limiter.
type objectRef struct {
	lb intent.LBKey
	ip string // remote endpoint
	id string // stale object
}

type lbEntry struct {
	key     intent.LBKey
	desired *intent.LB // nil: delete
	// realized is the document HNS holds under realizedID, as we wrote or adopted it.
	realizedID string
	realized   *hnslb.LoadBalancer
	missing    []string // backend IPs left out at the last attempt
	// uncertain is the document of a create whose reply was lost (HNS
	// unavailable, a timeout): HNS may hold it under an ID we never saw.
	uncertain *hnslb.LoadBalancer
	st        objStatus
	flushed   flushMark // what the status counted of it (snapshot.go)
	// origin is the last desired load balancer's, kept past its Delete for
	// the refusal of the delete (refusals.go).
	origin intent.Origin
	// realizedInDoubt: a write on the realized load balancer failed
	// without saying whether HNS applied it (writeUnknown), so HNS may
	// hold that write's document, or none, rather than realized.
	realizedInDoubt bool
}

type remoteEP struct {
	// wanted and spec are the desired endpoint as last given (UpsertEndpoint);
	// an unwanted one waits for its deletion.
	wanted bool
	// shadowed: a local endpoint holds the address of one wanted only
	// without (intent.RemoteEndpoint.UnlessLocal, nodeunknown.go), or
	// another program's endpoint holds the source VIP (borrowedvip.go).
	shadowed bool
	// flushed and flushedID: what the status counted of it, and the ID it
	// showed (snapshot.go); flushed sits in wanted's padding.
	flushed flushMark
	spec    intent.RemoteEndpoint
	// realized
	id           string
	realizedSpec intent.RemoteEndpoint
	// uncertain is the spec of a create whose reply was lost: HNS may hold
	// it under an ID we never saw, though spec has changed since (see
	// lbEntry.uncertain, lostEndpoint).
	uncertain *intent.RemoteEndpoint
	st        objStatus
	flushedID string
}

// desired reports whether HNS should hold it now.
func (e *remoteEP) desired() bool { return e.wanted && !e.shadowed }

// lbUsers are the realized load balancers using one endpoint, each once,
// in no order. A slice of entries, not a set: a pod backs about ten
// Services, and ten 8-byte pointers in an array take a fifth of the memory
// of a map of them (about 2.5 MB less at 10,000 Services) and are cheaper to
// add to. Removing one scans the slice, so dropping every user of an
// endpoint that n load balancers share costs about n²/4 pointer comparisons
// (25 million for one pod behind 10,000 Services). An entry outlives its
// realized load balancer, whose references dropRefs removes first.
type lbUsers []*lbEntry

// without returns u without e; the order is not kept.
func (u lbUsers) without(e *lbEntry) lbUsers {
	for i, x := range u {
		if x == e {
			last := len(u) - 1
			u[i] = u[last]
			u[last] = nil
			return u[:last]
		}
	}
	return u
}

type staleObj struct {
	reason string
	st     objStatus
	// network: an endpoint on a network hnsproxy no longer uses
	// (othernetwork.go), which no listing of its network shows.
	network string
	// quiet: its delete repeats one logged before (a delete HNS keeps
	// for good, deleted.go), so it is logged at --v=4.
	quiet bool
	// deferred: deleted only after the Sync's creates and updates and a
	// repair's work, at most maxUnlistedReads per Sync (unreadStale).
	deferred bool
}

// New returns a Reconciler; call Start before the first Sync.
func New(c hnslb.Client, o Options) *Reconciler {
	if o.RetryBase <= 0 {
		o.RetryBase = DefaultRetryBase
	}
	if o.RetryMax < o.RetryBase {
		o.RetryMax = max(DefaultRetryMax, o.RetryBase)
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	log := o.Logger
	if log.GetSink() == nil {
		log = klog.Background()
	}
	log = log.WithName("reconciler")
	client := newDeadlines(c, o, log)
	if o.StartupCalls != nil {
		client = o.StartupCalls.d
	}
	if client != nil {
		// The start-up calls' deadlines were made without it.
		client.refused.on = o.LoadBalancerRefused != nil
	}
	return &Reconciler{
		client:           client,
		opts:             o,
		log:              log,
		clock:            o.Clock,
		limiter:          workqueue.NewTypedItemExponentialFailureRateLimiter[objectRef](o.RetryBase, o.RetryMax),
		lbs:              map[intent.LBKey]*lbEntry{},
		eps:              map[string]*remoteEP{},
		dirtyLBs:         map[intent.LBKey]struct{}{},
		dirtyEPs:         map[string]struct{}{},
		repairWork:       repairWork{lbs: map[intent.LBKey]struct{}{}, eps: map[string]struct{}{}},
		retryLBs:         map[intent.LBKey]struct{}{},
		retryEPs:         map[string]struct{}{},
		localIndex:       map[string]string{},
		refs:             map[string]lbUsers{},
		waiting:          map[string]map[intent.LBKey]struct{}{},
		ownedLBs:         map[string]struct{}{},
		ownedEPs:         map[string]struct{}{},
		unconfirmed:      newUnconfirmedDeletes(),
		baselines:        map[string]string{},
		sentUnknown:      map[string]struct{}{},
		sentSticky:       map[string]hnslb.Distribution{},
		declaredSent:     map[intent.LBKey]string{},
		unsavedBaselines: map[string]struct{}{},
		creatingLBs:      map[intent.LBKey]struct{}{},
		creatingEPs:      map[string]struct{}{},
		standingLBs:      map[intent.LBKey]struct{}{},
		staleLBs:         map[string]*staleObj{},
		failedLBs:        map[string]failedCreate{},
		partialsOn:       map[string]struct{}{},
		staleEPs:         map[string]*staleObj{},
		foreignHeld:      map[intent.LBKey]string{},
		lookups:          newLookups(),
	}
}

// Upsert sets one desired load balancer. It marks the object for the next
// Sync only if it differs from the current desired state. The reconciler
// keeps lb's backend and spare slices as they are (a second copy of every
// backend was 5 MiB at 10,000 Services): the caller never changes them
// afterwards, as the desired state builds new ones for every change.
func (r *Reconciler) Upsert(lb intent.LB) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.lbs[lb.Key]
	if e != nil && e.desired != nil && intent.EqualLB(e.desired, &lb) {
		return
	}
	if e == nil {
		e = &lbEntry{key: lb.Key, st: objStatus{state: StatePending}}
		r.lbs[lb.Key] = e
	}
	r.restartBackoff(objectRef{lb: lb.Key}, &e.st)
	e.desired, e.origin = &lb, lb.Origin
	r.markLB(e)
	if r.adopting() {
		r.adoptLB(e)
	}
}

// Delete removes one desired load balancer; the next Sync deletes it from HNS.
func (r *Reconciler) Delete(key intent.LBKey) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.lbs[key]
	if e == nil || e.desired == nil {
		return
	}
	e.desired = nil
	r.restartBackoff(objectRef{lb: key}, &e.st)
	r.markLB(e)
}

// UpsertEndpoint sets one desired remote endpoint, as the desired state
// says it (the reconciler derives none from load balancer backends). A load
// balancer whose remote backend has no desired, realized endpoint leaves
// that backend out until it has one. Between Start and the first Sync,
// upsert a load balancer's remote endpoints before it, so that an identical
// load balancer already in HNS is adopted rather than replaced.
func (r *Reconciler) UpsertEndpoint(re intent.RemoteEndpoint) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ep := r.eps[re.IP]
	if ep != nil && ep.wanted && ep.spec == re {
		return
	}
	if ep == nil {
		ep = &remoteEP{st: objStatus{state: StatePending}}
		r.eps[re.IP] = ep
	}
	ep.wanted, ep.spec = true, re
	r.shadow(re.IP, ep)
	r.restartBackoff(objectRef{ip: re.IP}, &ep.st)
	r.resolveGen++
	r.markEP(re.IP)
	if r.adopting() {
		r.adoptEP(re.IP)
	}
}

// DeleteEndpoint removes one desired remote endpoint; the next Sync deletes
// it from HNS once no realized load balancer uses it. The load balancers
// using it are synced again, to leave it out if they still list it.
func (r *Reconciler) DeleteEndpoint(ip string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ep := r.eps[ip]
	if ep == nil || !ep.wanted {
		return
	}
	ep.wanted = false
	r.restartBackoff(objectRef{ip: ip}, &ep.st)
	r.resolveGen++
	r.markEP(ip)
	if ep.id != "" {
		for _, e := range r.refs[ep.id] {
			r.markLB(e)
		}
	}
}

// NextRetry is when the next Sync has work: now if something is dirty, else
// the earliest retry; false if nothing waits.
func (r *Reconciler) NextRetry() (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.dirtyLBs)+len(r.dirtyEPs)+r.repairWork.left() > 0 || r.client.returnedPending() {
		return r.clock.Now(), true
	}
	var next time.Time
	consider := func(t time.Time) {
		if !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	if r.outage.open {
		consider(r.outage.probeAt)
	}
	if at, ok := r.networkCheckDue(); ok {
		if !r.clock.Now().Before(at) {
			return r.clock.Now(), true
		}
		consider(at)
	}
	if len(r.recheck) > 0 {
		consider(r.recheckAt)
	}
	if r.unlisted.pending() {
		consider(r.unlisted.at)
	}
	for k := range r.retryLBs {
		consider(r.lbs[k].st.nextRetry)
	}
	for ip := range r.retryEPs {
		consider(r.eps[ip].st.nextRetry)
	}
	// Stale endpoints are tried once no stale load balancer is left.
	stale := r.staleLBs
	if len(stale) == 0 {
		stale = r.staleEPs
	}
	for _, s := range stale {
		if s.st.nextRetry.IsZero() {
			return r.clock.Now(), true
		}
		consider(s.st.nextRetry)
	}
	return next, !next.IsZero()
}

// status is e's status; it shares e's desired load balancer and missing
// backends, which are replaced, never changed in place.
func (e *lbEntry) status() Status {
	s := Status{
		Key:             e.key,
		Desired:         e.desired,
		RealizedID:      e.realizedID,
		State:           e.st.state,
		LastError:       e.st.errString(),
		Attempts:        e.st.attempts,
		NextRetry:       e.st.nextRetry,
		MissingBackends: e.missing,
	}
	if e.desired != nil {
		s.Owner = e.desired.Owner
	}
	return s
}

func (r *Reconciler) endpointStatusOf(ep *remoteEP) EndpointStatus {
	return EndpointStatus{
		Endpoint: ep.spec, Desired: ep.desired(), RealizedUsers: len(r.refs[ep.id]),
		ShadowedBy: r.shadowedBy(ep.spec.IP, ep),
		RealizedID: ep.id, State: ep.st.state, LastError: ep.st.errString(),
		Attempts: ep.st.attempts, NextRetry: ep.st.nextRetry,
	}
}

func (r *Reconciler) markLB(e *lbEntry) {
	r.dirtyLBs[e.key] = struct{}{}
	r.repairWork.handedLB(e.key)
	r.published.changed.lb(e.key)
	if e.st.state == StateDone {
		e.st.state = StatePending
	}
}

func (r *Reconciler) markEP(ip string) {
	r.dirtyEPs[ip] = struct{}{}
	r.repairWork.handedEP(ip)
	r.published.changed.ep(ip)
	if ep := r.eps[ip]; ep != nil && ep.st.state == StateDone {
		ep.st.state = StatePending
	}
}

// setRealized records that HNS holds doc under id for e; echo is what HNS
// answered for it (a create's or modify's reply, or a listing), nil if
// nothing, and becomes its baseline (baseline.go).
func (r *Reconciler) setRealized(e *lbEntry, id string, doc, echo *hnslb.LoadBalancer) {
	if e.realizedID != id {
		r.clearRealized(e)
	} else {
		r.dropRefs(e) // modified in place: same ID, same ownership
	}
	e.realizedID, e.realized, e.uncertain, e.realizedInDoubt = id, doc, nil, false
	r.forgetLB(e.key) // realized: nothing left to look up
	delete(r.lookups.unseen, e.key)
	r.dropStale(r.staleLBs, id) // adopted for its key: no longer to be deleted
	r.published.changed.lb(e.key)
	for _, epID := range doc.HostComputeEndpoints {
		r.published.usersChanged(epID)
		u := r.refs[epID]
		// e is in no list yet (dropped above), so a repeat within this
		// document is the last one added.
		if n := len(u); n > 0 && u[n-1] == e {
			continue
		}
		r.refs[epID] = append(u, e)
	}
	r.ownLB(id, doc, echo)
}

// clearRealized forgets e's realized load balancer: vanished, or deleted
// (deleteLB recorded the delete first, so the disown is then a no-op).
func (r *Reconciler) clearRealized(e *lbEntry) {
	if e.realizedID == "" {
		return
	}
	r.dropRefs(e)
	r.disown(recordLoadBalancer, e.realizedID)
	e.realizedID, e.realized, e.realizedInDoubt = "", nil, false
	r.published.changed.lb(e.key)
}

// dropRefs removes e's realized load balancer from the endpoint references.
func (r *Reconciler) dropRefs(e *lbEntry) {
	if e.realized == nil {
		return
	}
	for _, epID := range e.realized.HostComputeEndpoints {
		r.published.usersChanged(epID)
		if u := r.refs[epID].without(e); len(u) > 0 {
			r.refs[epID] = u
		} else {
			delete(r.refs, epID)
		}
	}
}

// own records an HNS object of kind (recordLoadBalancer or
// recordRemoteEndpoint) as hnsproxy's, for the state file's journal.
func (r *Reconciler) own(kind recordKind, id string) {
	delete(r.unconfirmed.byID, id) // in use again
	delete(r.unconfirmed.keptLogged, id)
	if set := r.ownedSet(kind); addNew(set, id) {
		r.journal(journalRecord{Add: true, Kind: kind, ID: id})
		r.listing.noteOwned(id)
	}
}

func (r *Reconciler) disown(kind recordKind, id string) {
	delete(r.unconfirmed.keptLogged, id) // gone: HNS keeping it again is news
	if r.dropOwned(kind, id) {
		r.journal(journalRecord{Kind: kind, ID: id})
	}
}

// dropOwned forgets that id is owned, in memory only, and reports whether
// it was.
func (r *Reconciler) dropOwned(kind recordKind, id string) bool {
	set := r.ownedSet(kind)
	if _, ok := set[id]; !ok {
		return false
	}
	delete(set, id)
	delete(r.baselines, id)
	delete(r.unsavedBaselines, id)
	delete(r.sentUnknown, strings.ToLower(id))
	delete(r.sentSticky, strings.ToLower(id))
	return true
}

// driftFound reports an object of kind found drifted (Options.DriftRepaired).
func (r *Reconciler) driftFound(kind ObjectKind) {
	if r.opts.DriftRepaired != nil {
		r.opts.DriftRepaired(kind)
	}
}

func (r *Reconciler) ownedSet(kind recordKind) map[string]struct{} {
	switch kind {
	case recordLoadBalancer:
		return r.ownedLBs
	case recordRemoteEndpoint:
		return r.ownedEPs
	}
	return nil
}
