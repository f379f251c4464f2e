package reconciler

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

// Lookups: what a Sync needs HNS listed for. A Sync never lists HNS: at
// 10,000 Services a listing is 30,000 to 90,000 hcn calls, seconds at HNS's
// real costs, and every change behind it would wait. An object that needs
// what only a listing tells waits for a lookup instead:
//   - which load balancer holds the frontend a create was refused on;
//   - whether a create whose reply was lost made its load balancer or
//     remote endpoint;
//   - whether a foreign load balancer holds a tenant's frontend about to
//     be declared (foreign.go);
//   - which endpoint holds the address a remote endpoint's create was
//     refused on;
//   - a local endpoint the namespaces do not show (localindex.go), or
//     could not tell of before a backend of unknown node gets its remote
//     endpoint (nodeunknown.go).
//
// The Sync asks, reports ListingWanted, and goes on with everything else.
// The next listing that begins after the ask answers it (without the
// lock) and marks the object for the next Sync: a Lookup, which lists only
// what the questions need (lookuplisting.go), or a Repair. Every listing
// answers every lookup still held, so an answer kept for later use is
// never older than the last listing.

// lookups are the questions Syncs asked of listings, and their answers.
type lookups struct {
	// listings counts the listings Lookup and Repair began: a lookup asked
	// when it was n is answered by a listing begun as n+1 or later.
	listings uint64
	lbs      map[intent.LBKey]*lbLookup
	eps      map[string]*epLookup // by IP
	// local are the local backend IPs the index and the namespaces lack,
	// asked at listings; unfound are those silentListings listings did not
	// show either (a host-network pod's address), asked again only by the
	// periodic repair: it lists the network anyway. Not one listing: it
	// may have left the pod's endpoint out, and its load balancers went
	// without the pod until the repair (TestRandomHistoriesConverge).
	local   map[string]localLookup
	unfound map[string]struct{}
	// unseen are the documents of lost creates a listing did not show
	// on their frontend (lostunseen.go).
	unseen map[intent.LBKey]*hnslb.LoadBalancer
}

// localLookup is a local backend's lookup: the listing number it was
// asked at, and how many listings since have not shown it.
type localLookup struct {
	asked uint64
	looks int
}

// lookupPurpose says what an object waits to learn; an object asking with
// another purpose than its pending lookup's asks anew.
type lookupPurpose uint8

const (
	// lookupFrontend: which load balancer holds a frontend? Asked before a
	// new tenant frontend is declared (does a foreign one hold it?), and
	// anew when HNS refuses a create on a frontend as taken.
	lookupFrontend lookupPurpose = iota + 1
	// lookupLostCreate: did a create whose reply was lost make its object?
	lookupLostCreate
	// lookupAddress: which endpoint holds the address HNS refused a
	// remote endpoint's create on?
	lookupAddress
	// lookupLocalFirst: does a local endpoint hold the address of a
	// backend of unknown node, where the namespaces could not tell, before
	// its remote endpoint is first created (nodeunknown.go)? The listing
	// answers by indexing what it finds there.
	lookupLocalFirst
)

// lbLookup is one load balancer key's question: the load balancer listed
// on its frontend, once answered (nil: none). refused: asked after HNS
// refused a create on the frontend as taken.
type lbLookup struct {
	purpose  lookupPurpose
	refused  bool
	asked    uint64
	answered bool
	holder   *hnslb.LoadBalancer
	// portless are the load balancers without port mappings the answer
	// showed on the frontend's VIP, but hnsproxy's own (ours), which
	// answeredAt (the unconfirmed deletes' sequence then) dates
	// (keptportless.go).
	portless, ours []string
	answeredAt     uint64
	// recheck: asked again because one of ours was deleted after the
	// answer before (recheckAfterDelete); it is not asked a third time.
	recheck bool
	// looks: the listings before this one that showed nothing for a lost
	// create of a load balancer no longer desired (lookAgainForLost), or
	// no holder of a refused frontend (askRefusedAgain).
	looks int
}

// epLookup is one address's question: the endpoints listed with it, once
// answered.
type epLookup struct {
	purpose  lookupPurpose
	asked    uint64
	answered bool
	found    []*hnslb.Endpoint
	// looks: the listings before this one that showed nothing holding a
	// refused address (askAddressAgain).
	looks int
}

func newLookups() lookups {
	return lookups{lbs: map[intent.LBKey]*lbLookup{}, eps: map[string]*epLookup{}, local: map[string]localLookup{}, unfound: map[string]struct{}{},
		unseen: map[intent.LBKey]*hnslb.LoadBalancer{}}
}

// AwaitingListingError is the status of an object that waits for a listing
// to answer its lookup; it is not a failure.
type AwaitingListingError struct{ Purpose string }

func (e *AwaitingListingError) Error() string {
	return "waiting for the next listing of HNS: " + e.Purpose
}

// The purposes a status names.
const (
	whyHeld    = "checking that no foreign load balancer holds the new frontend"
	whyRefused = "finding what holds the frontend HNS refused the create on"
	whyLostLB  = "finding whether a create whose reply was lost made the load balancer"
	whyLostEP  = "finding whether a create whose reply was lost made the endpoint"
	whyAddress = "finding what holds the address HNS refused the create on"
	whyLocal   = "finding whether a pod of this node holds the address (its slice names no node), which HNS's namespaces could not tell"
)

func awaiting(why string) error { return &AwaitingListingError{Purpose: why} }

// isAwaiting reports whether err is a wait for a listing.
func isAwaiting(err error) bool {
	var a *AwaitingListingError
	return errors.As(err, &a)
}

// FrontendHeldByNothingError is the status of a load balancer HNS refuses
// because its frontend is taken, where a listing begun after the refusal
// shows no load balancer on it: a host process's socket on the port
// (kubernetes/community#8883), or a port reservation HNS kept after deleting
// its load balancer (kubernetes/kubernetes#137530). It is retried with
// backoff.
type FrontendHeldByNothingError struct {
	Key intent.LBKey
	// Portless are load balancers the listing showed without port
	// mappings on the frontend's VIP (none: a NodePort's, without VIPs),
	// which no failed create of this process left (partial.go).
	Portless []string
	Err      error
}

func (e *FrontendHeldByNothingError) Error() string {
	if len(e.Portless) > 0 {
		return fmt.Sprintf("HNS refuses frontend %s as taken, and no load balancer with a port holds it, but HNS lists load balancer %s without port mappings on it, which a failed create can leave and which may hold the port (kubernetes/kubernetes#141488): if no program owns it, delete it (hnsdiag delete loadbalancers): %v",
			e.Key, strings.Join(e.Portless, ", "), e.Err)
	}
	return fmt.Sprintf("HNS refuses frontend %s as taken, but no load balancer holds it: a host process may hold the port, or HNS kept its reservation after a delete (restarting the hns service frees it): %v", e.Key, e.Err)
}

func (e *FrontendHeldByNothingError) Unwrap() error { return e.Err }

// AddressRefusedError is a remote endpoint create HNS refused for its
// address again after a listing begun after the first refusal. Holders are
// the endpoints that listing showed on the address which hnsproxy neither
// adopts nor deletes: another program's, or a local endpoint where HNS
// allows no local and remote endpoint on one address. With none, HNS takes
// the address for invalid or reserved on the network: it answers such an
// address with 0x803b002f (kubernetes/kubernetes#100962), and which code it
// gives for a taken one is not known. It is retried with backoff.
type AddressRefusedError struct {
	IP      string
	Holders []*hnslb.Endpoint
	Err     error
}

func (e *AddressRefusedError) Error() string {
	if len(e.Holders) == 0 {
		return fmt.Sprintf("HNS refuses endpoint address %s, and no endpoint on the network holds it: HNS takes it for invalid or reserved there (a subnet's own, broadcast or gateway address, or one the host holds): %v", e.IP, e.Err)
	}
	held := make([]string, len(e.Holders))
	for i, h := range e.Holders {
		held[i] = fmt.Sprintf("%s endpoint %s", h.KindWord(), h.ID)
	}
	return fmt.Sprintf("HNS refuses endpoint address %s, held by %s, which hnsproxy does not replace: %v", e.IP, strings.Join(held, ", "), e.Err)
}

func (e *AddressRefusedError) Unwrap() error { return e.Err }

// frontendLookup is k's lookupFrontend, asked now if k has none.
func (r *Reconciler) frontendLookup(k intent.LBKey) *lbLookup {
	l := r.lookups.lbs[k]
	if l == nil || l.purpose != lookupFrontend {
		l = &lbLookup{purpose: lookupFrontend, asked: r.lookups.listings}
		r.lookups.lbs[k] = l
	}
	return l
}

// askRefused asks k's lookupFrontend anew after HNS refused a create on
// its frontend: an answer given before would not show what holds it now.
func (r *Reconciler) askRefused(k intent.LBKey) {
	r.lookups.lbs[k] = &lbLookup{purpose: lookupFrontend, refused: true, asked: r.lookups.listings}
}

// askRefusedAgain asks k's lookup again after a listing answered that no
// load balancer holds k's refused frontend, while fewer than
// silentListings listings have: that listing may have left the holder out
// (unlisted.go), and taken for a host process's port, a holder of
// hnsproxy's own (a delete HNS kept, a lost create) kept the Service off
// its frontend until the next drift repair (TestRandomHistoriesConverge,
// once histories drew listing faults). Called with the lock held.
func (r *Reconciler) askRefusedAgain(k intent.LBKey) bool {
	l := r.lookups.lbs[k]
	if l == nil || l.looks+1 >= silentListings {
		return false
	}
	r.askRefused(k)
	r.lookups.lbs[k].looks, r.lookups.lbs[k].recheck = l.looks+1, l.recheck
	return true
}

// lostLBAnswer is the answer to k's lookupLostCreate, asked now if k has
// none: the load balancer listed on its frontend (nil: none); answered is
// false until a listing answered. The caller asks it only after the lost
// create, so the listing shows what it made.
func (r *Reconciler) lostLBAnswer(k intent.LBKey) (holder *hnslb.LoadBalancer, answered bool) {
	l := r.lookups.lbs[k]
	if l == nil || l.purpose != lookupLostCreate {
		r.lookups.lbs[k] = &lbLookup{purpose: lookupLostCreate, asked: r.lookups.listings}
		return nil, false
	}
	return l.holder, l.answered
}

func (r *Reconciler) forgetLB(k intent.LBKey) { delete(r.lookups.lbs, k) }

// epAnswer is the answer to the lookup of purpose for the address ip, asked
// now if it has none of that purpose: the endpoints listed with it.
func (r *Reconciler) epAnswer(ip string, purpose lookupPurpose) (found []*hnslb.Endpoint, answered bool) {
	l := r.lookups.eps[ip]
	if l == nil || l.purpose != purpose {
		r.lookups.eps[ip] = &epLookup{purpose: purpose, asked: r.lookups.listings}
		return nil, false
	}
	return l.found, l.answered
}

// askEP asks ip's lookup of purpose anew.
func (r *Reconciler) askEP(ip string, purpose lookupPurpose) {
	r.lookups.eps[ip] = &epLookup{purpose: purpose, asked: r.lookups.listings}
}

func (r *Reconciler) forgetEP(ip string) { delete(r.lookups.eps, ip) }

// askAddressAgain asks ip's address lookup again after a listing showed
// nothing holding the address HNS refused, while fewer than
// silentListings listings have: that listing may have left the holder out
// (unlisted.go), and taken for an address HNS reserves, a remote endpoint
// of hnsproxy's own that HNS kept after its delete held the address, and
// every Service the pod backs went without it, until the next drift
// repair (TestRandomHistoriesConverge, once histories drew listing
// faults). Called with the lock held.
func (r *Reconciler) askAddressAgain(ip string) bool {
	l := r.lookups.eps[ip]
	if l == nil || l.purpose != lookupAddress || l.looks+1 >= silentListings {
		return false
	}
	r.lookups.eps[ip] = &epLookup{purpose: lookupAddress, asked: r.lookups.listings, looks: l.looks + 1}
	return true
}

// askLocal asks for the local endpoints of ips, except those a listing did
// not show already.
func (r *Reconciler) askLocal(ips map[string]struct{}) {
	for ip := range ips {
		if r.localIndex[ip] != "" || has(r.lookups.unfound, ip) {
			continue
		}
		if _, asked := r.lookups.local[ip]; !asked {
			r.lookups.local[ip] = localLookup{asked: r.lookups.listings}
		}
	}
}

// wantsListing reports whether a lookup waits for its answer. One whose
// object an abandoned call may still change is not answered until the
// call returns (answerLookups), so it asks for no listing till then:
// listing after listing while the call runs would answer nothing. Failed
// creates piled up ask for one too (partial.go).
func (r *Reconciler) wantsListing() bool {
	if len(r.lookups.local) > 0 || r.failuresPiledUp() {
		return true
	}
	for k, l := range r.lookups.lbs {
		if !l.answered && !r.client.busy(lbToken(k)) {
			return true
		}
	}
	for ip, l := range r.lookups.eps {
		if !l.answered && !r.client.busy(epToken(ip)) {
			return true
		}
	}
	return false
}

// addressesAsked are the addresses whose listed endpoints a listing
// beginning now keeps whole, for the lookups asked before it.
func (q *lookups) addressesAsked() map[string]struct{} {
	if len(q.eps) == 0 {
		return nil
	}
	ips := make(map[string]struct{}, len(q.eps))
	for ip := range q.eps {
		ips[ip] = struct{}{}
	}
	return ips
}

// answerLookups answers, from a listing begun as listing number n, every
// lookup asked before it, and marks the objects that wait for one for the
// next Sync. A lookup whose object an abandoned call may still change is
// left for the next listing. It returns the IDs it answered with: each is
// its object's to adopt, delete or report at its turn, so none is deleted
// as stale before (a repair took a late create it answers with for a leak).
// Called with the lock held.
func (r *Reconciler) answerLookups(listed *listedHNS, n uint64) (handed []string) {
	if listed.lbsListed && len(r.lookups.lbs) > 0 {
		holders := make(map[intent.LBKey]*hnslb.LoadBalancer, len(r.lookups.lbs))
		for id, l := range listed.lbs {
			doc := l.doc
			if doc == nil {
				doc = l.matched.doc // ours, as realized: copied only if asked about
			}
			k, ok := KeyOf(doc)
			if q := r.lookups.lbs[k]; !ok || q == nil || q.asked >= n {
				continue
			}
			if l.doc == nil {
				d := *doc
				d.ID = id
				doc = &d
			}
			holders[k] = doc
		}
		for k, q := range r.lookups.lbs {
			if q.asked >= n || r.client.busy(lbToken(k)) {
				continue
			}
			q.ours = r.ownPortlessOn(listed, k)
			q.answered, q.holder, q.portless = true, holders[k], withoutIDs(listed.portlessOn[k.VIP], q.ours)
			q.answeredAt = r.unconfirmed.seq
			if q.holder != nil {
				handed = append(handed, q.holder.ID)
				r.dropStale(r.staleLBs, q.holder.ID)
			}
			if e := r.lbs[k]; e != nil {
				r.markLB(e)
			}
		}
	}
	if !listed.epsListed {
		return handed
	}
	for ip, q := range r.lookups.eps {
		if q.asked >= n || r.client.busy(epToken(ip)) {
			continue
		}
		q.answered, q.found = true, listed.asked[ip]
		for _, ep := range q.found {
			handed = append(handed, ep.ID)
			r.dropStale(r.staleEPs, ep.ID)
		}
		if r.eps[ip] != nil {
			r.markEP(ip)
		}
	}
	// What silentListings listings did not show of the local backends is
	// asked again only by the periodic repair; forgotten once no load
	// balancer waits for it or the index has it.
	for ip, l := range r.lookups.local {
		switch {
		case l.asked >= n:
		case r.localIndex[ip] != "" || len(r.waiting[ip]) == 0:
			delete(r.lookups.local, ip)
		case l.looks+1 < silentListings:
			r.lookups.local[ip] = localLookup{asked: n, looks: l.looks + 1} // the next listing looks again
		default:
			delete(r.lookups.local, ip)
			r.lookups.unfound[ip] = struct{}{}
		}
	}
	for ip := range r.lookups.unfound {
		if r.localIndex[ip] != "" || len(r.waiting[ip]) == 0 {
			delete(r.lookups.unfound, ip)
		}
	}
	return handed
}

// failOrWait is fail, or wait for an error that is a wait: for a listing,
// or for the state file to record a create declared mid-Sync (createLB's
// declareNow, modifyLB's declareForCreate), which waits as every create
// does while the state file cannot be written (run.noCreates): failed, it
// was counted and logged as HNS's refusal, and raised on its Service as
// one.
func (r *Reconciler) failOrWait(run *syncRun, ref objectRef, st *objStatus, kind ObjectKind, name string, err error) {
	if isAwaiting(err) || errors.Is(err, errStateUnwritable) {
		r.wait(run, ref, st, err)
		return
	}
	r.fail(run, ref, st, kind, name, err)
}
