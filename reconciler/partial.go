package reconciler

import (
	"iter"
	"maps"
	"slices"
	"strings"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

// Load balancers a failed create left without port mappings. HNS has
// listed load balancers without port mappings (kubernetes/kubernetes#141488),
// left, says its fix (#141489), "partially created after
// hcnCreateLoadBalancer fails". Nothing in such a document says whose it
// is, and hnsproxy deletes nothing it does not own. So each create HNS
// refused is remembered by what a load balancer it left would show (its
// frontend VIPs, backends and source VIP), and the next listing begun after
// it (a Lookup's, which a refused frontend or a lost reply asks for, or a
// Repair's) claims a load balancer without port mappings that shows exactly
// that: it becomes hnsproxy's, stale, and the next Sync deletes it before
// its creates, so one that holds its frontend unseen gives it back. A
// failed create is remembered, in the state file too, until a listing has
// found what it left, or silentListings listings have looked; Start's
// listing looks for those a restart carried over.

// failedCreates is where the HNS client's creates drop the documents HNS
// refused, as they fail (a create abandoned at its deadline may fail long
// after its Sync), for the reconciler to take under its lock.
type failedCreates struct {
	dropbox[string] // partialSigs
}

// note drops a failed create of doc.
func (f *failedCreates) note(doc *hnslb.LoadBalancer) { f.drop(partialSig(doc), 0) }

// failedCreate is one remembered failed create: the failedSeq it was
// remembered at (failed again: at the last failure), and how many listings
// begun after it have looked for what it left without finding it.
type failedCreate struct {
	seq   uint64
	looks int
}

// A failed create is looked for by silentListings listings, not one:
// where listings leave objects out, a failed create's leftover that the
// one listing which looked left out was nobody's for good, and, holding
// its frontend, kept its Service off it (the fault soak, ws2019 and
// l2bridge, seed 11). Most failed creates leave nothing, so most such
// records wait for all of them.

// takeFailedCreates remembers the failed creates dropped since, each in
// the state file, so a restart before a listing has looked remembers them
// too. Called with the lock held.
func (r *Reconciler) takeFailedCreates() {
	for _, sig := range r.client.failed.drain() {
		r.failedSeq++
		if _, known := r.failedLBs[sig]; !known {
			r.journal(journalRecord{Add: true, Kind: recordFailedLB, ID: sig})
		}
		r.failedLBs[sig] = failedCreate{seq: r.failedSeq}
	}
}

// Only a listing forgets a failed create (forgetFailures): a Repair's, or a
// Lookup's that lists load balancers. Refusals for good (0x57) ask for
// none, so with drift repair off (--drift-repair-period=0) the record grew
// with each document HNS refused, and so did what the failures left in HNS.
// No failure is safe to forget unlooked-for: which leave a load balancer,
// and whether it holds its frontend, is not known, and one forgotten would
// be nobody's for good, or, holding its frontend, named to the operator as
// another program's holder with the Service stuck behind it (a deleted
// Service's too: its cluster IP or node port goes to a later one). So past
// as many as there are tracked load balancers (at least
// minFailuresListed), they ask for a lookup listing (wantsListing), which
// looks for them all and forgets them: one listing of load balancers per
// that many refused documents. While listings fail they grow, as before.

// minFailuresListed is the fewest remembered failed creates that ask for a
// listing of their own.
const minFailuresListed = 256

// failuresPiledUp reports whether the failed creates remembered ask for a
// listing. Called with the lock held.
func (r *Reconciler) failuresPiledUp() bool {
	return len(r.failedLBs) > max(minFailuresListed, len(r.lbs))
}

// failuresToLookFor are the failed creates a listing beginning now looks
// for, and the mark forgetFailures takes once it has looked; nil when
// none. Called with the lock held.
func (r *Reconciler) failuresToLookFor() (sigs partialMatcher, mark uint64) {
	r.takeFailedCreates()
	if len(r.failedLBs) == 0 {
		return nil, r.failedSeq
	}
	return newPartialMatcher(maps.Keys(r.failedLBs)), r.failedSeq
}

// forgetFailures counts a look for each failed create remembered up to
// mark, which a listing begun after it has made, and forgets those whose
// leftover it found, and those silentListings listings have looked
// for. Called with the lock held.
func (r *Reconciler) forgetFailures(mark uint64, found map[string]struct{}) {
	for sig, f := range r.failedLBs {
		if f.seq > mark {
			continue
		}
		if f.looks++; f.looks < silentListings && !has(found, sig) {
			r.failedLBs[sig] = f
			continue
		}
		delete(r.failedLBs, sig)
		r.journal(journalRecord{Kind: recordFailedLB, ID: sig})
	}
}

// partialSig is what a load balancer left without port mappings would show
// of doc: frontend VIPs, backends and source VIP, spelt and ordered alike
// whatever the echo (HNS's GUID case and order are not promised), as
// "VIPs|backends|source VIP". Flags are left out: whether HNS echoes them
// all is not known either.
func partialSig(doc *hnslb.LoadBalancer) string {
	vips, source, backends := partialParts(doc)
	return vips + "|" + strings.Join(backends, ",") + "|" + source
}

// partialParts are what a signature is made of: the frontend VIPs (sorted,
// comma-joined), the source VIP and the backends, each spelt canonically.
func partialParts(doc *hnslb.LoadBalancer) (vips, source string, backends []string) {
	canon := make([]string, len(doc.FrontendVIPs))
	for i, v := range doc.FrontendVIPs {
		canon[i] = canonicalIP(v)
	}
	slices.Sort(canon)
	return strings.Join(canon, ","), canonicalIP(doc.SourceVIP), lowerSorted(doc.HostComputeEndpoints)
}

// partialMatcher tells what failed creates left: a load balancer without
// port mappings with a failed document's frontend VIPs and source VIP, and
// backends among its. Among, not equal: the simulator takes a deleted
// endpoint out of every load balancer that names it, partial ones too
// (whether HNS does is not known), and hnsproxy deletes a remote endpoint
// none of its load balancers uses, so what a failed create left may have
// lost backends since: the two partial load balancers a soak leaked had
// lost them all. Keyed by frontend, the backend sets.
type partialMatcher map[string][]partialEntry

// partialEntry is one failed create's signature and its backends.
type partialEntry struct {
	sig      string
	backends map[string]struct{}
}

// newPartialMatcher reads signatures (partialSig); one it cannot read (an
// older format) is left out.
func newPartialMatcher(sigs iter.Seq[string]) partialMatcher {
	m := partialMatcher{}
	for sig := range sigs {
		parts := strings.Split(sig, "|")
		if len(parts) != 3 {
			continue
		}
		backends := map[string]struct{}{}
		if parts[1] != "" {
			for _, b := range strings.Split(parts[1], ",") {
				backends[b] = struct{}{}
			}
		}
		frontend := parts[0] + "|" + parts[2]
		m[frontend] = append(m[frontend], partialEntry{sig, backends})
	}
	return m
}

// match is the signature of the failed create whose leftover doc, without
// port mappings, is, if any.
func (m partialMatcher) match(doc *hnslb.LoadBalancer) (sig string, ok bool) {
	if len(m) == 0 || len(doc.PortMappings) != 0 {
		return "", false
	}
	vips, source, backends := partialParts(doc)
	for _, failed := range m[vips+"|"+source] {
		if !slices.ContainsFunc(backends, func(b string) bool { return !has(failed.backends, b) }) {
			return failed.sig, true
		}
	}
	return "", false
}

// matches reports whether doc, without port mappings, is what one of the
// failed creates left.
func (m partialMatcher) matches(doc *hnslb.LoadBalancer) bool {
	_, ok := m.match(doc)
	return ok
}

// notePartial keeps a listed load balancer without port mappings that
// shows a failed create's signature, and notes every other load balancer
// without port mappings by VIP; without the lock. One a failed create of
// hnsproxy's left is hnsproxy's to delete, not one an error may name for
// the operator to delete by hand (FrontendHeldByNothingError.Portless):
// where HNS leaves one at each refusal, its ID changing made each retry's
// error a new one, logged and raised as an event every time.
func (l *listedHNS) notePartial(doc *hnslb.LoadBalancer) {
	if len(doc.PortMappings) != 0 {
		return
	}
	if l.partialSigs.matches(doc) {
		l.partials = append(l.partials, doc)
		return
	}
	if l.portlessOn == nil {
		l.portlessOn = map[string][]string{}
	}
	vips := doc.FrontendVIPs
	if len(vips) == 0 {
		vips = []string{""}
	}
	for _, v := range vips {
		v = canonicalIP(v)
		l.portlessOn[v] = append(l.portlessOn[v], doc.ID)
	}
}

// claimPartials makes the load balancers a listing showed left by failed
// creates hnsproxy's, due for deletion, and forgets the failures the
// listing looked for. Called with the lock held.
func (r *Reconciler) claimPartials(listed *listedHNS, full bool) {
	var realized map[string]struct{}
	if len(listed.partials) > 0 {
		// One of ours echoed without its port mapping is not a partial create.
		realized = map[string]struct{}{}
		for _, e := range r.lbs {
			if e.realizedID != "" {
				realized[e.realizedID] = struct{}{}
			}
		}
	}
	claimed, found := map[string]struct{}{}, map[string]struct{}{}
	for _, doc := range listed.partials {
		if !has(realized, doc.ID) {
			frontend := partialFrontend(doc)
			_, again := r.partialsOn[frontend]
			r.claimPartial(doc, again)
			claimed[frontend] = struct{}{}
			sig, _ := listed.partialSigs.match(doc)
			found[sig] = struct{}{}
		}
	}
	r.notePartialsOn(listed.partialSigs, claimed, full)
	r.forgetFailures(listed.partialMark, found)
}

// Where HNS refuses a frontend for good (a port it kept reserved) and
// leaves a load balancer without port mappings at each refusal, every
// listing claims the ones left since and the Sync after deletes them: two
// lines each, every 2 minutes, at the default verbosity. So partialsOn
// holds the frontends (partialFrontend) on which the last listing that
// looked for failed creates found some: the next one's are logged at
// --v=2. A listing that looks there and finds none ends it; a Repair,
// which looks for every failure remembered, keeps only what it found, so
// the frontends of Services gone leave too.

// partialFrontend is the frontend a load balancer without port mappings
// shows, as partialMatcher keys it: its VIPs and source VIP.
func partialFrontend(doc *hnslb.LoadBalancer) string {
	vips, source, _ := partialParts(doc)
	return vips + "|" + source
}

// notePartialsOn updates partialsOn after a listing that looked for the
// failed creates of sigs and claimed what they left on claimed; full: a
// Repair's.
func (r *Reconciler) notePartialsOn(sigs partialMatcher, claimed map[string]struct{}, full bool) {
	if full {
		r.partialsOn = claimed
		return
	}
	for frontend := range sigs {
		if _, found := claimed[frontend]; !found {
			delete(r.partialsOn, frontend)
		}
	}
	maps.Copy(r.partialsOn, claimed)
	r.forgetPartialsOfGone()
}

// forgetPartialsOfGone drops the frontends whose VIPs no tracked load
// balancer has: a lookup looks only where it was asked, so with drift
// repair off (--drift-repair-period=0) nothing else dropped those of
// Services deleted since, and each frontend HNS ever refused so stayed
// for the life of the process. A node port's (no VIP) stays: one per
// source VIP. Called with the lock held.
func (r *Reconciler) forgetPartialsOfGone() {
	if len(r.partialsOn) == 0 {
		return
	}
	tracked := make(map[string]struct{}, len(r.lbs))
	for k := range r.lbs {
		tracked[canonicalIP(k.VIP)] = struct{}{}
	}
	for frontend := range r.partialsOn {
		vips, _, _ := strings.Cut(frontend, "|")
		if vips != "" && !slices.ContainsFunc(strings.Split(vips, ","), func(v string) bool { return has(tracked, v) }) {
			delete(r.partialsOn, frontend)
		}
	}
}

// claimPartial makes doc, a load balancer a failed create of ours left,
// ours and due for deletion; again: the last listing found one on its
// frontend too, so it and its delete are logged at --v=2.
func (r *Reconciler) claimPartial(doc *hnslb.LoadBalancer, again bool) {
	if r.staleLBs[doc.ID] != nil {
		return
	}
	log := r.log
	if again {
		log = log.V(2)
	}
	log.Info("Deleting a load balancer HNS left without port mappings after a failed create (kubernetes/kubernetes#141488)",
		"id", doc.ID, "frontendVIPs", doc.FrontendVIPs, "backends", len(doc.HostComputeEndpoints))
	r.own(recordLoadBalancer, doc.ID)
	r.staleLBs[doc.ID] = &staleObj{reason: "ours, left without port mappings by a failed create", quiet: again}
}

// claimPartialsAtStart claims, from Start's listing of every load
// balancer, those the failed creates the state file remembers left, and
// counts Start's listing as a look for each (forgetFailures). Called with
// the lock held.
func (r *Reconciler) claimPartialsAtStart(remembered []string, lbs []hnslb.LoadBalancer) {
	if len(remembered) == 0 {
		return
	}
	for _, sig := range remembered {
		r.failedLBs[sig] = failedCreate{seq: r.failedSeq}
	}
	left, found := leftByFailedCreates(remembered, lbs)
	for _, doc := range left {
		r.claimPartial(doc, false)
	}
	r.forgetFailures(r.failedSeq, found)
}

// leftByFailedCreates are the load balancers of lbs without port mappings
// that the failed creates of sigs left, and the signatures of the failed
// creates whose leftover it found.
func leftByFailedCreates(sigs []string, lbs []hnslb.LoadBalancer) (left []*hnslb.LoadBalancer, found map[string]struct{}) {
	if len(sigs) == 0 {
		return nil, nil
	}
	failed := newPartialMatcher(slices.Values(sigs))
	found = map[string]struct{}{}
	for i := range lbs {
		if sig, ok := failed.match(&lbs[i]); ok {
			left = append(left, &lbs[i])
			found[sig] = struct{}{}
		}
	}
	return left, found
}

// A failed create whose record the state file lost (hnsproxy killed, or
// the file unwritable, before the Sync's last write) leaves nothing to
// look for. But its key was declared durably before the create, and the
// record withdrawing that declaration is written with the failure's: a
// load balancer without port mappings on a VIP still declared at Start is
// taken for what such a create left (claimInterrupted). A key that stands
// declared is an apiserver-allocated frontend hnsproxy serves, where such
// a shape serves nobody. Unless it names a remote endpoint hnsproxy does
// not own: then another agent's failed create left it (a node port's
// declaration covers every node-wide one), and it is left alone.

// declaredVIPsOf are the VIPs of keys, canonical; "" for node ports.
func declaredVIPsOf(keys map[intent.LBKey]struct{}) map[string]struct{} {
	vips := make(map[string]struct{}, len(keys))
	for k := range keys {
		vips[canonicalIP(k.VIP)] = struct{}{}
	}
	return vips
}

// portlessOnDeclared reports a load balancer without port mappings whose
// frontend VIPs are each a declared key's (none: a node port's).
func portlessOnDeclared(lb *hnslb.LoadBalancer, declared map[string]struct{}) bool {
	if len(lb.PortMappings) != 0 {
		return false
	}
	if len(lb.FrontendVIPs) == 0 {
		return has(declared, "")
	}
	for _, v := range lb.FrontendVIPs {
		if !has(declared, canonicalIP(v)) {
			return false
		}
	}
	return true
}

// foreignRemoteEndpoints are the IDs, in lower case, of the listed remote
// endpoints not in owned: no document of hnsproxy's names one.
func foreignRemoteEndpoints(eps []hnslb.Endpoint, owned map[string]struct{}) map[string]struct{} {
	theirs := map[string]struct{}{}
	for i := range eps {
		id := strings.ToLower(eps[i].ID)
		if _, ours := owned[id]; eps[i].IsRemote() && !ours {
			theirs[id] = struct{}{}
		}
	}
	return theirs
}

// backsOnto reports whether lb names one of ids (lower case) as a backend.
func backsOnto(lb *hnslb.LoadBalancer, ids map[string]struct{}) bool {
	return slices.ContainsFunc(lb.HostComputeEndpoints, func(id string) bool { return has(ids, strings.ToLower(id)) })
}
