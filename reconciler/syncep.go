package reconciler

import (
	"fmt"
	"slices"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

// syncWantedEP creates (or replaces) a desired remote endpoint.
func (r *Reconciler) syncWantedEP(run *syncRun, ip string) {
	ep := r.eps[ip]
	ref := objectRef{ip: ip}
	delete(r.retryEPs, ip)
	ahead, madeAhead := run.epCreates[ip]
	if !madeAhead && r.awaitingAbandoned(run, ref, &ep.st, epToken(ip), idToken(ep.id)) {
		return
	}
	if ep.id != "" && remoteMatches(ep.spec, ep.realizedSpec) {
		r.succeed(ref, &ep.st)
		return
	}
	if run.noCreates {
		r.wait(run, ref, &ep.st, errStateUnwritable)
		return
	}
	if ep.id != "" {
		if err := r.removeEP(run, ep); err != nil {
			r.fail(run, ref, &ep.st, KindRemoteEndpoint, ip, err)
			return
		}
	}
	got, wrote, err := r.createEP(run, ip, ep, ahead, madeAhead)
	if err != nil {
		if !isAwaiting(err) && !definitive(err) && ep.uncertain == nil {
			sent := ep.spec
			ep.uncertain = &sent
		}
		r.failOrWait(run, ref, &ep.st, KindRemoteEndpoint, ip, err)
		return
	}
	r.forgetEP(ip)
	ep.id, ep.realizedSpec, ep.uncertain = got.ID, ep.spec, nil
	r.resolveGen++
	r.own(recordRemoteEndpoint, got.ID)
	r.dropStale(r.staleEPs, got.ID) // adopted: a repair may have taken it for a leak
	if wrote {
		run.res.Created++
	}
	if wrote && !madeAhead { // a batch's creates taught it already (endpointsMadeAhead)
		r.learnNames(namesShown(got))
	}
	r.succeed(ref, &ep.st)
	// Load balancers that had to leave this backend out can use it now.
	for k := range r.waiting[ip] {
		run.lbs[k] = struct{}{}
	}
}

// createEP creates ep's remote endpoint at ip: the create made ahead in
// this Sync, if any, else a call now. If HNS refuses it because the address
// is taken (made by someone else, or by us before a lost reply: same IP,
// same network), ep waits for a listing to show what holds it (lookup.go);
// an endpoint of ep's kind that matches its spec is then adopted, and one
// of ours that does not, which nothing uses (HNS kept it after its delete,
// deleted.go), is deleted before the create. A create refused again after
// such a listing fails with HNS's error, the answer kept for the next try;
// where no listing showed a holder, only after silentListings listings.
// wrote is false when nothing was created.
func (r *Reconciler) createEP(run *syncRun, ip string, ep *remoteEP, ahead createdEP, madeAhead bool) (got *hnslb.Endpoint, wrote bool, err error) {
	listed := false
	var holders []*hnslb.Endpoint // what the listing showed on ip, but one of ours deleted now
	if l := r.lookups.eps[ip]; l != nil && l.purpose == lookupLocalFirst && !l.answered {
		return nil, false, awaiting(whyLocal) // nodeunknown.go
	}
	if l := r.lookups.eps[ip]; l != nil && l.purpose != lookupAddress {
		r.forgetEP(ip) // a create now: what a lost one made is its to meet
	} else if l != nil {
		if !l.answered {
			return nil, false, awaiting(whyAddress)
		}
		found := endpointOfKind(l.found, ep.spec.Local)
		if found != nil && remoteMatches(ep.spec, remoteSpecOf(found)) {
			r.log.Info("Adopted existing remote endpoint", "ip", ip, "id", found.ID)
			return found, false, nil
		}
		if found != nil && r.lostEndpoint(ep, found) {
			// A lost create's, of a spec since changed: ours, so replaced.
			r.own(recordRemoteEndpoint, found.ID)
		}
		holders = l.found
		if found != nil && r.unusedEPOfOurs(found.ID) {
			r.log.Info("Deleting an endpoint of ours that holds the address", "ip", ip, "id", found.ID)
			err := r.client.DeleteEndpoint(run.ctx, found.ID)
			if err != nil && !hnslb.IsNotFound(err) {
				return nil, false, fmt.Errorf("deleting endpoint %s of ours, which holds the address: %w", found.ID, err)
			}
			r.afterDelete(recordRemoteEndpoint, found.ID, err)
			run.res.Deleted++
			holders = slices.DeleteFunc(slices.Clone(holders), func(h *hnslb.Endpoint) bool { return h == found })
		}
		listed = true
	}
	got, err = ahead.reply(), ahead.err
	if !madeAhead {
		got, err = r.client.CreateEndpoint(run.ctx, r.opts.NetworkID, buildRemoteEndpoint(r.opts.NetworkID, ep.spec))
	}
	if hnslb.IsAddressRefused(err) {
		if !listed {
			r.askEP(ip, lookupAddress)
			return nil, false, awaiting(whyAddress)
		}
		if len(holders) == 0 && r.askAddressAgain(ip) {
			return nil, false, awaiting(whyAddress)
		}
		err = &AddressRefusedError{IP: ip, Holders: holders, Err: err}
	}
	return got, err == nil, err
}

// lostEndpoint reports whether listed, an endpoint on ep's address, is
// what ep's lost create made: nobody's, and of the spec that create sent
// or bearing hnsproxy's name (names.go). A restart claims it by the same
// marks (claimInterrupted: a declared address, or our name); matched only
// against the spec desired now, one made before the spec changed (a pod's
// address reused on another node) held the address for good, refused as
// another program's.
func (r *Reconciler) lostEndpoint(ep *remoteEP, listed *hnslb.Endpoint) bool {
	if ep.uncertain == nil || has(r.ownedEPs, listed.ID) || r.unconfirmed.has(listed.ID) {
		return false
	}
	return remoteMatches(*ep.uncertain, remoteSpecOf(listed)) || namedOurs(listed)
}

// endpointOfKind is the first of eps that is remote, or local when local
// is set (the kind of endpoint hnsproxy makes for the address).
func endpointOfKind(eps []*hnslb.Endpoint, local bool) *hnslb.Endpoint {
	for _, ep := range eps {
		if ep.IsRemote() != local {
			return ep
		}
	}
	return nil
}

// syncUnwantedEP deletes a remote endpoint no longer desired, once no
// realized load balancer uses it.
func (r *Reconciler) syncUnwantedEP(run *syncRun, ip string) {
	ep := r.eps[ip]
	ref := objectRef{ip: ip}
	delete(r.retryEPs, ip)
	if r.awaitingAbandoned(run, ref, &ep.st, epToken(ip), idToken(ep.id)) {
		return
	}
	if ep.id == "" && ep.uncertain != nil {
		// A lost create may have made it: a listing begun after it finds
		// it (lookup.go), and it is deleted.
		found, answered := r.epAnswer(ip, lookupLostCreate)
		if !answered {
			r.wait(run, ref, &ep.st, awaiting(whyLostEP))
			return
		}
		r.forgetEP(ip)
		if f := endpointOfKind(found, ep.spec.Local); f != nil && (remoteMatches(ep.spec, remoteSpecOf(f)) || r.lostEndpoint(ep, f)) {
			// Ours from here, in the state file too: the declaration that
			// made it ours until now is withdrawn at the Sync's end, and
			// the delete may fail before a restart.
			ep.id = f.ID
			r.own(recordRemoteEndpoint, f.ID)
		}
		ep.uncertain = nil
	}
	if ep.id != "" {
		if n := len(r.refs[ep.id]); n > 0 {
			r.wait(run, ref, &ep.st, fmt.Errorf("not deleted yet: %d realized load balancers still use it", n))
			return
		}
		err := r.deleteEndpointOnce(run, ip, ep.id)
		if err != nil && !hnslb.IsNotFound(err) {
			r.fail(run, ref, &ep.st, KindRemoteEndpoint, ip, err)
			return
		}
		r.afterDelete(recordRemoteEndpoint, ep.id, err)
		run.res.Deleted++
	}
	if ep.wanted { // shadowed (nodeunknown.go): kept for when the local endpoint goes
		ep.id, ep.realizedSpec = "", intent.RemoteEndpoint{}
		r.forgetEP(ip) // what a lookup found for its create
		r.resolveGen++
		r.succeed(ref, &ep.st)
		return
	}
	r.limiter.Forget(ref)
	r.published.epGone(ip, ep)
	r.forgetEP(ip)
	delete(r.eps, ip)
	r.resolveGen++
}
