package reconciler

import (
	"fmt"
	"slices"

	"github.com/hnsproxy/hnsproxy/intent"
)

// Foreign load balancers on desired frontends. HNS objects carry no owner
// tag, so ownership is the state file's; a load balancer not in it is
// foreign. hnsproxy adopts (identical) or deletes (any other) a foreign load
// balancer only where a desired frontend needs its place, and only when
//   - this Start is a takeover (no usable state file, or a new
//     Options.Takeover token), until the end of the first Sync; or
//   - the apiserver allocated the frontend (a cluster IP or node port,
//     unique among Services), so a foreign holder can only be a leftover.
//
// A frontend a tenant or a controller chose (an external IP, an ingress IP)
// never removes a foreign load balancer outside a takeover: it is reported
// (SyncResult.ForeignHeld, a ForeignFrontendError status) and retried.
// See docs/reliability.md, "Frontend ownership".

// ForeignFrontendError is the status of a desired load balancer whose
// frontend a foreign load balancer holds and hnsproxy may not remove.
type ForeignFrontendError struct {
	Key    intent.LBKey
	ID     string // the foreign load balancer
	Origin intent.Origin
}

func (e *ForeignFrontendError) Error() string {
	return fmt.Sprintf("frontend %s (%s) is held by load balancer %s, which hnsproxy does not own and will not delete for a frontend it did not allocate; remove it, or restart hnsproxy with a new --takeover token",
		e.Key, e.Origin, e.ID)
}

// findHeldFrontends looks, before a Sync declares its creates, for foreign
// load balancers on the frontends it is about to create for the first time
// where hnsproxy may not take foreign ones (new external or ingress IPs). A
// frontend found held is recorded as such and never declared, so a Sync
// interrupted after declaring it cannot make the next Start claim the
// foreign one as ours. Only a listing shows it (lookup.go): a frontend not
// checked by one yet is returned and waits for it, and the Sync goes on.
func (r *Reconciler) findHeldFrontends(run *syncRun) (unchecked map[intent.LBKey]struct{}) {
	if r.opts.StateFile == "" {
		return nil
	}
	for k := range run.lbs {
		e := r.lbs[k]
		if e == nil || e.desired == nil || e.realizedID != "" || e.uncertain != nil || r.foreignHeld[k] != "" || r.mayTakeForeign(e.desired) {
			continue
		}
		if _, declared := r.creatingLBs[k]; declared {
			continue // checked when it was declared
		}
		l := r.frontendLookup(k)
		if !l.answered {
			if unchecked == nil {
				unchecked = map[intent.LBKey]struct{}{}
			}
			unchecked[k] = struct{}{}
			continue
		}
		if l.holder != nil {
			if !r.oursLB(l.holder.ID) && !r.claimCarriedLB(run.ctx, k, l.holder) && !r.unseenMade(k, l.holder) {
				r.foreignHeld[k] = l.holder.ID
			}
		}
	}
	return unchecked
}

// ForeignFrontend is one desired frontend held by a foreign load balancer.
type ForeignFrontend struct {
	Key intent.LBKey
	ID  string
}

// mayTakeForeign reports whether a foreign load balancer on d's frontend
// may be adopted or deleted (see above).
func (r *Reconciler) mayTakeForeign(d *intent.LB) bool {
	return r.takeover || d != nil && d.Origin.Allocated()
}

// foreignHeldList is SyncResult.ForeignHeld: every frontend held now, by key.
func (r *Reconciler) foreignHeldList() []ForeignFrontend {
	if len(r.foreignHeld) == 0 {
		return nil
	}
	out := make([]ForeignFrontend, 0, len(r.foreignHeld))
	for k, id := range r.foreignHeld {
		out = append(out, ForeignFrontend{Key: k, ID: id})
	}
	slices.SortFunc(out, func(a, b ForeignFrontend) int { return intent.CompareLBKeys(a.Key, b.Key) })
	return out
}
