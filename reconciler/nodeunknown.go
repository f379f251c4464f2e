package reconciler

// Backends whose node is unknown (intent.Backend.NodeUnknown): an
// EndpointSlice endpoint that names no node, which may be a pod of this
// node. kube-proxy counts it remote for the traffic policies (the desired
// state does too), but winkernel uses whatever HNS endpoint holds the
// address, a pod's local endpoint first, before it creates a remote one. A
// remote endpoint beside the pod's sends the pod's traffic to another node
// on Windows Server 2019 and 2022 (kubernetes/kubernetes#138000), and
// Windows Server 2025 refuses it. So such a backend resolves to the local
// endpoint the index holds at its address, and its remote endpoint
// (intent.RemoteEndpoint.UnlessLocal) is shadowed while the index holds
// one: not created, and hnsproxy's own deleted once no load balancer uses
// it. Before a shadowable endpoint is first created the namespaces are
// asked for a local endpoint at its address (refreshLocalIfNeeded), or,
// where they cannot tell, a listing of the network (askLocalFirst); a pod
// that comes to hold the address after, or goes while the slice still
// lists it, is seen by the next listing of the network (Repair, Lookup),
// and the load balancers move to the local endpoint or back to the remote.

import (
	"maps"

	"github.com/hnsproxy/hnsproxy/intent"
)

// shadow sets whether ep, the desired endpoint at ip, is shadowed by a
// local endpoint the index holds, or for the source VIP by another
// program's endpoint (borrowedvip.go), and reports whether that changed.
func (r *Reconciler) shadow(ip string, ep *remoteEP) bool {
	now := ep.spec.UnlessLocal && r.localIndex[ip] != "" || r.borrowed(ip, ep) != ""
	if now == ep.shadowed {
		return false
	}
	ep.shadowed = now
	r.resolveGen++
	if now && !ep.spec.UnlessLocal {
		r.logBorrowed(ip)
	}
	return true
}

// shadowedBy is the local endpoint that shadows ep, the endpoint at ip, or "".
func (r *Reconciler) shadowedBy(ip string, ep *remoteEP) string {
	if !ep.shadowed {
		return ""
	}
	if id := r.borrowed(ip, ep); id != "" {
		return id
	}
	return r.localIndex[ip]
}

// unindexedUnknownNode are the addresses of, among ips, the wanted endpoints
// that a local endpoint would shadow, not created yet, whose address the
// index does not hold.
func (r *Reconciler) unindexedUnknownNode(ips []string) []string {
	var out []string
	for _, ip := range ips {
		if ep := r.eps[ip]; ep != nil && ep.wanted && ep.spec.UnlessLocal && ep.id == "" && r.localIndex[ip] == "" {
			out = append(out, ip)
		}
	}
	return out
}

// indexChanging returns a copy of the index for localsMoved to compare
// with after it changes. The index holds this node's pods only, a few
// hundred at most: copying it costs less than looking through every
// remote endpoint for one a local endpoint could shadow.
func (r *Reconciler) indexChanging() map[string]string { return maps.Clone(r.localIndex) }

// localsMoved shadows or unshadows the endpoints at the addresses whose
// local endpoint changed since before (indexChanging's copy), and marks
// them and the load balancers that use or left out what their backends
// resolved to. run is the Sync under way, if any: its load balancers to
// process gain those.
func (r *Reconciler) localsMoved(run *syncRun, before map[string]string) {
	for ip, id := range r.localIndex {
		if before[ip] != id {
			r.localMoved(run, ip, before[ip])
		}
	}
	for ip, id := range before {
		if _, ok := r.localIndex[ip]; !ok {
			r.localMoved(run, ip, id)
		}
	}
}

// localMoved is localsMoved for one address, whose local endpoint was was.
// A remote endpoint another Service's slice wants outright (it places the
// address on another node) is not shadowed, but a backend of unknown node
// at the address still resolves to the local endpoint while the index
// holds one: its load balancers move all the same. So do those of a pod's
// address with no remote endpoint at all: the index may learn a pod's new
// endpoint while it looks for another pod's (indexFromNamespaces indexes
// every endpoint the namespaces show), and a load balancer that names the
// old one, or left the address out waiting for it, is then marked by
// nothing else, as the pod's return (LocalReturned) finds the address
// indexed.
func (r *Reconciler) localMoved(run *syncRun, ip, was string) {
	ids := []string{was}
	ep := r.eps[ip]
	wanted := ep != nil && ep.wanted
	if wanted {
		if ep.spec.UnlessLocal {
			r.shadow(ip, ep)
			r.markEP(ip)
		}
		ids = append(ids, ep.id)
	}
	r.resolveGen++
	mark := func(e *lbEntry) {
		r.markLB(e)
		if run != nil {
			run.lbs[e.key] = struct{}{}
			if !wanted {
				// This Sync writes it; nothing is left for the next.
				delete(r.dirtyLBs, e.key)
			}
		}
	}
	for _, id := range ids {
		if id != "" {
			for _, e := range r.refs[id] {
				mark(e)
			}
		}
	}
	for k := range r.waiting[ip] {
		if e := r.lbs[k]; e != nil {
			mark(e)
		}
	}
}

// askLocalFirst has the remote endpoints at ips, which the namespaces could
// not tell whether a pod of this node holds, wait for a listing of the
// network before their first create (createEP): made at once, one beside a
// pod's local endpoint would send the pod's traffic to another node until
// the next drift repair. The listing indexes what it finds (Lookup,
// Repair), which shadows them; finding nothing, they are created.
func (r *Reconciler) askLocalFirst(ips []string) {
	for _, ip := range ips {
		if r.localIndex[ip] == "" && r.lookups.eps[ip] == nil {
			r.askEP(ip, lookupLocalFirst)
		}
	}
}

// resolvesLocal reports whether b resolves to a local endpoint.
func (r *Reconciler) resolvesLocal(b intent.Backend) bool {
	return b.Local || b.NodeUnknown && r.localIndex[b.IP] != ""
}
