package reconciler

import (
	"slices"
	"strings"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// Deletes HNS reported done. HNS has answered remote endpoints' deletes
// with success and listed them still (microsoft/Windows-Containers#631, at
// a high pod churn); whether it does so with load balancers too, and
// whether a kept object leaves later on its own, is not known. A kept
// object does more harm than a failed delete, which is retried: a remote
// endpoint kept holds its address, so the next remote endpoint for that
// pod IP (reused on another node) is refused as taken; a load balancer kept
// holds its frontend, and its rules still send the old Service's traffic.
//
// So a delete's success ends the object's use, not hnsproxy's claim on
// it: the object is no longer owned, but recorded here, and in the state
// file (its removal's journal record marked unconfirmed), until a Repair
// begun after the delete settles it. Left out of silentListings such
// listings, it is forgotten (one listing's silence is not proof,
// unlisted.go: a kept object one left out was forgotten, and stayed in
// HNS, nobody's, for good); still listed, it is logged, counted (Options.DeleteKept),
// owned again and deleted again like any owned object nothing uses. Until then a lookup that finds
// it holding a frontend or an address hnsproxy wants treats it as its own
// (oursLB, createEP), and a restart counts it as owned: deleted by the
// first Sync if HNS still has it.
//
// Nothing but a listing confirms a delete, so with the periodic repair off
// (--drift-repair-period=0) the record would grow with every delete. It is
// bounded: past as many entries as there are desired objects (at least
// minUnconfirmed) the oldest are forgotten unconfirmed, as every delete was
// before.

// minUnconfirmed is the fewest unconfirmed deletes kept for a repair.
const minUnconfirmed = 4096

// unconfirmedDeletes are the IDs of our objects HNS reported deleted, by
// ID, with their order of deletion for forgetting the oldest.
type unconfirmedDeletes struct {
	byID map[string]unconfirmedDelete
	// order is oldest first; an entry whose seq is not its ID's in byID
	// (settled, or deleted again since) is skipped.
	order []orderedDelete
	seq   uint64
	// keptLogged are the objects a Repair found kept and logged at the
	// default verbosity, until one is gone or in use again: one HNS never
	// lets go of is found again at every repair, and said again only at
	// --v=4 (with hundreds kept, two lines each per repair said nothing new).
	keptLogged map[string]struct{}
}

type unconfirmedDelete struct {
	kind recordKind
	seq  uint64
	// unlisted counts the Repairs' listings that did not show it.
	unlisted int
}

type orderedDelete struct {
	id  string
	seq uint64
}

func newUnconfirmedDeletes() unconfirmedDeletes {
	return unconfirmedDeletes{byID: map[string]unconfirmedDelete{}, keptLogged: map[string]struct{}{}}
}

func (d *unconfirmedDeletes) has(id string) bool { _, ok := d.byID[id]; return ok }

// ids are the recorded IDs of kind, for a snapshot.
func (d *unconfirmedDeletes) ids(kind recordKind) []string {
	var out []string
	for id, u := range d.byID {
		if u.kind == kind {
			out = append(out, id)
		}
	}
	return out
}

// afterDelete records the outcome of a delete of id, of kind, that did not
// fail: err is nil (HNS reported it done: deleted) or HNS's "not found".
// A not-found code that names the object's own kind (goneOnDelete) says it
// was gone already: disowned, nothing to confirm. One that names another
// kind (a load balancer's delete answered "endpoint not found", a backend
// of it perhaps) does not say the object went: it is recorded as a delete
// reported done, for the next Repair to confirm, or it would be disowned
// while HNS kept it, a foreign object on its frontend or address for good.
func (r *Reconciler) afterDelete(kind recordKind, id string, err error) {
	if err != nil && goneOnDelete(kind, err) {
		r.disown(kind, id)
		r.forgetDeleted(id)
		return
	}
	r.deleted(kind, id)
}

// goneOnDelete reports a delete's "not found" that names the deleted
// object itself: ERROR_NOT_FOUND, what HNS answers an unknown ID (as
// kube-proxy reads it, hcn.IsElementNotFoundError), and for a remote
// endpoint HCN_E_ENDPOINT_NOT_FOUND too.
func goneOnDelete(kind recordKind, err error) bool {
	code, _ := hnslb.CodeOf(err)
	return code == hnslb.CodeNotFound || kind == recordRemoteEndpoint && code == hnslb.CodeEndpointNotFound
}

// deleted records that HNS reported the delete of id, of kind, done: an
// object of ours is disowned and kept for the next Repair to confirm. A
// foreign one (a load balancer that blocked a frontend) is not recorded.
func (r *Reconciler) deleted(kind recordKind, id string) {
	if r.dropOwned(kind, id) || r.unconfirmed.has(id) {
		r.unconfirmedDelete(kind, id)
	}
}

// unconfirmedDelete records id, an object of ours HNS reported deleted, for
// the next Repair to confirm; its journal record disowns it too. A listing
// under way does not judge it: it may have listed it before the delete.
func (r *Reconciler) unconfirmedDelete(kind recordKind, id string) {
	d := &r.unconfirmed
	d.seq++
	d.byID[id] = unconfirmedDelete{kind: kind, seq: d.seq}
	d.order = append(d.order, orderedDelete{id: id, seq: d.seq})
	r.journal(journalRecord{Kind: kind, ID: id, Unconfirmed: true})
	r.listing.noteOwned(id)
	r.forgetOldestDeletes()
}

// forgetDeleted drops id from the record in memory. The state file is not
// told: a record of a delete that is confirmed or forgotten claims an
// object that is gone, which a restart's listing does not show, and the
// next snapshot leaves it out. So a Repair after thousands of deletes (at
// 10,000 Services on ws2022 every update deletes) writes nothing for them.
func (r *Reconciler) forgetDeleted(id string) {
	delete(r.unconfirmed.byID, id)
	delete(r.unconfirmed.keptLogged, id)
}

// forgetOldestDeletes forgets the oldest deletes past the bound, and drops
// the order's skipped entries once they outnumber the rest.
func (r *Reconciler) forgetOldestDeletes() {
	d := &r.unconfirmed
	limit := max(minUnconfirmed, len(r.lbs)+len(r.eps))
	for len(d.byID) > limit {
		o := d.order[0]
		d.order = d.order[1:]
		if u, ok := d.byID[o.id]; ok && u.seq == o.seq {
			r.forgetDeleted(o.id)
		}
	}
	if len(d.order) > 2*len(d.byID)+minUnconfirmed {
		kept := d.order[:0]
		for _, o := range d.order {
			if u, ok := d.byID[o.id]; ok && u.seq == o.seq {
				kept = append(kept, o)
			}
		}
		clear(d.order[len(kept):])
		d.order = kept
	}
}

// settleDeletes judges, by a Repair's listing, the deletes made before it
// began: one left out of silentListings listings is forgotten; a listed one HNS kept is owned again
// and, unless a lookup's answer handed it to an object, marked stale for
// the next Sync to delete. Deletes made during the listing (touched), or
// whose object an abandoned call held during it, wait for the next.
func (r *Reconciler) settleDeletes(listed *listedHNS, changed *listingChanges, handed map[string]struct{}) {
	for id, u := range r.unconfirmed.byID {
		if changed.touchedID(id) || r.unjudged(changed, idToken(id)) {
			continue
		}
		kind, exists, stale := KindLoadBalancer, listed.hasLB, r.staleLBs
		if u.kind == recordRemoteEndpoint {
			kind, exists, stale = KindRemoteEndpoint, listed.hasEP, r.staleEPs
		}
		if !exists(id) {
			if u.unlisted++; u.unlisted < silentListings {
				r.unconfirmed.byID[id] = u
			} else {
				r.forgetDeleted(id)
			}
			continue
		}
		_, logged := r.unconfirmed.keptLogged[id]
		log := r.log
		if logged {
			log = log.V(4)
		}
		log.Info("HNS still lists an object it reported deleted; deleting it again", "kind", kind, "id", id)
		r.deleteKept(kind)
		r.own(u.kind, id) // its record both owns it and ends the unconfirmed one
		if _, ok := handed[id]; !ok {
			r.unconfirmed.keptLogged[id] = struct{}{}
			stale[id] = &staleObj{reason: "ours, kept by HNS after its delete", quiet: logged}
		}
	}
}

// deleteKept reports an object of kind HNS kept after reporting its delete
// done (Options.DeleteKept).
func (r *Reconciler) deleteKept(kind ObjectKind) {
	if r.opts.DeleteKept != nil {
		r.opts.DeleteKept(kind)
	}
}

// oursLB reports whether the load balancer id is ours: owned, or deleted
// and not confirmed gone.
func (r *Reconciler) oursLB(id string) bool {
	_, owned := r.ownedLBs[id]
	return owned || r.unconfirmed.has(id)
}

// unusedEPOfOurs reports whether the endpoint id is ours (owned, or deleted
// and not confirmed gone) and no realized load balancer uses it.
func (r *Reconciler) unusedEPOfOurs(id string) bool {
	_, owned := r.ownedEPs[id]
	return (owned || r.unconfirmed.has(id)) && len(r.refs[id]) == 0
}

// ownedLBs and ownedEPs are what a state file says hnsproxy owns, for Start,
// Cleanup and ReadOwned: the owned IDs and the deletes no listing has
// confirmed, whose objects HNS may have kept.
func (s *stateFile) ownedLBs() []string {
	return slices.Concat(s.LoadBalancers, s.DeletedLoadBalancers)
}

func (s *stateFile) ownedEPs() []string {
	return slices.Concat(s.RemoteEndpoints, s.DeletedRemoteEndpoints)
}

// keptBeforeStart reports the objects whose deletes the state file had not
// confirmed that Start's listing still shows: HNS kept them. Start owns
// them, so the first Sync deletes them unless a desired object adopts one.
func (r *Reconciler) keptBeforeStart(s *stateFile, lbs []hnslb.LoadBalancer, eps []hnslb.Endpoint) {
	if len(s.DeletedLoadBalancers)+len(s.DeletedRemoteEndpoints) == 0 {
		return
	}
	deletedLB, deletedEP := foldedSet(s.DeletedLoadBalancers), foldedSet(s.DeletedRemoteEndpoints)
	kept := func(kind ObjectKind, id string) {
		r.log.Info("HNS still lists an object it reported deleted before this start; deleting it again", "kind", kind, "id", id)
		r.deleteKept(kind)
	}
	for _, lb := range lbs {
		if has(deletedLB, strings.ToLower(lb.ID)) {
			kept(KindLoadBalancer, lb.ID)
		}
	}
	for _, ep := range eps {
		if has(deletedEP, strings.ToLower(ep.ID)) {
			kept(KindRemoteEndpoint, ep.ID)
		}
	}
}
