package reconciler

import (
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

// A create whose reply was lost is settled by a listing begun after it
// (resolveUncertainLB). But one listing's silence is not proof
// (unlisted.go): where the listing left out what the create made, it was
// taken for not made and forgotten, the retry's create was refused on the
// frontend it held, and the refusal's listing showed it as nobody's. On a
// frontend a tenant chose it was then another agent's for good, the
// Service held off its own load balancer, which lost its backends as their
// pods went (the fault soak: ws2022, overlay, seed 14, an external IP). So
// the document such a listing did not show is kept (unseen) while its
// load balancer is desired and not realized: a holder the refusal finds
// that the create could have made is taken as its own (unseenMade). And
// where the load balancer is no longer desired, nothing else would look
// again, so silentListings listings look before it is taken for not made.

// keepUnseen keeps e's lost create, which a listing did not show, while e
// is desired and not realized; e is no longer uncertain.
func (r *Reconciler) keepUnseen(e *lbEntry) {
	if e.desired != nil {
		r.lookups.unseen[e.key] = e.uncertain
	}
	e.uncertain = nil
}

// unseenAgain makes e's kept lost create uncertain again once e is no
// longer desired, so that it is looked for before e is forgotten
// (lookAgainForLost). A desired one without backends keeps it: looked for
// at each of its Syncs, it would ask a listing at each.
func (r *Reconciler) unseenAgain(e *lbEntry) {
	sent := r.lookups.unseen[e.key]
	if sent == nil || e.desired != nil {
		return
	}
	if e.uncertain == nil {
		e.uncertain = sent
	}
	delete(r.lookups.unseen, e.key)
}

// lookAgainForLost asks e's lost create's lookup again where e is no
// longer desired and fewer than silentListings listings have shown
// nothing: asked is the lookup answered now.
func (r *Reconciler) lookAgainForLost(e *lbEntry, asked *lbLookup) bool {
	if e.desired != nil || asked == nil || asked.looks+1 >= silentListings {
		return false
	}
	r.lookups.lbs[e.key] = &lbLookup{purpose: lookupLostCreate, asked: r.lookups.listings, looks: asked.looks + 1}
	return true
}

// unseenMade reports whether blocker, holding k's frontend, is what k's
// lost create made, which a listing did not show: nobody's, and of the
// document sent, or of it less backends HNS dropped since.
func (r *Reconciler) unseenMade(k intent.LBKey, blocker *hnslb.LoadBalancer) bool {
	sent := r.lookups.unseen[k]
	if sent == nil || r.oursLB(blocker.ID) {
		return false
	}
	return r.unchanged(sent, r.distributionUnechoed(blocker, sent)) || madeLessDropped(blocker, sent)
}
