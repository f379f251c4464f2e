package reconciler

import "strings"

// A pod's endpoint is the CNI's: hnsproxy finds it through listings (the
// network's, the namespaces') and keeps it in the local index. A drift
// repair's listing, or a lookup's, that left out one HNS holds dropped it
// from the index, and its load balancers were written without the pod
// (deleted, the pod their only backend) until a listing showed it again;
// the repair also counted them as drift. One listing's silence is not a
// delete (unlisted.go): an address indexed as the listing began, unchanged
// by Syncs meanwhile, that the listing left out stays indexed and is
// rechecked by ID at the next Sync (RecheckLocal's get, dropGoneRechecked),
// which drops it and processes its load balancers if HNS no longer has it.
// A pod deleted with its endpoint costs that one get, and its load
// balancers are written a Sync later than a listing's word would have them.

// takeListedIndex makes the local endpoints a listing found the index,
// keeping what Syncs changed while it listed (keepIndexChanges), and
// keeping for a recheck the addresses indexed before that the listing left
// out; the load balancers of the addresses that moved are marked
// (localsMoved).
func (r *Reconciler) takeListedIndex(listed, before map[string]string) {
	moved := r.indexChanging()
	next := keepIndexChanges(listed, before, r.localIndex)
	for ip, id := range before {
		if _, ok := next[ip]; ok || r.localIndex[ip] != id {
			continue
		}
		next[ip] = id
		if r.recheck == nil {
			r.recheck = map[string]struct{}{}
		}
		r.recheck[ip] = struct{}{}
		r.recheckAt = r.clock.Now()
	}
	r.localIndex = next
	r.resolveGen++
	r.localsMoved(nil, moved)
}

// rechecking reports whether the local endpoint id waits for its recheck:
// no listing's silence tells it gone.
func (r *Reconciler) rechecking(id string) bool {
	for ip := range r.recheck {
		if strings.EqualFold(r.localIndex[ip], id) {
			return true
		}
	}
	return false
}
