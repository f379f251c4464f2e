package reconciler

import (
	"context"
	"fmt"
	"strings"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// One listing's silence is not a delete. A listing is hcn's enumeration of
// IDs followed by a read of each object, and HNS is not transactional
// (docs/simulator.md, Faults.LeftOutOfListings): nothing rules out one
// leaving out an object HNS holds. An owned ID forgotten on one listing's
// word is, if HNS still holds it, another program's for good: a load
// balancer of a Service deleted meanwhile then stayed in HNS, carrying its
// frontend's traffic to the old backends and holding the frontend against
// a new Service there
// (TestALoadBalancerOneListingLeavesOutIsStillDeleted). So Start reads by
// ID what the state file owns and its listing left out; a drift repair,
// which judges under the lock and makes no HNS calls there, deletes an
// owned object no desired one uses that its listing left out, and keeps
// one being deleted: either delete's answer tells whether HNS still had
// it, and its "not found" forgets it. A realized object a Service still
// wants that a repair's listing leaves out is read by ID at the next Sync,
// and made again only if HNS no longer has it (unlistedrealized.go). Nor
// is a pod's endpoint, the CNI's, that a listing leaves out gone: Start
// reads by ID those the owned load balancers name (namedEndpoints), and a
// repair's or a lookup's listing has them rechecked by ID
// (unlistedlocal.go).

// silentListings is how many listings must leave an object out before
// hnsproxy takes it for gone where nothing else would look for it again
// (hnslb.SilentLooks): a delete HNS reported done (deleted.go), what a
// failed create left (partial.go), what a lost create of a load balancer
// no longer desired made (lostunseen.go). Each was taken for gone on one
// listing's word, and each so left an object in HNS for good, nobody's, in
// the fault soak. The price is a record kept for up to three listings: at
// the default drift repair period, 15 minutes where nothing else lists.
// Every get is asked as many times before its "not found" is believed
// (hnslb.GetLooking, in the calls of deadline_calls.go): hcn's gets are
// filtered listings, and one get's "not found" forgot an object of
// hnsproxy's at Start, made a realized one again beside the one HNS held,
// or took the network for gone.
const silentListings = hnslb.SilentLooks

// unlistedStale is an owned object no desired one uses that a listing
// left out: deleted, so that HNS's answer says whether it was still there
// (a delete's "not found" forgets it, as any of hnsproxy's deletes does).
// Quiet: nearly always it was gone already, deleted behind hnsproxy's back.
func unlistedStale() *staleObj {
	return &staleObj{reason: "ours, left out of HNS's listing", quiet: true}
}

// unreadStale is an owned object that Start's or a repair's listing left
// out past maxUnlistedReads: deleted by ID after what is desired is made, a
// bounded number per Sync, since nearly always HNS lost it.
func unreadStale() *staleObj {
	return &staleObj{reason: "ours, left out of HNS's listing and not read", quiet: true, deferred: true}
}

// maxUnlistedReads bounds the reads by ID at Start. A listing that left out
// more of hnsproxy's objects than this did so mostly because HNS lost them
// (a reboot, a restart that dropped objects, a runbook), and reading each
// of thousands by ID, each an enumeration, would hold the start for
// nothing. Mostly, not all: the listing that meets such a loss may leave
// out one HNS still holds, as any listing may. Forgotten unread, that one
// was another program's for good: where HNS drops remote endpoint names,
// nothing claims it again, and once its Service went it stayed in HNS
// (the fault soak: a restart whose state file still owned 362 objects HNS
// had deleted, while the state directory was full, left out one remote
// endpoint HNS held). So past the cap they stay owned and are deleted by
// ID, unread (unreadStale): one call each, not a read's four, and its "not
// found" forgets the one HNS lost. The deletes wait for what is desired to
// be made and for a repair's work, maxUnlistedReads of them per Sync
// (syncStale), so neither a node reboot's full sync nor the recovery from
// an HNS restart is held back by them.
const maxUnlistedReads = 256

// readUnlistedAtStart reads by ID each object the state file owns that
// Start's listing left out, and each endpoint its load balancers name that
// the listing left out, and adds those HNS holds on the network in use
// to the listing, so that Start adopts or deletes them as if listed; one
// HNS does not find, and one no HNS object can have (not a GUID: a state
// file damaged by hand), is forgotten as before. An HNS that does not answer a read, asked startReadTries times,
// fails the Start, as a failed listing does. A read answered with another
// error (the parameter is incorrect, a code HNS does not document) says
// neither that HNS holds the object nor that it is gone: that ID is
// returned as unread, deleted by ID as past the cap. Before, such an
// answer forgot it, and a load balancer of a Service deleted meanwhile
// stayed in HNS for good (TestRandomHistoriesConverge, seed 36, once
// listings left objects out). Usually nothing is left out:
// the reads are for what was deleted behind hnsproxy's back while it was
// down. Past maxUnlistedReads
// none is read: they are returned as unread, for Start to delete by ID.
// Called with r.mu held, as Start's listing is.
func (r *Reconciler) readUnlistedAtStart(ctx context.Context, st *stateFile, lbs []hnslb.LoadBalancer, eps []hnslb.Endpoint) ([]hnslb.LoadBalancer, []hnslb.Endpoint, unreadAtStart, error) {
	listed := map[string]struct{}{}
	for i := range lbs {
		listed[strings.ToLower(lbs[i].ID)] = struct{}{}
	}
	for i := range eps {
		listed[strings.ToLower(eps[i].ID)] = struct{}{}
	}
	unlisted := func(ids []string) []string {
		var out []string
		for _, id := range ids {
			if _, ok := listed[strings.ToLower(id)]; !ok && hnslb.IsGUID(id) {
				listed[strings.ToLower(id)] = struct{}{} // each ID read once
				out = append(out, id)
			}
		}
		return out
	}
	lbIDs, epIDs := unlisted(st.ownedLBs()), unlisted(st.ownedEPs())
	if n := len(lbIDs) + len(epIDs); n > maxUnlistedReads {
		r.log.Info("HNS no longer lists many objects of hnsproxy's; deleting them by ID, unread, once what is desired is made",
			"loadBalancers", len(lbIDs), "endpoints", len(epIDs))
		return lbs, eps, unreadAtStart{lbs: lbIDs, eps: epIDs}, nil
	}
	var unread unreadAtStart
	for _, id := range lbIDs {
		lb, err := readAtStart(func() (*hnslb.LoadBalancer, error) { return r.client.GetLoadBalancerByID(ctx, id) })
		switch {
		case err == nil:
			r.log.Info("HNS's listing left out a load balancer of hnsproxy's that a read by ID finds; keeping it", "id", lb.ID)
			lbs = append(lbs, *lb)
		case hnslb.IsUnavailable(err):
			return nil, nil, unreadAtStart{}, &startListingError{fmt.Errorf("reconciler start: read load balancer %s the listing left out: %w", id, err)}
		case !hnslb.IsNotFound(err):
			unread.lbs = append(unread.lbs, id)
		}
	}
	named := unlisted(namedEndpoints(lbs, st))
	if n := len(lbIDs) + len(epIDs) + len(named); n > maxUnlistedReads {
		r.log.Info("HNS no longer lists many endpoints hnsproxy's load balancers name; reading none of them", "endpoints", len(named))
		named = nil
	}
	for i, id := range append(epIDs, named...) {
		ep, err := readAtStart(func() (*hnslb.Endpoint, error) { return r.client.GetEndpointByID(ctx, id) })
		switch {
		case err == nil && strings.EqualFold(ep.HostComputeNetwork, r.opts.NetworkID):
			r.log.Info("HNS's listing left out an endpoint of hnsproxy's, or one its load balancers name, that a read by ID finds; keeping it", "id", ep.ID)
			eps = append(eps, *ep)
		case hnslb.IsUnavailable(err):
			return nil, nil, unreadAtStart{}, &startListingError{fmt.Errorf("reconciler start: read endpoint %s the listing left out: %w", id, err)}
		case err != nil && !hnslb.IsNotFound(err) && i < len(epIDs):
			unread.eps = append(unread.eps, id)
		}
	}
	if len(unread.lbs)+len(unread.eps) > 0 {
		r.log.Info("HNS answered reads of objects of hnsproxy's its listing left out with neither the object nor its absence; deleting them by ID, unread, once what is desired is made",
			"loadBalancers", len(unread.lbs), "endpoints", len(unread.eps))
	}
	return lbs, eps, unread, nil
}

// startReadTries is how often Start asks HNS for one object before the
// start fails: those reads may be hundreds, and where one reply in ten is
// lost (the fault soak's HNS), a start that failed at the first lost one
// kept failing for its whole minute, and hnsproxy exited.
const startReadTries = 3

// readAtStart reads one object for Start, asking again at once when HNS
// did not answer; an HNS that is down fails each try.
func readAtStart[T any](read func() (*T, error)) (*T, error) {
	for try := 1; ; try++ {
		v, err := read()
		if err == nil || !hnslb.IsUnavailable(err) || try == startReadTries {
			return v, err
		}
	}
}

// unreadAtStart are the IDs the state file owns that Start's listing left
// out and, past maxUnlistedReads, did not read.
type unreadAtStart struct{ lbs, eps []string }

// ownUnread keeps the unread IDs owned, each to be deleted by ID
// (unreadStale); an ID already stale (an endpoint on another network,
// othernetwork.go) keeps its own reason.
func (r *Reconciler) ownUnread(u unreadAtStart) {
	for _, id := range u.lbs {
		r.ownToDelete(recordLoadBalancer, r.staleLBs, id)
	}
	for _, id := range u.eps {
		r.ownToDelete(recordRemoteEndpoint, r.staleEPs, id)
	}
}

// ownToDelete owns id, of kind, as unreadStale in stale, unless it is
// stale already.
func (r *Reconciler) ownToDelete(kind recordKind, stale map[string]*staleObj, id string) {
	if stale[id] == nil {
		r.own(kind, id)
		stale[id] = unreadStale()
	}
}

// namedEndpoints are the endpoint IDs that the load balancers the state
// file owns name. A pod's endpoint is the CNI's, found through listings
// alone: one Start's listing left out would leave its load balancers
// without it, replaced where HNS cannot modify, and deleted with every pod
// of theirs left out (TestARestartWhoseListingsLeaveOutThePodsKeepsTheirLoadBalancer).
// Outside a listing fault the ones not listed are the endpoints of pods
// deleted while hnsproxy was down.
func namedEndpoints(lbs []hnslb.LoadBalancer, st *stateFile) []string {
	owned := foldedSet(st.ownedLBs())
	var ids []string
	for i := range lbs {
		if _, ours := owned[strings.ToLower(lbs[i].ID)]; ours {
			ids = append(ids, lbs[i].HostComputeEndpoints...)
		}
	}
	return ids
}

// leftOutOf are the IDs of owned that listed does not show, each once,
// matched whatever the case of their GUIDs.
func leftOutOf[T any](owned []string, listed []T, id func(*T) string) []string {
	shown := make(map[string]struct{}, len(listed))
	for i := range listed {
		shown[strings.ToLower(id(&listed[i]))] = struct{}{}
	}
	var out []string
	for _, o := range owned {
		if addNew(shown, strings.ToLower(o)) {
			out = append(out, o)
		}
	}
	return out
}
