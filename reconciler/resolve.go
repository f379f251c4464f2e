package reconciler

import (
	"slices"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

// resolve maps a desired load balancer's backends to HNS endpoint IDs;
// missing are the IPs with no usable endpoint yet. A remote endpoint about
// to be replaced counts as missing. Each missing backend's place goes to
// the next spare that resolves (intent.LB.Spares): over the backend cap,
// only backends HNS can realize compete.
func (r *Reconciler) resolve(d *intent.LB) (ids, missing []string) {
	ids, missing, _, _ = r.resolveAfter(d, nil)
	return ids, missing
}

// resolveAfter is resolve for a load balancer written in the batch that
// first creates the endpoints of created (IP → the create's place in the
// batch): each such backend gets a place in ids that the create's ID
// fills. ok is false when the turns between the batch and the load
// balancer's own could resolve it otherwise: an endpoint it uses is
// replaced in its turn, or a spare would stand in for a backend missing
// now and resolve only once created.
func (r *Reconciler) resolveAfter(d *intent.LB, created map[string]int) (ids, missing []string, fills []endpointFill, ok bool) {
	ids = make([]string, 0, len(d.Backends))
	for i, b := range d.Backends {
		if i > 0 && d.Backends[i-1].IP == b.IP {
			continue
		}
		if id := r.endpointID(b); id != "" {
			ids = append(ids, id)
			continue
		}
		if created != nil && !r.resolvesLocal(b) {
			if at, made := created[b.IP]; made {
				fills = append(fills, endpointFill{pos: len(ids), ep: at})
				ids = append(ids, "")
				continue
			}
			if ep := r.eps[b.IP]; ep != nil && ep.id != "" {
				return nil, nil, nil, false // replaced in its turn
			}
		}
		missing = append(missing, b.IP)
	}
	spares := d.Spares
	for range missing {
		for len(spares) > 0 {
			id := r.endpointID(spares[0])
			if _, made := created[spares[0].IP]; made && id == "" {
				return nil, nil, nil, false
			}
			spares = spares[1:]
			if id != "" {
				ids = append(ids, id)
				break
			}
		}
	}
	return ids, missing, fills, true
}

// resolveForTurn is resolve for a load balancer's turn: what its create
// made ahead resolved, if nothing resolve reads changed since (resolving
// twice was a tenth of a cold start's reconciler CPU), else anew.
func (r *Reconciler) resolveForTurn(run *syncRun, e *lbEntry) (ids, missing []string) {
	if ahead, ok := run.lbCreates[e.key]; ok && ahead.gen == r.resolveGen {
		return ahead.ids, ahead.missing
	}
	return r.resolve(e.desired)
}

// docForTurn is the document for ids: the one made ahead if it was built
// from the same backends.
func (r *Reconciler) docForTurn(run *syncRun, e *lbEntry, ids []string) *hnslb.LoadBalancer {
	if ahead, ok := run.lbCreates[e.key]; ok && slices.Equal(ahead.ids, ids) {
		return ahead.doc
	}
	return BuildLB(e.desired, ids)
}

// endpointID is the HNS endpoint a backend uses, "" if none is usable yet.
func (r *Reconciler) endpointID(b intent.Backend) string {
	if r.resolvesLocal(b) {
		return r.localIndex[b.IP]
	}
	if ep := r.eps[b.IP]; ep != nil && ep.wanted && ep.id != "" && remoteMatches(ep.spec, ep.realizedSpec) {
		return ep.id
	}
	return ""
}
