package reconciler

import (
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

// forgetMissingBackends follows a load balancer write HNS answered with a
// missing reference while the load balancer itself is there: one of e's
// backends is gone. Local ones are looked up again (forgetLocalBackends).
// A remote endpoint of ours may have been deleted behind hnsproxy's back
// (hnsdiag, another agent); without asking, only the next drift repair
// would find it, and every retry would fail the same way until then. So
// each remote backend is asked for with a Get, once per Sync, and one HNS
// no longer has is made again before the load balancer's retry.
func (r *Reconciler) forgetMissingBackends(run *syncRun, e *lbEntry) {
	r.forgetLocalBackends(e)
	for _, b := range e.desired.Backends {
		ep := r.eps[b.IP]
		if b.Local || ep == nil || ep.id == "" || r.client.busy(epToken(b.IP), idToken(ep.id)) {
			continue
		}
		if _, asked := run.askedEPs[ep.id]; asked {
			continue
		}
		if run.askedEPs == nil {
			run.askedEPs = map[string]struct{}{}
		}
		run.askedEPs[ep.id] = struct{}{}
		if _, err := r.client.GetEndpointByID(run.ctx, ep.id); hnslb.IsNotFound(err) {
			r.endpointVanished(b.IP, ep, nil)
		}
	}
}

// endpointVanished forgets ep, realized at ip, which HNS no longer has, and
// marks it and the load balancers that used it: the next Sync makes it
// again and writes them with its new ID. drift is the repair's tally (nil
// in a Sync).
func (r *Reconciler) endpointVanished(ip string, ep *remoteEP, drift *driftTally) {
	drift.found(r.log, driftEPGone, ip).Info("Remote endpoint vanished from HNS; recreating it", "ip", ip, "id", ep.id)
	r.driftFound(KindRemoteEndpoint)
	for _, e := range r.refs[ep.id] {
		r.markLB(e)
	}
	r.disown(recordRemoteEndpoint, ep.id)
	ep.id, ep.realizedSpec = "", intent.RemoteEndpoint{}
	r.resolveGen++
	r.markEP(ip)
}
