package reconciler

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// CleanupResult is what Cleanup removed, and what it could not.
type CleanupResult struct {
	DeletedLoadBalancers, DeletedEndpoints int
	// Failed are the owned objects whose delete failed; the state file
	// still names them, so running Cleanup again finishes the job.
	Failed []ObjectError
	// StateRemoved says the state file and its journal are gone.
	StateRemoved bool
}

// Cleanup is hnsproxy's --cleanup: it deletes from HNS every load balancer
// and endpoint the state file says hnsproxy owns (those it created or
// adopted, its remote endpoints and overlay source VIP endpoint, and what an
// interrupted create declared, and the load balancers without port mappings
// its failed creates left, partial.go), and nothing else: a foreign object, or a
// CNI's endpoint, is never touched. Listings after confirm the deletes. Load balancers go first, since they
// reference the endpoints. Once all are gone, the state file and its
// journal are removed; if a delete fails, the state file is rewritten with
// what is left and the error names each failure. It needs neither the
// network (it may run after the CNI removed it) nor a desired state, and
// stands for Start: the Reconciler is not used afterwards. Its calls have
// the reconciler's deadlines: under a hung HNS it fails, naming what is
// left, rather than waiting for good. A state file holding what only a
// newer hnsproxy reads is refused with ErrNewerStateFile before anything
// is deleted, and left as it is (newerstate.go).
func Cleanup(ctx context.Context, c hnslb.Client, o Options) (CleanupResult, error) {
	var res CleanupResult
	if o.StateFile == "" {
		return res, errors.New("cleanup: no state file, so hnsproxy cannot tell its HNS objects from others'")
	}
	if c == nil {
		return res, errors.New("cleanup: no HNS client")
	}
	r := New(c, o)
	if err := refuseNewer(r.stateFS(), o.StateFile); err != nil {
		return res, err
	}
	owned, err := r.loadOwned()
	if err != nil {
		return res, err
	}
	// Kept in the snapshot a partial cleanup writes, for the next Start.
	r.takeover, r.takeoverToken = owned.fresh || owned.TakeoverPending, owned.Takeover
	// Through the reconciler's deadlines: a hung HNS fails the cleanup
	// (run it again) instead of holding it for good.
	hns := r.client
	lbs, err := hns.ListLoadBalancers(ctx)
	if err != nil {
		return res, fmt.Errorf("cleanup: list load balancers: %w", err)
	}
	eps, err := hns.ListEndpoints(ctx)
	if err != nil {
		return res, fmt.Errorf("cleanup: list endpoints: %w", err)
	}
	// Folded, as Start matches them: HNS may answer GUIDs in either case,
	// and claimInterrupted adds them folded.
	ownedLB, ownedEP := foldedSet(owned.ownedLBs()), foldedSet(owned.ownedEPs())
	claimInterrupted(r.log, owned, lbs, eps, ownedLB, ownedEP)
	left, _ := leftByFailedCreates(owned.FailedLoadBalancerCreates, lbs)
	for _, doc := range left {
		r.log.Info("Cleanup: a load balancer a failed create left without port mappings is hnsproxy's", "id", doc.ID)
		ownedLB[strings.ToLower(doc.ID)] = struct{}{}
	}

	// The listed objects it owns are deleted, and so is each owned ID the
	// listing left out: nearly always HNS no longer has it (its delete
	// answers "not found", and nothing is counted), but a listing may leave
	// out one HNS holds (unlisted.go), which the state file's removal would
	// otherwise leave in HNS for good. An endpoint a remaining listed load
	// balancer uses (one whose delete failed, or a foreign one) is kept:
	// deleting it would break that one.
	inUse := map[string]string{} // endpoint ID → a load balancer using it
	var deletedLBs, deletedEPs []string
	for _, lb := range lbs {
		if _, ours := ownedLB[strings.ToLower(lb.ID)]; ours && r.cleanupOne(&res, KindLoadBalancer, lb.ID, hns.DeleteLoadBalancer(ctx, lb.ID), recordLoadBalancer) {
			res.DeletedLoadBalancers++
			deletedLBs = append(deletedLBs, lb.ID)
			continue
		}
		for _, id := range lb.HostComputeEndpoints {
			inUse[strings.ToLower(id)] = lb.ID
		}
	}
	for _, id := range leftOutOf(owned.ownedLBs(), lbs, lbID) {
		if err := hns.DeleteLoadBalancer(ctx, id); !hnslb.IsNotFound(err) && r.cleanupOne(&res, KindLoadBalancer, id, err, recordLoadBalancer) {
			res.DeletedLoadBalancers++
			deletedLBs = append(deletedLBs, id)
		}
	}
	deleteEP := func(id string) error {
		if lbID, used := inUse[strings.ToLower(id)]; used {
			return fmt.Errorf("kept: load balancer %s still uses it", lbID)
		}
		return hns.DeleteEndpoint(ctx, id)
	}
	for _, ep := range eps {
		if _, ours := ownedEP[strings.ToLower(ep.ID)]; ours && r.cleanupOne(&res, KindRemoteEndpoint, ep.ID, deleteEP(ep.ID), recordRemoteEndpoint) {
			res.DeletedEndpoints++
			deletedEPs = append(deletedEPs, ep.ID)
		}
	}
	for _, id := range leftOutOf(owned.ownedEPs(), eps, epID) {
		if err := deleteEP(id); !hnslb.IsNotFound(err) && r.cleanupOne(&res, KindRemoteEndpoint, id, err, recordRemoteEndpoint) {
			res.DeletedEndpoints++
			deletedEPs = append(deletedEPs, id)
		}
	}
	r.confirmCleanup(ctx, &res, deletedLBs, deletedEPs)

	if len(res.Failed) > 0 {
		// The failed ones stay owned, nothing else does.
		r.snapshotDue = true
		if err := r.compactState(); err != nil {
			r.log.Error(err, "Writing hnsproxy state file failed", "path", o.StateFile)
		}
		errs := make([]error, len(res.Failed))
		for i := range res.Failed {
			errs[i] = res.Failed[i]
		}
		return res, fmt.Errorf("cleanup: %d objects could not be deleted (run it again): %w", len(res.Failed), errors.Join(errs...))
	}
	removeFailed := func(name string, err error) error {
		return fmt.Errorf("cleanup: every owned HNS object is deleted, but removing %s failed: %w", name, err)
	}
	if err := r.retireJournal(journalPath(o.StateFile)); err != nil {
		return res, removeFailed(journalPath(o.StateFile), err)
	}
	if err := r.stateFS().Remove(o.StateFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return res, removeFailed(o.StateFile, err)
	}
	res.StateRemoved = true
	return res, nil
}

// confirmCleanup lists HNS again after Cleanup's deletes: HNS has reported
// deletes done and kept the objects (deleted.go). One a listing still
// shows, or all of them if a listing fails, counts as a failure and stays
// owned, so the state file is kept for the next run. One listing's silence
// is not proof (unlisted.go), so silentListings listings look, fewer once
// each object has been shown.
func (r *Reconciler) confirmCleanup(ctx context.Context, res *CleanupResult, lbIDs, epIDs []string) {
	deleted := foldedSet(slices.Concat(lbIDs, epIDs))
	shown := map[string]struct{}{}
	var err error
	for look := 0; look < silentListings && len(shown) < len(deleted) && err == nil; look++ {
		var lbs []hnslb.LoadBalancer
		var eps []hnslb.Endpoint
		if lbs, err = r.client.ListLoadBalancers(ctx); err == nil {
			eps, err = r.client.ListEndpoints(ctx)
		}
		for i := range lbs {
			noteShown(deleted, shown, lbs[i].ID)
		}
		for i := range eps {
			noteShown(deleted, shown, eps[i].ID)
		}
	}
	unconfirmed := func(kind ObjectKind, owned recordKind, id string, count *int) {
		why := errors.New("HNS reported the delete done but still lists the object (microsoft/Windows-Containers#631)")
		if _, listed := shown[strings.ToLower(id)]; !listed && err != nil {
			why = fmt.Errorf("HNS reported the delete done; listing HNS to confirm it failed: %w", err)
		} else if !listed {
			return
		}
		r.log.Error(why, "Cleanup: an HNS object may be left", "kind", kind, "id", id)
		res.Failed = append(res.Failed, ObjectError{Kind: kind, Name: id, Err: why})
		r.own(owned, id)
		*count--
	}
	for _, id := range lbIDs {
		unconfirmed(KindLoadBalancer, recordLoadBalancer, id, &res.DeletedLoadBalancers)
	}
	for _, id := range epIDs {
		unconfirmed(KindRemoteEndpoint, recordRemoteEndpoint, id, &res.DeletedEndpoints)
	}
}

// noteShown adds id to shown, folded, if it is one of deleted.
func noteShown(deleted, shown map[string]struct{}, id string) {
	if id = strings.ToLower(id); has(deleted, id) {
		shown[id] = struct{}{}
	}
}

// cleanupOne records the outcome of one owned object's delete: gone (HNS's
// not-found included), or a failure that keeps it owned.
func (r *Reconciler) cleanupOne(res *CleanupResult, kind ObjectKind, id string, err error, owned recordKind) bool {
	if err != nil && !hnslb.IsNotFound(err) {
		r.log.Error(err, "Cleanup: could not delete HNS object", "kind", kind, "id", id)
		res.Failed = append(res.Failed, ObjectError{Kind: kind, Name: id, Err: err})
		r.own(owned, id)
		return false
	}
	r.log.Info("Cleanup: deleted HNS object", "kind", kind, "id", id)
	return true
}
