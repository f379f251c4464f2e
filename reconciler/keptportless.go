package reconciler

import (
	"slices"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

// A load balancer without port mappings that a failed create of
// hnsproxy's left may hold its frontend unseen (sim's
// PartialHoldsFrontend). hnsproxy claims and deletes it, and HNS may
// report that delete done and keep it (deleted.go). The lookup that
// answered the refused create was made before that delete, and the answer
// is kept: without more, the next refusal would be reported as a frontend
// no load balancer holds, telling the operator to restart HNS or delete by
// hand what is hnsproxy's own, until the next periodic repair (with
// --drift-repair-period=0, for good). So an answer remembers hnsproxy's
// own load balancers without port mappings it showed on the frontend; a
// create refused again after one of them was deleted asks a new listing,
// once;
// and a listing that shows one whose delete is unconfirmed on an asked
// frontend owns it again and marks it stale, so the next Sync deletes it
// before it creates, as a repair would.

// ownPortlessOn are the IDs of the load balancers without port mappings
// listed shows on k's VIP that are hnsproxy's: left by its failed creates
// (claimed by this listing), owned, or deleted without confirmation. Those
// deleted are owned again and marked stale, unless an abandoned call still
// holds them. Called with the lock held.
func (r *Reconciler) ownPortlessOn(listed *listedHNS, k intent.LBKey) []string {
	var ours []string
	for _, doc := range listed.partials {
		if slices.Contains(portlessVIPs(doc), canonicalIP(k.VIP)) {
			ours = append(ours, doc.ID)
		}
	}
	for _, id := range listed.portlessOn[canonicalIP(k.VIP)] {
		if !r.oursLB(id) {
			continue
		}
		ours = append(ours, id)
		if r.unconfirmed.has(id) && r.staleLBs[id] == nil && !r.client.busy(idToken(id)) {
			r.log.Info("HNS still lists a load balancer without port mappings it reported deleted, on a frontend it refuses; deleting it again", "id", id, "frontend", k)
			r.deleteKept(KindLoadBalancer)
			r.own(recordLoadBalancer, id)
			r.staleLBs[id] = &staleObj{reason: "ours, kept by HNS after its delete"}
		}
	}
	return ours
}

// portlessVIPs are the VIPs a load balancer without port mappings is
// noted on (listedHNS.portlessOn): "" for none.
func portlessVIPs(doc *hnslb.LoadBalancer) []string {
	if len(doc.FrontendVIPs) == 0 {
		return []string{""}
	}
	vips := make([]string, len(doc.FrontendVIPs))
	for i, v := range doc.FrontendVIPs {
		vips[i] = canonicalIP(v)
	}
	return vips
}

// recheckAfterDelete asks k's frontend lookup again, once, when HNS
// refused k's create after a listing answered that no load balancer holds
// the frontend and hnsproxy then deleted one of its own load balancers
// without port mappings that answer showed there: HNS may have kept it.
// Not a third time: where HNS refuses the frontend for good and leaves a
// new one at each refusal, each answer would show another to delete, and
// the create would wait for listings without end. Called with the lock
// held.
func (r *Reconciler) recheckAfterDelete(k intent.LBKey) bool {
	l := r.lookups.lbs[k]
	if l == nil || l.recheck || !slices.ContainsFunc(l.ours, func(id string) bool {
		u, ok := r.unconfirmed.byID[id]
		return ok && u.seq > l.answeredAt
	}) {
		return false
	}
	r.askRefused(k)
	r.lookups.lbs[k].recheck, r.lookups.lbs[k].looks = true, l.looks
	return true
}

// withoutIDs is ids without those in drop.
func withoutIDs(ids, drop []string) []string {
	if len(drop) == 0 {
		return ids
	}
	return slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return slices.Contains(drop, id) })
}
