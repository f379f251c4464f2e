package reconciler

import (
	"sync"
	"sync/atomic"
	"time"
)

// StatusSnapshot is the reconciler's status at one moment. Readers get one
// without waiting for the lock Sync holds while it talks to HNS, so a debug
// page never waits behind a slow sync. It is shared: readers must not
// modify it.
type StatusSnapshot struct {
	LoadBalancers   []Status         // sorted by key
	RemoteEndpoints []EndpointStatus // sorted by IP
	// LearnedBackendCap is the backend cap HNS was found to enforce (0: none; backendcap.go).
	LearnedBackendCap int
}

// statusRefresh bounds how old a published snapshot may grow while syncs
// run and nobody reads it: building one walks every object, which the
// incremental path must not pay on each Sync (at 20,000 load balancers it
// costs more than the Sync itself).
const statusRefresh = 10 * time.Second

// publishedStatus holds the latest StatusSnapshot. (Not to be confused
// with the state file's snapshot, see journal.go.)
type publishedStatus struct {
	// publishing orders publishers, so a later publish never stores an
	// older view than an earlier one did.
	publishing sync.Mutex
	latest     atomic.Pointer[StatusSnapshot]
	at         atomic.Int64 // when latest was built (UnixNano, the reconciler's clock)
	// wanted: a reader met a sync in progress and got the last snapshot;
	// that Sync publishes a fresh one when it ends.
	wanted atomic.Bool
}

var emptyStatus = &StatusSnapshot{}

// StatusSnapshot returns the current status when no Start, Sync or Repair
// is under way, and otherwise, without waiting, the last one published (by
// an earlier read, by Start or Repair, or by a Sync at most statusRefresh
// before); the Sync under way then publishes when it ends, so a reader that
// asks again after it sees its outcome. Read during a sync, the status is
// thus at most statusRefresh older than the last completed Sync.
func (r *Reconciler) StatusSnapshot() *StatusSnapshot {
	if r.published.publishing.TryLock() {
		defer r.published.publishing.Unlock()
		if r.mu.TryLock() {
			s := r.snapshotLocked()
			r.mu.Unlock()
			r.storeStatus(s)
			return s
		}
	}
	r.published.wanted.Store(true)
	if s := r.published.latest.Load(); s != nil {
		return s
	}
	return emptyStatus
}

// publish stores a fresh StatusSnapshot. It takes the reconciler's lock, so
// Start and Repair defer it before their deferred unlock: it runs after the
// unlock.
func (r *Reconciler) publish() {
	r.published.publishing.Lock()
	defer r.published.publishing.Unlock()
	r.mu.Lock()
	s := r.snapshotLocked()
	r.mu.Unlock()
	r.storeStatus(s)
}

// publishIfDue publishes after a Sync when a reader asked during it or the
// last snapshot is older than statusRefresh.
func (r *Reconciler) publishIfDue() {
	age := time.Duration(r.clock.Now().UnixNano() - r.published.at.Load())
	if r.published.wanted.Swap(false) || age >= statusRefresh {
		r.publish()
	}
}

func (r *Reconciler) snapshotLocked() *StatusSnapshot {
	return &StatusSnapshot{LoadBalancers: r.statusesLocked(), RemoteEndpoints: r.endpointStatusesLocked(), LearnedBackendCap: r.learnedCap}
}

// storeStatus publishes s; callers hold published.publishing.
func (r *Reconciler) storeStatus(s *StatusSnapshot) {
	r.published.latest.Store(s)
	r.published.at.Store(r.clock.Now().UnixNano())
}
