package reconciler

import (
	"sync"
	"sync/atomic"
)

// StatusSnapshot is the reconciler's status as it stood when its last Start,
// Sync or Repair returned. Readers get it without the lock Sync holds while
// it talks to HNS, so a debug page never waits behind a slow sync. It is
// shared: readers must not modify it.
type StatusSnapshot struct {
	LoadBalancers   []Status         // sorted by key
	RemoteEndpoints []EndpointStatus // sorted by IP
}

// publishedStatus holds the latest StatusSnapshot. (Not to be confused
// with the state file's snapshot, see journal.go.)
type publishedStatus struct {
	// publishing orders publishers, so a later publish never stores an
	// older view than an earlier one did.
	publishing sync.Mutex
	latest     atomic.Pointer[StatusSnapshot]
}

var emptyStatus = &StatusSnapshot{}

// StatusSnapshot returns the status published by the last Start, Sync or Repair
// (empty before the first); it never takes the reconciler's lock. Upsert
// and Delete do not publish: that rebuilds every status, once per changed
// Service port in a burst, and the Sync right after them publishes anyway.
func (r *Reconciler) StatusSnapshot() *StatusSnapshot {
	if s := r.published.latest.Load(); s != nil {
		return s
	}
	return emptyStatus
}

// publish stores a fresh StatusSnapshot. It takes the reconciler's lock (through
// Statuses and EndpointStatuses), so Start, Sync and Repair defer it before
// their deferred unlock: it runs after the unlock. The two lists are read
// one after the other; an Upsert in between shows in the second only.
func (r *Reconciler) publish() {
	r.published.publishing.Lock()
	defer r.published.publishing.Unlock()
	r.published.latest.Store(&StatusSnapshot{LoadBalancers: r.Statuses(), RemoteEndpoints: r.EndpointStatuses()})
}
