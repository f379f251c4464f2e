package healthcheck

import (
	"time"

	v1 "k8s.io/api/core/v1"
)

// Liveness is not health. /healthz turns unhealthy when queued changes are
// not synced in time, a sync that only met HNS unreachable not counting.
// /livez answers whether hnsproxy itself is alive: its sync loop
// finishes syncs, whatever HNS said, or is waiting on an HNS call that has a
// deadline, or saw one end lately. A hung HNS is not a dead hnsproxy, and
// restarting the pod would not unhang HNS.

// HNSActivity tells whether the reconciler waits on HNS now (for a sync,
// or for the drift repair's listing), and when an HNS call last returned or
// was abandoned at its deadline (reconciler.Reconciler has it).
type HNSActivity interface {
	HNSActivity() (waiting bool, lastEnded time.Time)
}

// SetHNSActivity makes /livez count the sync loop's HNS calls as signs of
// life.
func (hs *ProxyHealthServer) SetHNSActivity(a HNSActivity) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.hns = a
}

// SyncRan records that a sync of family finished, whether or not HNS took
// its changes: the loop is alive.
func (hs *ProxyHealthServer) SyncRan(family v1.IPFamily) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	delete(hs.oldestUnrun, family)
	delete(hs.starting, family)
}

// Liveness is /livez's answer: a family is dead once a change has waited
// healthTimeout without a sync finishing, while the loop was not waiting on
// HNS and no HNS call ended within healthTimeout either. Until the loop
// finishes its first sync the family is starting (waiting for the caches,
// the Node's addresses, the reconciler's start), hence alive.
func (hs *ProxyHealthServer) Liveness() ProxyHealth {
	h := hs.Health()
	hs.mu.RLock()
	defer hs.mu.RUnlock()
	busyWithHNS := false
	if hs.hns != nil {
		waiting, lastEnded := hs.hns.HNSActivity()
		busyWithHNS = waiting || h.CurrentTime.Sub(lastEnded) < hs.healthTimeout
	}
	h.Healthy = true
	for family, st := range h.Status {
		queued, unrun := hs.oldestUnrun[family]
		st.Healthy = !unrun || hs.starting[family] || busyWithHNS || h.CurrentTime.Sub(queued) < hs.healthTimeout
		h.Healthy = h.Healthy && st.Healthy
		h.Status[family] = st
	}
	return h
}
