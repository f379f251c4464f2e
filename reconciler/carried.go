package reconciler

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

// carriedWindowCalls is how many HNS call deadlines a declaration found
// empty at Start is carried: an hcn call abandoned at its deadline keeps
// running in HNS after its caller died, so its create may land after the
// restart listed HNS (found by the fault soak: HNS writes hung for 15 s,
// the deadline 10 s, hnsproxy killed meanwhile). Six deadlines (a minute by
// default) cover such a hang several times over; the first drift repair
// after them ends the carrying, which bounds the time in which a foreign
// load balancer made on a tenant's frontend that hnsproxy had been
// creating could be taken for the late one.
const carriedWindowCalls = 6

// carriedCreates are the declarations (declareCreates) the state file held
// at Start that found nothing in Start's listing: their create may still
// land. They stay in the state file, so that another restart inside the
// window carries them again, until the first drift repair whose listing
// began after until; every repair before that claims what landed on them
// (claimCarried).
type carriedCreates struct {
	lbs map[intent.LBKey]struct{}
	eps map[string]struct{}
	// named: remote endpoints nobody owns that bear our name (names.go)
	// are taken for late creates too; a create made where HNS keeps names
	// is not declared, so this holds after every Start.
	named bool
	until time.Time
}

// carryDeclarations keeps the loaded declarations no listed object
// answers: a key with no listed load balancer, an IP with no listed remote
// endpoint.
func (r *Reconciler) carryDeclarations(st *stateFile, lbs []hnslb.LoadBalancer, eps []hnslb.Endpoint) {
	c := carriedCreates{lbs: map[intent.LBKey]struct{}{}, eps: map[string]struct{}{}, named: true,
		until: r.clock.Now().Add(carriedWindowCalls * r.client.call)}
	sent := st.sentOf()
	for _, k := range st.CreatingLoadBalancers {
		c.lbs[k] = struct{}{}
	}
	for _, ip := range st.CreatingRemoteEndpoints {
		c.eps[ip] = struct{}{}
	}
	for i := range lbs {
		if k, ok := KeyOf(&lbs[i]); ok {
			delete(c.lbs, k)
		}
	}
	for i := range eps {
		if eps[i].IsRemote() {
			delete(c.eps, eps[i].IP())
		}
	}
	for k := range c.lbs {
		if d, ok := sent[k]; ok {
			r.declaredSent[k] = d // its record stays with it
		}
	}
	if len(c.lbs)+len(c.eps) > 0 {
		r.log.Info("Carrying declared creates that found nothing: a create abandoned before the restart may still land",
			"loadBalancers", len(c.lbs), "remoteEndpoints", len(c.eps), "until", c.until)
	}
	r.carried = c
}

// claimCarried takes as ours the listed objects nobody owns on a carried
// key or IP, and the listed remote endpoints nobody owns that bear our
// name: the late creates of a process that is gone. A drift repair then
// deletes them if nothing wants them, and a desired load balancer on a
// claimed frontend is synced again. A named endpoint whose address or ID a
// Sync touched during the listing is left alone: the listing may show this
// process's own create. A repair whose listing began after the window ends
// the carrying.
func (r *Reconciler) claimCarried(ctx context.Context, listed *listedHNS, listedFrom time.Time, changed *listingChanges) {
	if len(r.carried.lbs)+len(r.carried.eps) == 0 && !r.carried.named {
		return
	}
	var ownedEP map[string]struct{} // case-folded, made at the first ID not owned as spelt
	ownsEP := func(id string) bool {
		if has(r.ownedEPs, id) || r.unconfirmed.has(id) { // deleted: the repair judges it
			return true
		}
		if ownedEP == nil {
			ownedEP = foldedSet(slices.Collect(maps.Keys(r.ownedEPs)))
		}
		return has(ownedEP, strings.ToLower(id))
	}
	claimEP := func(id, ip string) {
		r.log.Info("Claiming a remote endpoint a create abandoned before the restart made", "ip", ip, "id", id)
		r.own(recordRemoteEndpoint, id)
		if ownedEP != nil {
			ownedEP[strings.ToLower(id)] = struct{}{}
		}
		if ep := r.eps[ip]; ep != nil && ep.desired() {
			r.markEP(ip)
		}
	}
	for id, ip := range listed.carriedEPs {
		if !ownsEP(id) && has(r.carried.eps, ip) {
			claimEP(id, ip)
		}
	}
	for _, l := range listed.namedEPs {
		if ownsEP(l.id) || changed.touchedEP(l.ip) || changed.touchedID(l.id) || r.unjudged(changed, epToken(l.ip), idToken(l.id)) {
			continue
		}
		if ep := r.eps[l.ip]; ep != nil && ep.id != "" {
			continue // the address's endpoint is realized: not a late create to take
		}
		claimEP(l.id, l.ip)
	}
	// After the endpoints: a late load balancer may use a late endpoint.
	if len(r.carried.lbs) > 0 {
		r.claimCarriedLBs(ctx, listed, changed)
	}
	if listedFrom.After(r.carried.until) {
		r.dropCarried()
	}
}

// claimCarriedLBs takes the listed load balancers nobody owns on a
// carried key, and those without port mappings on a carried key's VIP
// (claimCarriedPortless).
func (r *Reconciler) claimCarriedLBs(ctx context.Context, listed *listedHNS, changed *listingChanges) {
	ownedLB := foldedSet(slices.Collect(maps.Keys(r.ownedLBs)))
	var carriedVIPs map[string]struct{} // made at the first load balancer without port mappings
	for id, l := range listed.lbs {
		if l.doc == nil { // matched a realized one's baseline: ours
			continue
		}
		if _, mine := ownedLB[strings.ToLower(id)]; mine || r.unconfirmed.has(id) {
			continue
		}
		k, ok := KeyOf(l.doc)
		if !ok && len(l.doc.PortMappings) == 0 {
			if carriedVIPs == nil {
				carriedVIPs = r.carriedVIPsAtRest(changed)
			}
			r.claimCarriedPortless(ctx, l.doc, carriedVIPs)
			continue
		}
		if !ok || !has(r.carried.lbs, k) {
			continue
		}
		if !r.claimCarriedLB(ctx, k, l.doc) {
			continue
		}
		delete(r.foreignHeld, k)
		if e := r.lbs[k]; e != nil && e.desired != nil {
			r.markLB(e)
		}
	}
}

// claimCarriedPortless takes doc, a load balancer without port mappings
// nobody owns, for what a failed create of the process that is gone left,
// due for deletion, where each of its VIPs is a carried key's and it can
// be that process's create (mayBeLateCreate): Start claims such a one by
// the declarations it loaded (claimInterrupted), but one its listing left
// out was nobody's for good where the failure's record was lost too (the
// process stopped before writing it), and, holding its frontend, kept the
// Service off it (the fault soak: ws2019 and l2bridge, seed 11, a create
// that timed out just before the network was replaced).
func (r *Reconciler) claimCarriedPortless(ctx context.Context, doc *hnslb.LoadBalancer, carriedVIPs map[string]struct{}) {
	if r.staleLBs[doc.ID] != nil || !portlessOnDeclared(doc, carriedVIPs) || !r.mayBeLateCreate(ctx, doc) {
		return
	}
	r.claimPartial(doc, false)
}

// carriedVIPsAtRest are the VIPs of the carried keys on which no create
// of this process may have run during the listing: none a Sync processed
// then, and none an abandoned call holds. HNS's create is not known to be
// atomic (a failed one can leave a load balancer without port mappings),
// so a listing may show one of this process's creates part made.
func (r *Reconciler) carriedVIPsAtRest(changed *listingChanges) map[string]struct{} {
	vips := declaredVIPsOf(r.carried.lbs)
	for k := range changed.lbs {
		delete(vips, canonicalIP(k.VIP))
	}
	for k := range r.lbs {
		if has(vips, canonicalIP(k.VIP)) && r.unjudged(changed, lbToken(k)) {
			delete(vips, canonicalIP(k.VIP))
		}
	}
	return vips
}

// claimCarriedLB takes doc, a load balancer nobody owns on key, as ours if
// key is carried and doc can be the late create (carried.go).
func (r *Reconciler) claimCarriedLB(ctx context.Context, key intent.LBKey, doc *hnslb.LoadBalancer) bool {
	if !has(r.carried.lbs, key) || !r.mayBeLateCreate(ctx, doc) {
		return false
	}
	r.log.Info("Claiming a load balancer a create abandoned before the restart made", "key", key, "id", doc.ID)
	r.own(recordLoadBalancer, doc.ID)
	return true
}

// mayBeLateCreate reports whether doc can be the late create of a process
// that is gone: each backend is an endpoint its create could name (a local
// endpoint, or a remote endpoint of ours: owned, bearing our name, or on a
// carried IP), or one gone since, which tells nothing. A load balancer over
// another program's remote endpoint is that program's, made on the
// frontend after the restart (found by the fault soak, seed 40: another
// agent made its load balancer again after an HNS restart on the tenant
// frontend hnsproxy had been creating, and it was claimed and deleted).
// Backends the reconciler does not know are read from HNS; a read that
// fails says no, so another's is never taken.
func (r *Reconciler) mayBeLateCreate(ctx context.Context, doc *hnslb.LoadBalancer) bool {
	var known map[string]struct{} // case-folded: owned remote and local endpoint IDs
	for _, id := range doc.HostComputeEndpoints {
		if has(r.ownedEPs, id) {
			continue
		}
		if known == nil {
			known = foldedSet(slices.Collect(maps.Keys(r.ownedEPs)))
			for _, local := range r.localIndex {
				known[strings.ToLower(local)] = struct{}{}
			}
		}
		if has(known, strings.ToLower(id)) {
			continue
		}
		ep, err := r.client.GetEndpointByID(ctx, id)
		switch {
		case hnslb.IsNotFound(err):
		case err != nil:
			r.log.Info("Not claiming a load balancer on a carried frontend: reading its backend failed", "id", doc.ID, "backend", id, "err", err)
			return false
		case ep.IsRemote() && !namedOurs(ep) && !has(r.carried.eps, ep.IP()):
			r.log.Info("Not claiming a load balancer on a carried frontend: another program's remote endpoint backs it", "id", doc.ID, "backend", id, "ip", ep.IP())
			return false
		}
	}
	return true
}

// dropCarried ends the carrying; a key or IP a Sync declares again stays
// declared.
func (r *Reconciler) dropCarried() {
	for k := range r.carried.lbs {
		if !has(r.creatingLBs, k) && !has(r.standingLBs, k) {
			r.withdrawDeclaration(k, false)
		}
	}
	for ip := range r.carried.eps {
		if !has(r.creatingEPs, ip) {
			r.journal(journalRecord{Kind: recordCreatingEndpoint, ID: ip})
		}
	}
	r.carried = carriedCreates{}
}

// declaredKeys and declaredIPs are what the state file declares: this
// process's declarations, standing and not, and the carried ones.
func (r *Reconciler) declaredKeys() []intent.LBKey {
	return keysOf(r.creatingLBs, r.standingLBs, r.carried.lbs)
}

func (r *Reconciler) declaredIPs() []string {
	return keysOf(r.creatingEPs, r.carried.eps)
}

// keysOf lists the keys of sets, each once. On Windows Server 2019 and
// 2022 every cluster IP key stands, so a snapshot lists thousands: no
// merged copy of the sets is made for it.
func keysOf[K comparable](sets ...map[K]struct{}) []K {
	n := 0
	for _, s := range sets {
		n += len(s)
	}
	out := make([]K, 0, n)
	for i, s := range sets {
	keys:
		for k := range s {
			for _, earlier := range sets[:i] {
				if has(earlier, k) {
					continue keys
				}
			}
			out = append(out, k)
		}
	}
	return out
}
