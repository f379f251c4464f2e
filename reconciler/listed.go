package reconciler

import (
	"maps"
	"slices"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

// What a Repair keeps of its listing. At 10,000 Services the listing is some
// 20,000 HNS documents; held whole, with the reply they were decoded from,
// they raised the heap (and the collector's goal, twice the live heap) by
// about 25 MB while a repair ran. So each document is judged as it arrives
// (hnslb.Walker) and dropped: a load balancer that matches its baseline
// leaves only its ID, an endpoint only its ID (and, if local, its place in
// the local index). The few documents that need the full judging under the
// lock (drifted, without a baseline, not ours) are kept.

// listedHNS is a Repair's listing.
type listedHNS struct {
	lbs   map[string]listedLB // by ID
	eps   map[string]struct{} // endpoint IDs
	local map[string]string   // the local endpoint index the listing shows
	// atStart is, by ID, the realized load balancers and their baselines
	// when the listing began, which the listed documents are judged against.
	atStart map[string]realizedAt
	// carriedIPs are the carried remote endpoint IPs as the listing began
	// (carried.go), and carriedEPs the listed remote endpoints on them, IP
	// by ID: claimCarried's to judge.
	carriedIPs map[string]struct{}
	carriedEPs map[string]string
	// named is whether to keep namedEPs: while Start's carrying lasts, the
	// listed remote endpoints that bear our name (names.go), claimCarried's
	// to judge too. Nearly all are owned; a slice costs them least.
	named    bool
	namedEPs []listedEP
	// askedIPs are the addresses lookups asked about as the listing began,
	// and asked the listed endpoints with them, kept whole (lookup.go).
	askedIPs map[string]struct{}
	asked    map[string][]*hnslb.Endpoint
	// askedKeys are the frontends lookups asked about as a Lookup's listing
	// began: it keeps only the load balancers on them (addAskedLB).
	askedKeys map[intent.LBKey]struct{}
	// lbsListed and epsListed say what was listed: a Lookup lists only what
	// its questions need, and only those are answered.
	lbsListed, epsListed bool
	// partialSigs are the failed creates' signatures as the listing began,
	// partialMark their mark, and partials the listed load balancers
	// without port mappings that show one (partial.go).
	partialSigs partialMatcher
	partialMark uint64
	partials    []*hnslb.LoadBalancer
	// localBefore is the local endpoint index as the listing began, and
	// onLocal the listed remote endpoints on its addresses
	// (sharedaddress.go).
	localBefore map[string]string
	onLocal     []listedEP
	// portlessOn are the listed load balancers without port mappings, by
	// frontend VIP ("" for those without one): what a refused frontend's
	// answer names (lookup.go).
	portlessOn map[string][]string
}

// listedEP is a listed endpoint's ID and address.
type listedEP struct{ id, ip string }

// realizedAt is a realized load balancer as a listing began.
type realizedAt struct {
	id       string
	doc      *hnslb.LoadBalancer
	baseline string
}

// listedLB is one listed load balancer: doc, or if it matched its baseline
// and holds exactly the backends we wrote, nil and what it matched.
type listedLB struct {
	doc     *hnslb.LoadBalancer
	matched realizedAt
}

// newListedHNS starts a listing; called with the lock held.
func (r *Reconciler) newListedHNS() *listedHNS {
	at := make(map[string]realizedAt, len(r.baselines))
	for _, e := range r.lbs {
		if b, ok := r.baselines[e.realizedID]; ok && e.realized != nil {
			at[e.realizedID] = realizedAt{id: e.realizedID, doc: e.realized, baseline: b}
		}
	}
	l := &listedHNS{lbs: make(map[string]listedLB, len(at)), eps: map[string]struct{}{}, local: map[string]string{}, atStart: at,
		carriedIPs: maps.Clone(r.carried.eps), carriedEPs: map[string]string{}, named: r.carried.named,
		askedIPs: r.lookups.addressesAsked(), asked: map[string][]*hnslb.Endpoint{}, lbsListed: true, epsListed: true}
	l.partialSigs, l.partialMark = r.failuresToLookFor()
	return l
}

// addLB judges a listed load balancer against what was realized as the
// listing began; without the lock.
func (l *listedHNS) addLB(doc *hnslb.LoadBalancer) error {
	if w, ok := l.atStart[doc.ID]; ok && sameIDs(w.doc.HostComputeEndpoints, doc.HostComputeEndpoints) &&
		fingerprint(w.doc, doc) == w.baseline {
		l.lbs[w.id] = listedLB{matched: w} // w.id: the string we hold already
		return nil
	}
	l.lbs[doc.ID] = listedLB{doc: doc}
	l.notePartial(doc)
	return nil
}

// addAskedLB keeps a listed load balancer if a lookup asked about its
// frontend; without the lock.
func (l *listedHNS) addAskedLB(doc *hnslb.LoadBalancer) error {
	if k, ok := KeyOf(doc); ok && has(l.askedKeys, k) {
		l.lbs[doc.ID] = listedLB{doc: doc}
	}
	l.notePartial(doc)
	return nil
}

// addEP records a listed endpoint; without the lock.
func (l *listedHNS) addEP(ep *hnslb.Endpoint) error {
	l.eps[ep.ID] = struct{}{}
	if len(l.askedIPs) > 0 && has(l.askedIPs, ep.IP()) {
		l.asked[ep.IP()] = append(l.asked[ep.IP()], ep)
	}
	if !ep.IsRemote() {
		indexLocal(l.local, ep)
		return nil
	}
	if has(l.carriedIPs, ep.IP()) {
		l.carriedEPs[ep.ID] = ep.IP()
	}
	l.keepOnLocalAddress(ep)
	if l.named && namedOurs(ep) {
		l.namedEPs = append(l.namedEPs, listedEP{ep.ID, ep.IP()})
	}
	return nil
}

// unchangedSinceStart reports whether l, a load balancer that matched,
// matched what e holds now: the same document under the same baseline.
func (l listedLB) unchangedSinceStart(e *lbEntry, baselines map[string]string) bool {
	return l.matched.doc == e.realized && baselines[e.realizedID] == l.matched.baseline
}

// sameIDs reports whether two ID lists hold the same IDs, exactly spelt.
func sameIDs(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	if slices.Equal(a, b) {
		return true
	}
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}

func (l *listedHNS) hasLB(id string) bool { _, ok := l.lbs[id]; return ok }
func (l *listedHNS) hasEP(id string) bool { _, ok := l.eps[id]; return ok }
