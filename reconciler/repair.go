package reconciler

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

// Repair lists HNS (load balancers and the network's endpoints) and marks
// for the next Sync every object that drifted behind our back:
//   - a realized load balancer or remote endpoint that vanished is forgotten
//     (and recreated by Sync), as are the load balancers that used a vanished
//     endpoint;
//   - a realized load balancer whose listing differs from its baseline (what
//     HNS answered when we wrote it, baseline.go), or that uses an endpoint
//     ID HNS no longer has (a pod recreated by the CNI), is updated;
//   - load balancers that left backends out are retried if the refreshed
//     local endpoint index now knows them;
//   - owned IDs HNS no longer has are dropped from the state file, and owned
//     objects no desired object uses are deleted (leaks).
//
// If listing fails nothing changes: unavailable HNS is never "not found".
//
// The listing runs without the lock (listing.go), so a change programmed
// meanwhile is not held back; what Syncs touched during the listing, or what
// an abandoned HNS call may still change (deadline.go), is not judged by
// this repair but by the next one.
func (r *Reconciler) Repair(ctx context.Context) error {
	r.repairing.Lock()
	defer r.repairing.Unlock()
	r.mu.Lock()
	if !r.started {
		r.mu.Unlock()
		return errors.New("reconciler: Repair before Start")
	}
	r.listing = newListingChanges()
	indexBefore := maps.Clone(r.localIndex)
	listedFrom := r.clock.Now()
	r.mu.Unlock()

	lbs, eps, err := r.listForRepair(ctx)

	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flushStatusLocked()
	changed := r.listing
	r.listing = nil
	if err != nil {
		return err
	}
	r.claimCarried(lbs, eps, listedFrom)
	lbByID := make(map[string]*hnslb.LoadBalancer, len(lbs))
	for i := range lbs {
		lbByID[lbs[i].ID] = &lbs[i]
	}
	epByID := make(map[string]*hnslb.Endpoint, len(eps))
	for i := range eps {
		epByID[eps[i].ID] = &eps[i]
	}
	r.localIndex = keepIndexChanges(localIndexOf(eps), indexBefore, r.localIndex)

	usedEPs := map[string]struct{}{}
	for ip, ep := range r.eps {
		if ep.id == "" {
			continue
		}
		if changed.touchedEP(ip) || r.client.busy(epToken(ip), idToken(ep.id)) {
			usedEPs[ep.id] = struct{}{} // not judged: the listing may predate its change
			continue
		}
		if epByID[ep.id] == nil {
			r.log.Info("Remote endpoint vanished from HNS; recreating it", "ip", ip, "id", ep.id)
			for k := range r.refs[ep.id] {
				r.markLB(r.lbs[k])
			}
			r.disown(recordRemoteEndpoint, ep.id)
			ep.id, ep.realizedSpec = "", intent.RemoteEndpoint{}
			r.markEP(ip)
			continue
		}
		usedEPs[ep.id] = struct{}{}
	}
	usedLBs := map[string]struct{}{}
	for _, e := range r.lbs {
		if !changed.touchedLB(e.key) && !r.client.busy(lbToken(e.key), idToken(e.realizedID)) {
			r.repairLB(e, lbByID, epByID)
		}
		if e.realizedID != "" {
			usedLBs[e.realizedID] = struct{}{}
		}
	}
	// Until the first Sync, owned objects may still be claimed by Upserts.
	if r.pruned {
		r.repairOwned(recordLoadBalancer, usedLBs, r.staleLBs, changed, func(id string) bool { return lbByID[id] != nil })
		r.repairOwned(recordRemoteEndpoint, usedEPs, r.staleEPs, changed, func(id string) bool { return epByID[id] != nil })
	}
	// Baselines changed by modifies and adoptions go to the state file
	// with the next Sync.
	r.baselinesDue = len(r.unsavedBaselines) > 0
	return nil
}

// listForRepair lists load balancers and the network's endpoints; called
// without the lock.
func (r *Reconciler) listForRepair(ctx context.Context) ([]hnslb.LoadBalancer, []hnslb.Endpoint, error) {
	lbs, err := r.client.ListLoadBalancers(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("repair: list load balancers: %w", err)
	}
	eps, err := r.client.ListEndpointsOfNetwork(ctx, r.opts.NetworkID)
	if err != nil {
		return nil, nil, fmt.Errorf("repair: list endpoints of network %q: %w", r.opts.NetworkID, err)
	}
	return lbs, eps, nil
}

func (r *Reconciler) repairLB(e *lbEntry, lbByID map[string]*hnslb.LoadBalancer, epByID map[string]*hnslb.Endpoint) {
	if e.realizedID != "" {
		got := lbByID[e.realizedID]
		switch {
		case got == nil:
			r.log.Info("Load balancer vanished from HNS; recreating it", "key", e.key, "id", e.realizedID)
			r.clearRealized(e)
			r.markLB(e)
			return
		case !r.unchanged(e.realized, got):
			r.log.Info("Load balancer differs in HNS; repairing it", "key", e.key, "id", e.realizedID)
			r.setRealized(e, e.realizedID, got, nil)
			r.markLB(e)
			return
		}
		if _, ok := r.baselines[e.realizedID]; !ok {
			// No baseline (a write answered with no document): the listing
			// adoptionMatch accepted becomes it.
			r.ownLB(e.realizedID, e.realized, got)
		}
		for _, id := range got.HostComputeEndpoints {
			if epByID[id] == nil {
				r.log.V(2).Info("Load balancer uses a vanished endpoint; repairing it", "key", e.key, "endpoint", id)
				r.markLB(e)
				return
			}
		}
	}
	for _, ip := range e.missing {
		if r.localIndex[ip] != "" {
			r.markLB(e)
			return
		}
	}
}

// repairOwned drops owned IDs HNS no longer has, and marks owned objects
// that nothing uses (and that are not being deleted already) as stale. IDs
// that became ours during the listing, or that an abandoned call may still
// change, are left for the next repair.
func (r *Reconciler) repairOwned(kind recordKind, used map[string]struct{}, stale map[string]*staleObj, changed *listingChanges, exists func(string) bool) {
	for id := range r.ownedSet(kind) {
		if changed.touchedID(id) || r.client.busy(idToken(id)) {
			continue
		}
		switch _, inUse := used[id]; {
		case !exists(id):
			r.disown(kind, id)
			delete(stale, id)
		case !inUse && stale[id] == nil:
			r.log.Info("Owned HNS object is used by nothing; deleting it", "id", id)
			stale[id] = &staleObj{reason: "ours, leaked"}
		}
	}
}
