package reconciler

import (
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

// One listing's silence is not a delete for what Services still want
// either (unlisted.go). A realized load balancer or remote endpoint a drift
// repair's listing left out used to be taken for vanished: dropped from the
// state file and made again. Where HNS still held it, the create was
// refused as taken, a lookup's listing that left it out as well found no
// holder, and the object stayed in HNS as another program's: a Service
// deleted meanwhile left its load balancer carrying its frontend, and its
// remote endpoint holding a pod address, for good. So the repair leaves
// such an object realized and owned, and the next Sync, due at once, reads
// it by ID (one get, as a recheck of a pod's endpoint): HNS no longer has
// it, and it is the repair's work to make again (repairwork.go), as the
// repair's word would have had it; HNS has it, and nothing is written. An
// object HNS lost costs that get before it is made again. One Sync makes
// the reads, at most maxUnlistedReads of them: a repair whose listing left
// out more did not leave them out by chance (HNS lost them: a restart, a
// runbook), and they are taken for vanished at once, unread. Read in one
// Sync, a load balancer and the endpoints it uses are judged together: a
// load balancer rewritten for a vanished endpoint before its own read
// would no longer be read, and the drift would go uncounted.

// unlistedRealized are the realized objects a repair's listing left out,
// each with the ID the listing did not show, waiting for a Sync's read.
type unlistedRealized struct {
	lbs map[intent.LBKey]string
	eps map[string]string // by IP
	// at is when a Sync reads them; after a read HNS did not answer, later,
	// with the backoff of unlistedRef.
	at time.Time
}

func (u *unlistedRealized) pending() bool { return len(u.lbs)+len(u.eps) > 0 }

// unlistedRef keys the backoff of reads HNS could not answer: one for them
// all, as one HNS fails them all.
var unlistedRef = objectRef{id: "unlisted-realized-recheck"}

// unlistedFound are the realized objects one repair's listing left out.
type unlistedFound struct {
	lbs   []*lbEntry
	eps   []string            // IPs
	epIDs map[string]struct{} // eps' IDs
}

// addEP notes the realized remote endpoint ep at ip.
func (f *unlistedFound) addEP(ip string, ep *remoteEP) {
	if f.epIDs == nil {
		f.epIDs = map[string]struct{}{}
	}
	f.eps = append(f.eps, ip)
	f.epIDs[ep.id] = struct{}{}
}

// hasEP reports whether the remote endpoint id is one of them: its load
// balancers do not use a vanished endpoint before its read tells.
func (f *unlistedFound) hasEP(id string) bool {
	_, ok := f.epIDs[id]
	return ok
}

// keepUnlisted has the next Sync read by ID what the repair's listing left
// out, or, past maxUnlistedReads, takes it all for vanished (the repair's
// one line of drift says how many). Vanished unread, each old ID stays
// owned and is deleted by ID once its object is made again (unreadStale):
// the listing may have left out one HNS still holds (unlisted.go).
func (r *Reconciler) keepUnlisted(found unlistedFound, drift *driftTally) {
	if len(found.lbs)+len(found.eps) > maxUnlistedReads {
		for _, ip := range found.eps {
			id := r.eps[ip].id
			r.endpointVanished(ip, r.eps[ip], drift)
			r.ownToDelete(recordRemoteEndpoint, r.staleEPs, id)
		}
		for _, e := range found.lbs {
			id := e.realizedID
			r.lbVanished(e, drift)
			r.ownToDelete(recordLoadBalancer, r.staleLBs, id)
		}
		return
	}
	if len(found.lbs)+len(found.eps) == 0 {
		return
	}
	u := &r.unlisted
	if u.lbs == nil {
		u.lbs, u.eps = map[intent.LBKey]string{}, map[string]string{}
	}
	for _, e := range found.lbs {
		u.lbs[e.key] = e.realizedID
	}
	for _, ip := range found.eps {
		u.eps[ip] = r.eps[ip].id
	}
	u.at = r.clock.Now()
}

// readUnlisted reads by ID each object a repair's listing left out that is
// still realized under the same ID and wanted: one HNS no longer has is
// taken for vanished and becomes the repair's work; one it has stays as it
// is. A write or a delete since answers for an object on its own, so it is
// not read. Reads HNS does not answer are asked again after a backoff.
func (r *Reconciler) readUnlisted(run *syncRun) {
	u := &r.unlisted
	if !u.pending() || run.now.Before(u.at) {
		return
	}
	var drift driftTally
	r.withRepairMarks(func() { r.readEachUnlisted(run, &drift) })
	drift.log(r.log)
}

// readEachUnlisted makes readUnlisted's reads.
func (r *Reconciler) readEachUnlisted(run *syncRun, drift *driftTally) {
	u := &r.unlisted
	failed := false
	// settled reads one object unless an abandoned call holds it, and
	// reports whether HNS told.
	settled := func(busy bool, get func() error, vanished func()) bool {
		if busy {
			failed = true
			return false
		}
		switch err := get(); {
		case hnslb.IsNotFound(err):
			vanished()
		case err != nil:
			failed = true
			return false
		}
		return true
	}
	for ip, id := range u.eps {
		ep := r.eps[ip]
		if ep == nil || ep.id != id || !ep.desired() || settled(r.client.busy(epToken(ip), idToken(id)),
			func() error { _, err := r.client.GetEndpointByID(run.ctx, id); return err },
			func() { r.endpointVanished(ip, ep, drift) }) {
			delete(u.eps, ip)
		}
	}
	for k, id := range u.lbs {
		e := r.lbs[k]
		if e == nil || e.realizedID != id || e.desired == nil || settled(r.client.busy(lbToken(k), idToken(id)),
			func() error { _, err := r.client.GetLoadBalancerByID(run.ctx, id); return err },
			func() { r.lbVanished(e, drift) }) {
			delete(u.lbs, k)
		}
	}
	if failed {
		u.at = run.now.Add(r.limiter.When(unlistedRef))
		return
	}
	r.limiter.Forget(unlistedRef)
	u.at = time.Time{}
}

// lbVanished forgets e's realized load balancer, which HNS no longer has,
// and marks e: the next Sync makes it again. drift is the tally of the
// repair or of the Sync's reads.
func (r *Reconciler) lbVanished(e *lbEntry, drift *driftTally) {
	drift.found(r.log, driftLBGone, e.key.String()).Info("Load balancer vanished from HNS; recreating it", "key", e.key, "id", e.realizedID)
	r.driftFound(KindLoadBalancer)
	r.clearRealized(e)
	r.markLB(e)
}
