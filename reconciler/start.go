package reconciler

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/klog/v2"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

// Start loads the state file and lists HNS once (load balancers and the
// network's endpoints) to adopt what already exists:
//   - a load balancer or remote endpoint identical to a desired one is kept
//     and adopted, without any HNS write;
//   - one of ours (in the state file) that no desired object claims is
//     deleted by the first Sync, so call Sync only once the desired state
//     is complete;
//   - a foreign one is left alone unless it sits on a desired frontend
//     (same intent.LBKey) and hnsproxy may take it (foreign.go): then it is
//     adopted if identical, else the next Sync deletes it and logs why.
//
// Desired state may be set before or after Start; objects listed at Start
// are matched against Upserts and UpsertEndpoints until the first Sync. If
// the state file is corrupt it is logged, set aside and treated as empty:
// then nothing is
// ours, and the Start is a takeover (foreign.go).
// If it cannot be read, Start fails with a transient error (see loadOwned).
// Start can be retried after an error; after success it does nothing.
// A listing HNS fails is transient whatever its code (startListingError).
func (r *Reconciler) Start(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flushStatusLocked()
	if r.started {
		return nil
	}
	if r.client == nil {
		return errors.New("reconciler: no HNS client")
	}
	if r.opts.NetworkID == "" {
		return errors.New("reconciler: no HNS network ID")
	}
	owned, err := r.loadOwned()
	if err != nil {
		return err
	}
	r.restoreLearnedCap(owned.LearnedBackendCap)
	r.takeover = owned.fresh || owned.TakeoverPending || r.opts.Takeover != "" && r.opts.Takeover != owned.Takeover
	r.takeoverToken = owned.Takeover
	if r.opts.Takeover != "" {
		r.takeoverToken = r.opts.Takeover
	}
	if inst, err := r.client.ServiceInstance(ctx); err == nil {
		r.instance = instanceWatch{last: inst, nextCheck: r.clock.Now().Add(instanceCheckInterval)}
	}
	lbs, err := r.client.ListLoadBalancers(ctx)
	if err != nil {
		return &startListingError{fmt.Errorf("reconciler start: list load balancers: %w", err)}
	}
	eps, err := r.client.ListEndpointsOfNetwork(ctx, r.opts.NetworkID)
	if err != nil {
		if !hnslb.IsUnavailable(err) {
			// The network may have gone since the caller read it, and which
			// code a listing of a network gone answers is not known ("not
			// found" is modelled): whatever HNS answered, a start then ends
			// as a Sync that meets the change does (network.go), rather than
			// retrying the listing as transient. Not when HNS did not answer
			// (unavailable, hung): then it cannot tell.
			if changed := r.checkNetwork(ctx); changed != nil {
				return changed
			}
		}
		return &startListingError{fmt.Errorf("reconciler start: list endpoints of network %q: %w", r.opts.NetworkID, err)}
	}
	lbs, eps, unread, err := r.readUnlistedAtStart(ctx, owned, lbs, eps)
	if err != nil {
		return err
	}

	// GUIDs are matched case-insensitively: HNS's answers need not keep the
	// case they had when the state file recorded them (baseline.go).
	ownedLB, ownedEP := foldedSet(owned.ownedLBs()), foldedSet(owned.ownedEPs())
	r.staleElsewhere(ctx, owned, ownedEP, eps)
	r.keptBeforeStart(owned, lbs, eps)
	baselines := make(map[string]string, len(owned.LoadBalancerBaselines))
	for id, b := range owned.LoadBalancerBaselines {
		baselines[strings.ToLower(id)] = b
	}
	r.namesSeen(eps)
	claimed := claimInterrupted(r.log, owned, lbs, eps, ownedLB, ownedEP)
	r.claimPartialsAtStart(owned.FailedLoadBalancerCreates, lbs)
	r.carryDeclarations(owned, lbs, eps)
	r.orphanLBs = map[intent.LBKey][]hnslb.LoadBalancer{}
	for _, lb := range lbs {
		if _, ok := ownedLB[strings.ToLower(lb.ID)]; ok {
			r.ownedLBs[lb.ID] = struct{}{}
			if b := baselines[strings.ToLower(lb.ID)]; b != "" {
				r.baselines[lb.ID] = b
			} else if _, ok := claimed[strings.ToLower(lb.ID)]; ok {
				// Only a create hnsproxy did not live to record leaves its
				// document unknown (baseline.go). One owned by ID without a
				// baseline (an older hnsproxy's state file) is judged by
				// adoptionMatch: taken as possibly sticky, every one that
				// wants no affinity was replaced where HNS modifies.
				r.sentUnknown[strings.ToLower(lb.ID)] = struct{}{}
			}
		}
		if key, ok := KeyOf(&lb); ok {
			r.orphanLBs[key] = append(r.orphanLBs[key], lb)
		} else if _, ours := ownedLB[strings.ToLower(lb.ID)]; ours {
			r.staleLBs[lb.ID] = &staleObj{reason: "ours, of a shape hnsproxy does not make"}
		}
	}
	r.claimedSent(claimed, owned.sentOf())
	r.orphanEPs = map[string]hnslb.Endpoint{}
	r.localIndex = map[string]string{}
	r.heldByOthers = map[string]othersEndpoint{}
	r.resolveGen++
	for _, ep := range eps {
		_, ours := ownedEP[strings.ToLower(ep.ID)]
		if ours {
			r.ownedEPs[ep.ID] = struct{}{}
		} else if r.heldByOthers[ep.IP()].id == "" {
			r.heldByOthers[ep.IP()] = othersEndpoint{id: ep.ID, name: ep.Name, spec: remoteSpecOf(&ep)}
		}
		switch {
		case !ep.IsRemote():
			indexLocal(r.localIndex, &ep)
			// A local endpoint we made (the overlay source VIP) is adopted
			// like a remote one; the CNI's pod endpoints never are.
			if ours && r.orphanEPs[ep.IP()].ID == "" {
				r.orphanEPs[ep.IP()] = ep
			}
		case r.orphanEPs[ep.IP()].ID == "":
			r.orphanEPs[ep.IP()] = ep
		case ours:
			r.staleEPs[ep.ID] = &staleObj{reason: "ours, a duplicate remote endpoint for " + ep.IP()}
		}
	}
	r.ownUnread(unread)
	for ip, ep := range r.eps { // upserted before Start, against no index
		r.shadow(ip, ep)
	}
	// A fresh snapshot: IDs in the state file that HNS no longer has are
	// forgotten, claimed ones recorded, and the journal starts empty.
	r.snapshotDue = true
	if err := r.compactState(); err != nil {
		r.logStateWriteFailed(err, "Writing hnsproxy state file failed; retrying after the next Sync")
	}
	r.started, r.pruned = true, false
	r.adoptOrphans()
	r.touchAll()
	r.log.V(2).Info("Started", "loadBalancers", len(lbs), "endpoints", len(eps),
		"ownedLoadBalancers", len(r.ownedLBs), "ownedRemoteEndpoints", len(r.ownedEPs))
	if r.takeover {
		r.log.Info("Taking over this node: foreign load balancers on desired frontends are adopted if identical, replaced otherwise, until the first Sync ends",
			"firstStart", owned.fresh, "resumed", owned.TakeoverPending, "token", r.opts.Takeover)
	}
	return nil
}

// claimInterrupted adds to ownedLB and ownedEP the listed objects nobody
// owns on a key or IP the state file declared as being created, and the
// remote endpoints nobody owns that bear our name (names.go): a create whose
// ID never reached the state file (see declareCreates). Start, Cleanup
// and hnsproxy-diag (Owned.Claim) claim alike. It returns the load
// balancers it claimed on a declared key, by lower-case ID.
func claimInterrupted(log klog.Logger, st *stateFile, lbs []hnslb.LoadBalancer, eps []hnslb.Endpoint, ownedLB, ownedEP map[string]struct{}) (claimed map[string]intent.LBKey) {
	keys := map[intent.LBKey]struct{}{}
	for _, k := range st.CreatingLoadBalancers {
		keys[k] = struct{}{}
	}
	ips := idSet(st.CreatingRemoteEndpoints)
	for i := range eps {
		if _, mine := ownedEP[strings.ToLower(eps[i].ID)]; mine || !eps[i].IsRemote() {
			continue
		}
		if _, declared := ips[eps[i].IP()]; declared || namedOurs(&eps[i]) {
			log.Info("Claiming a remote endpoint an interrupted create made", "ip", eps[i].IP(), "id", eps[i].ID, "named", !declared)
			ownedEP[strings.ToLower(eps[i].ID)] = struct{}{}
		}
	}
	// Remote endpoints claimed first: a load balancer that names a remote
	// endpoint none of ours is another program's, on a declared key or VIP
	// or not (another agent made it there after the kill, or its failed
	// create left it without port mappings; mayBeLateCreate asks the same
	// of a carried key's).
	theirs := foreignRemoteEndpoints(eps, ownedEP)
	declaredVIPs := declaredVIPsOf(keys)
	for i := range lbs {
		k, ok := KeyOf(&lbs[i])
		if _, mine := ownedLB[strings.ToLower(lbs[i].ID)]; mine {
			continue
		}
		if !ok {
			if portlessOnDeclared(&lbs[i], declaredVIPs) && !backsOnto(&lbs[i], theirs) {
				log.Info("Claiming a load balancer without port mappings on a declared frontend: what a failed create left whose record was lost", "id", lbs[i].ID, "frontendVIPs", lbs[i].FrontendVIPs)
				ownedLB[strings.ToLower(lbs[i].ID)] = struct{}{}
			}
			continue
		}
		if _, declared := keys[k]; declared && !backsOnto(&lbs[i], theirs) {
			log.Info("Claiming a load balancer an interrupted create made", "key", k, "id", lbs[i].ID)
			ownedLB[strings.ToLower(lbs[i].ID)] = struct{}{}
			if claimed == nil {
				claimed = map[string]intent.LBKey{}
			}
			claimed[strings.ToLower(lbs[i].ID)] = k
		}
	}
	return claimed
}

// foldedSet is the set of ids in lower case.
func foldedSet(ids []string) map[string]struct{} {
	m := make(map[string]struct{}, len(ids))
	for _, id := range ids {
		m[strings.ToLower(id)] = struct{}{}
	}
	return m
}

func idSet(ids []string) map[string]struct{} {
	m := make(map[string]struct{}, len(ids))
	for _, id := range ids {
		m[id] = struct{}{}
	}
	return m
}

// adopting reports the window between Start and the first Sync, in which
// objects listed at Start are matched against desired ones.
func (r *Reconciler) adopting() bool { return r.started && !r.pruned }

// adoptOrphans matches every desired object against those listed at Start:
// remote endpoints first, so identical load balancers using them are adopted.
func (r *Reconciler) adoptOrphans() {
	for ip := range r.eps {
		r.adoptEP(ip)
	}
	for k := range r.lbs {
		r.adoptLB(r.lbs[k])
	}
}

// adoptEP adopts the listed remote endpoint with a desired endpoint's IP:
// an existing remote endpoint for that IP on our network is what we would
// create, whoever made it. If its MAC or provider address differ, the next
// Sync replaces it.
func (r *Reconciler) adoptEP(ip string) {
	ep := r.eps[ip]
	found, ok := r.orphanEPs[ip]
	if ep == nil || !ep.desired() || ep.id != "" || !ok {
		return
	}
	delete(r.orphanEPs, ip)
	ep.id, ep.realizedSpec = found.ID, remoteSpecOf(&found)
	r.resolveGen++
	r.own(recordRemoteEndpoint, found.ID)
	if remoteMatches(ep.spec, ep.realizedSpec) {
		r.done(&ep.st)
		delete(r.dirtyEPs, ip)
	}
}

// adoptLB claims the listed load balancers with e's key: an unchanged one
// (by its baseline, else by adoptionMatch: baseline.go) is adopted as is; with modify support one of ours is adopted to be updated in
// place; every other one blocks e's frontend and is marked for deletion.
// Foreign ones take part only if hnsproxy may take them (foreign.go);
// otherwise they stay, and e's create reports them.
func (r *Reconciler) adoptLB(e *lbEntry) {
	cands := r.orphanLBs[e.key]
	if e.desired == nil || e.realizedID != "" || len(cands) == 0 || r.overLearnedCap(e.desired) {
		return
	}
	delete(r.orphanLBs, e.key)
	if !r.mayTakeForeign(e.desired) {
		cands = slices.DeleteFunc(slices.Clone(cands), func(lb hnslb.LoadBalancer) bool {
			_, ours := r.ownedLBs[lb.ID]
			if !ours && r.foreignHeld[e.key] == "" {
				r.foreignHeld[e.key] = lb.ID // known held: never declared (findHeldFrontends)
			}
			return !ours
		})
	}
	ids, missing := r.resolve(e.desired)
	doc := BuildLB(e.desired, ids)
	adopted := -1
	for i := range cands {
		if r.unchanged(doc, &cands[i]) {
			// One that leaves out backends with no endpoint yet is what
			// a Sync would write now: adopted too, but left to the first
			// Sync, which records what it waits for. Replacing it
			// cut its frontend at every restart where HNS cannot modify.
			adopted = i
			r.setRealized(e, cands[i].ID, doc, &cands[i])
			if len(missing) == 0 {
				r.done(&e.st)
				delete(r.dirtyLBs, e.key)
			}
			break
		}
	}
	if adopted < 0 && r.modifyOn() {
		for i := range cands {
			if _, ours := r.ownedLBs[cands[i].ID]; ours {
				adopted = i
				r.setRealized(e, cands[i].ID, r.readUnanswered(&cands[i], doc), nil)
				break
			}
		}
	}
	for i := range cands {
		if i == adopted {
			continue
		}
		reason := "foreign load balancer blocks desired frontend " + e.key.String()
		if _, ours := r.ownedLBs[cands[i].ID]; ours {
			reason = "ours, differs from desired " + e.key.String() + ": replaced"
		}
		r.log.Info("Load balancer will be deleted", "id", cands[i].ID, "reason", reason)
		r.staleLBs[cands[i].ID] = &staleObj{reason: reason}
	}
}

// pruneOrphans ends adoption at the first Sync: our own objects nothing
// claimed are marked for deletion, foreign ones are left alone, but for a
// remote endpoint on a local endpoint's address (sharedaddress.go).
func (r *Reconciler) pruneOrphans() {
	for _, cands := range r.orphanLBs {
		for _, lb := range cands {
			if _, ours := r.ownedLBs[lb.ID]; ours {
				r.staleLBs[lb.ID] = &staleObj{reason: "ours, no longer desired"}
			}
		}
	}
	for _, ep := range r.orphanEPs {
		if _, ours := r.ownedEPs[ep.ID]; ours {
			r.staleEPs[ep.ID] = &staleObj{reason: "ours, no longer desired"}
		} else if ep.IsRemote() && r.foreignOnLocalAddress(ep.ID, ep.IP(), r.localIndex) {
			r.markSharedAddress(ep.ID, ep.IP())
		}
	}
	r.orphanLBs, r.orphanEPs, r.pruned = nil, nil, true
}

// startListingError is a listing HNS failed at Start. It is transient
// (hnslb.IsTransient) whatever code HNS answered: a listing carries no input
// of ours that could be wrong, so only HNS's state failed it, and a caller
// that gave up would only have the process restarted to list again, behind
// the kubelet's crash-loop backoff.
type startListingError struct{ err error }

func (e *startListingError) Error() string   { return e.err.Error() }
func (e *startListingError) Unwrap() error   { return e.err }
func (e *startListingError) Transient() bool { return true }
