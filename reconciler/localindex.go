package reconciler

import (
	"encoding/json"
	"maps"
	"net/netip"
	"strings"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// The local index maps each local (CNI-made) endpoint's IP to its HNS ID, so
// that load balancers can name pods on this node as backends. A pod that
// starts after the index was built is looked for here.

// refreshLocalIfNeeded finds the local endpoints of backends the index does
// not know, when a load balancer to process has one (a pod that just started
// on this node). Pods' endpoints sit in their HNS namespaces (the runtime
// makes one per pod, the CNI attaches the endpoint to it), so one namespace
// list and a get per endpoint not yet indexed find them without reading the
// network's thousands of remote endpoints. A backend that leaves unknown (a
// runtime that attaches endpoints otherwise, a host-network pod, an HNS
// error) is left out and asked of the next listing of the network
// (lookup.go), which marks the load balancers it finds it for. ips are the
// endpoints the Sync processes: one that a local endpoint would shadow is
// looked for too before its first create (nodeunknown.go). Not found in
// namespaces that told all they hold, it is remote and waits for no
// listing; where they could not tell (HNS failing), it does. The addresses
// RecheckLocal named are checked first (dropGoneRechecked): one whose
// endpoint HNS no longer has leaves the index, and is looked for here like
// a new pod's if a load balancer to process still wants it.
func (r *Reconciler) refreshLocalIfNeeded(run *syncRun, ips []string) {
	if len(r.recheck) > 0 {
		before := r.indexChanging()
		r.recheck = r.dropGoneRechecked(run, r.recheck)
		r.localsMoved(run, before)
		r.scheduleRecheck(run)
	}
	missing := r.unindexedLocalBackends(run)
	unknown := r.unindexedUnknownNode(ips)
	if len(missing) == 0 && len(unknown) == 0 {
		return
	}
	asked := maps.Clone(missing)
	if asked == nil {
		asked = make(map[string]struct{}, len(unknown))
	}
	for _, ip := range unknown {
		asked[ip] = struct{}{}
	}
	before := r.indexChanging()
	all, told := r.indexFromNamespaces(run, asked)
	r.localsMoved(run, before)
	if !all {
		r.askLocal(missing)
	}
	if !told {
		r.askLocalFirst(unknown)
	}
}

// forgetLocalBackends drops the index entries of a load balancer's local
// backends after HNS said one of its endpoints does not exist: a pod deleted
// and started again with the same IP has a new endpoint, and the retry must
// look it up rather than name the old ID forever.
func (r *Reconciler) forgetLocalBackends(e *lbEntry) {
	r.resolveGen++
	before := r.indexChanging()
	for _, b := range e.desired.Backends {
		if r.resolvesLocal(b) {
			delete(r.localIndex, b.IP)
		}
	}
	r.localsMoved(nil, before)
}

// RecheckLocal has the next Sync check that the local endpoints indexed
// at ips still exist: the proxier saw each address's pod leave its
// EndpointSlice or stop being ready, as a pod does whose sandbox, or whole
// self (a StatefulSet's), is made again, and the CNI may have replaced its
// HNS endpoint behind the same address. When the slice is back as it was
// by the Sync (within one --min-sync-period), the desired load balancers
// are unchanged and no write fails on the old ID to tell
// (forgetLocalBackends); before, the frontend stayed without the pod until
// a drift repair. The load balancers that use an address's indexed
// endpoint are processed; each address costs one get of its endpoint
// (dropGoneRechecked; one more at each later Sync while HNS cannot answer
// it), and a namespace listing and a write only where HNS no longer has it
// and a load balancer still wants the address. A pod whose endpoint stayed
// (a readiness probe failing) costs the get alone.
func (r *Reconciler) RecheckLocal(ips []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ip := range ips {
		was := r.localIndex[ip]
		if was == "" {
			continue
		}
		if r.recheck == nil {
			r.recheck = make(map[string]struct{}, len(ips))
		}
		r.recheck[ip] = struct{}{}
		for _, e := range r.refs[was] {
			r.markLB(e)
		}
	}
}

// LocalReturned has the next Sync look again for the local endpoints at
// ips that load balancers left out for want of one: the proxier saw each
// address's pod of this node come back to serving. A publishNotReadyAddresses
// Service keeps such a pod ready while its sandbox is made again, so its load
// balancers kept wanting it; the Sync that found the old endpoint gone
// (RecheckLocal) may have found no new one yet, nor the listing after it
// (lookups.unfound, asked again by the drift repair alone), and the pod's
// return changes no desired load balancer. Without this they waited for
// their retry's backoff (up to RetryMax). An address indexed, or that no
// load balancer waits for, costs nothing.
//
// The return also starts those load balancers' backoff over: the pod's
// absence grew it, and the new endpoint may still be in the making (the
// CNI's ADD running) at the Sync the return marks them for. Their retries
// then look again after RetryBase, twice that, and so on, so the endpoint
// is written within about the time it took to appear, where it waited up
// to RetryMax. It keeps nothing: an address that never gets an endpoint (a
// host-network pod's) costs the few namespace listings of those retries
// before the backoff is back at RetryMax, and nothing once its pod leaves
// the slices.
func (r *Reconciler) LocalReturned(ips []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ip := range ips {
		if r.localIndex[ip] != "" {
			continue
		}
		delete(r.lookups.unfound, ip)
		for k := range r.waiting[ip] {
			if e := r.lbs[k]; e != nil {
				r.markLB(e)
				r.restartBackoff(objectRef{lb: k}, &e.st)
			}
		}
	}
}

// unindexedLocalBackends are the local backends, of the load balancers this
// Sync processes, that the index lacks.
func (r *Reconciler) unindexedLocalBackends(run *syncRun) map[string]struct{} {
	var missing map[string]struct{}
	for k := range run.lbs {
		e := r.lbs[k]
		if e == nil || e.desired == nil {
			continue
		}
		for _, b := range e.desired.Backends {
			if b.Local && r.localIndex[b.IP] == "" {
				if missing == nil {
					missing = map[string]struct{}{}
				}
				missing[b.IP] = struct{}{}
			}
		}
	}
	return missing
}

// indexFromNamespaces indexes the endpoints attached to namespaces that the
// index does not hold yet, and reports whether every missing IP was found,
// and whether the namespaces told all they hold (listed, and each endpoint
// read or gone).
func (r *Reconciler) indexFromNamespaces(run *syncRun, missing map[string]struct{}) (all, told bool) {
	namespaces, err := r.client.ListNamespaces(run.ctx)
	if err != nil {
		r.log.V(2).Info("Listing namespaces to find new local endpoints failed; listing the network", "err", err)
		return false, false
	}
	ids := namespaceEndpointIDs(namespaces)
	told = true
	// GUIDs compare without case: HNS may answer them in either
	// (sim.Echo.UpperGUIDs), and the index holds what it answered.
	indexed := make(map[string]struct{}, len(r.localIndex))
	for _, id := range r.localIndex {
		indexed[strings.ToLower(id)] = struct{}{}
	}
	for _, id := range ids {
		if _, ok := indexed[strings.ToLower(id)]; ok {
			continue
		}
		indexed[strings.ToLower(id)] = struct{}{}
		ep, err := r.client.GetEndpointByID(run.ctx, id)
		if err != nil {
			// Gone since the list, or HNS failing: the network list decides.
			r.log.V(4).Info("Reading a namespace's endpoint failed", "id", id, "err", err)
			told = told && hnslb.IsNotFound(err)
			continue
		}
		if ep.IsRemote() {
			continue
		}
		if !strings.EqualFold(ep.HostComputeNetwork, r.opts.NetworkID) {
			// A pod a load balancer waits for, on another network: ours
			// may have been replaced (network.go).
			if holdsAny(ep, missing) {
				r.client.suspect.set.Store(true)
			}
			continue
		}
		indexLocal(r.localIndex, ep)
		r.resolveGen++
	}
	for ip := range missing {
		if r.localIndex[ip] == "" {
			return false, told
		}
	}
	return true, told
}

// dropGoneRechecked drops the index entries of the rechecked addresses
// whose endpoint HNS no longer has: the pod went, or its sandbox did and
// the CNI replaced its endpoint. A load balancer that wants the address
// then looks it up in the namespaces, as a new pod's, rather than naming
// the old ID, failing, and waiting for its retry (forgetLocalBackends).
// One get an address, no listing: endpoint IDs are never reused, so one
// HNS still has is the pod's still. It returns the addresses HNS could not
// answer for (failing, or the get past its deadline): their entries stay,
// and the next Sync asks again, as a load balancer whose desired document
// is unchanged writes nothing that would find the old ID gone.
func (r *Reconciler) dropGoneRechecked(run *syncRun, recheck map[string]struct{}) (untold map[string]struct{}) {
	for ip := range recheck {
		id := r.localIndex[ip]
		if id == "" {
			continue
		}
		switch _, err := r.client.GetEndpointByID(run.ctx, id); {
		case hnslb.IsNotFound(err):
			delete(r.localIndex, ip)
			r.resolveGen++
			for _, e := range r.refs[id] { // RecheckLocal's, unless an earlier Sync's get failed
				run.lbs[e.key] = struct{}{}
			}
		case err != nil:
			if untold == nil {
				untold = map[string]struct{}{}
			}
			untold[ip] = struct{}{}
		}
	}
	return untold
}

// recheckRef keys the backoff of rechecks HNS could not answer: one for
// them all, as one HNS fails them all.
var recheckRef = objectRef{id: "local-endpoint-recheck"}

// scheduleRecheck has a Sync ask again for the rechecks HNS could not
// answer, after a backoff that grows while it stays silent. Their load
// balancers' documents are unchanged, so no write or retry of theirs would
// run one before the periodic sync.
func (r *Reconciler) scheduleRecheck(run *syncRun) {
	if len(r.recheck) == 0 {
		r.limiter.Forget(recheckRef)
		r.recheckAt = time.Time{}
		return
	}
	r.recheckAt = run.now.Add(r.limiter.When(recheckRef))
}

// holdsAny reports whether ep has one of ips.
func holdsAny(ep *hnslb.Endpoint, ips map[string]struct{}) bool {
	idx := map[string]string{}
	indexLocal(idx, ep)
	for ip := range idx {
		if _, ok := ips[ip]; ok {
			return true
		}
	}
	return false
}

// namespaceEndpointIDs are the IDs of the endpoints attached to namespaces.
func namespaceEndpointIDs(namespaces []hnslb.Namespace) []string {
	var ids []string
	for _, ns := range namespaces {
		for _, res := range ns.Resources {
			if res.Type != hnslb.NamespaceResourceTypeEndpoint {
				continue
			}
			var data hnslb.NamespaceResourceEndpoint
			if err := json.Unmarshal(res.Data, &data); err == nil && data.ID != "" {
				ids = append(ids, data.ID)
			}
		}
	}
	return ids
}

// indexLocal records every address of a local endpoint: a dual-stack pod's
// endpoint backs both its intent.IPv4 and its intent.IPv6 load balancers.
func indexLocal(idx map[string]string, ep *hnslb.Endpoint) {
	for _, c := range ep.IpConfigurations {
		ip := c.IpAddress
		if a, err := netip.ParseAddr(ip); err == nil {
			ip = a.Unmap().String()
		}
		idx[ip] = ep.ID
	}
}
