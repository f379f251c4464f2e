package reconciler

import (
	"context"
	"fmt"
	"maps"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

// Lookup lists, without the lock, only what the lookups asked so far need
// (load balancers, the network's endpoints, or both), and answers them
// (lookup.go). It judges no drift: a new tenant frontend at 10,000 Services
// waits for a listing of load balancers, about 30,000 hcn calls, not for a
// drift repair's 90,000. Repair answers lookups too. A Sync whose
// ListingWanted is set asks for one. Failed creates piled up (partial.go)
// have it list load balancers, which looks for what they left.
func (r *Reconciler) Lookup(ctx context.Context) error {
	listingNo, err := r.beginListing("Lookup")
	if err != nil {
		return err
	}
	defer r.repairing.Unlock()
	listed := &listedHNS{lbs: map[string]listedLB{}, eps: map[string]struct{}{}, local: map[string]string{},
		askedIPs: r.lookups.addressesAsked(), asked: map[string][]*hnslb.Endpoint{}}
	// Answered lookups kept for later (foreign.go, createLB) are answered
	// again by a listing made for others; alone they ask for none.
	if unanswered(r.lookups.lbs, func(l *lbLookup) bool { return l.answered }) || r.failuresPiledUp() {
		listed.askedKeys = make(map[intent.LBKey]struct{}, len(r.lookups.lbs))
		for k := range r.lookups.lbs {
			listed.askedKeys[k] = struct{}{}
		}
	}
	if listed.askedKeys != nil {
		listed.partialSigs, listed.partialMark = r.failuresToLookFor()
	}
	listEPs := len(r.lookups.local) > 0 || unanswered(r.lookups.eps, func(l *epLookup) bool { return l.answered })
	var indexBefore map[string]string
	if listEPs {
		indexBefore = maps.Clone(r.localIndex)
	}
	r.mu.Unlock()

	listed.lbsListed, listed.epsListed = listed.askedKeys != nil, listEPs
	if listed.lbsListed {
		if err := r.client.WalkLoadBalancers(ctx, listed.addAskedLB); err != nil {
			return fmt.Errorf("lookup: list load balancers: %w", err)
		}
	}
	if listEPs {
		if err := r.client.WalkEndpointsOfNetwork(ctx, r.opts.NetworkID, listed.addEP); err != nil {
			return fmt.Errorf("lookup: list endpoints of network %q: %w", r.opts.NetworkID, err)
		}
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flushStatusLocked()
	if listEPs {
		r.takeListedIndex(listed.local, indexBefore)
		r.markFoundLocals()
	}
	if listed.lbsListed {
		r.claimPartials(listed, false)
	}
	r.answerLookups(listed, listingNo)
	return nil
}

// unanswered reports whether a lookup of m is not answered yet.
func unanswered[K comparable, L any](m map[K]L, answered func(L) bool) bool {
	for _, l := range m {
		if !answered(l) {
			return true
		}
	}
	return false
}

// beginListing starts a listing (Repair, Lookup): it takes repairing, which
// the caller releases when it is done, and the lock, which the caller
// releases before listing, and numbers it (lookup.go). Before Start it
// takes neither and fails.
func (r *Reconciler) beginListing(what string) (listingNo uint64, err error) {
	r.repairing.Lock()
	r.mu.Lock()
	if !r.started {
		r.mu.Unlock()
		r.repairing.Unlock()
		return 0, fmt.Errorf("reconciler: %s before Start", what)
	}
	r.lookups.listings++
	return r.lookups.listings, nil
}

// markFoundLocals marks the load balancers that left out a local backend
// the index now has.
func (r *Reconciler) markFoundLocals() {
	for ip, keys := range r.waiting {
		if r.localIndex[ip] == "" {
			continue
		}
		for k := range keys {
			if e := r.lbs[k]; e != nil {
				r.markLB(e)
			}
		}
	}
}
