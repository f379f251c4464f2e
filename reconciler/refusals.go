package reconciler

import (
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

// The load balancer writes HNS refused, for Options.LoadBalancerRefused
// (kube-proxy 1.37's winkernel counts them by kind of load balancer). The
// deadlines note each refusal as the call returns, on whichever goroutine
// made it; each Sync's end tells them, under the lock, with what the load
// balancer was for.

// LBRefusal is one load balancer create, modify or delete HNS refused.
type LBRefusal struct {
	// Op is hnslb.OpCreateLoadBalancer, OpUpdateLoadBalancer or
	// OpDeleteLoadBalancer.
	Op  string
	Key intent.LBKey
	// Origin is what the load balancer was for when last desired.
	Origin intent.Origin
	Err    error
}

// maxPendingRefusals bounds the refusals kept between two Syncs; more are
// dropped (HNS refusing that many writes is in hnsproxy_hns_operations_total).
const maxPendingRefusals = 10000

// noted is a refused write as the call returned: the document of a create
// or modify, or the ID of a modify or delete.
type noted struct {
	op  string
	doc *hnslb.LoadBalancer
	id  string
	err error
}

// lbRefusals collects refused writes between Syncs; it keeps none unless
// on (someone is told).
type lbRefusals struct {
	on bool
	dropbox[noted]
}

// note keeps a write that failed, if HNS refused it: not a delete of one
// already gone (done), nor a modify HNS does not implement (which turns
// modify off, as in kube-proxy), nor HNS down or not answering (no refusal;
// kube-proxy 1.37 makes no write then either).
func (l *lbRefusals) note(op string, doc *hnslb.LoadBalancer, id string, err error) {
	if !l.on || err == nil || hnslb.IsUnavailable(err) ||
		op == hnslb.OpDeleteLoadBalancer && hnslb.IsNotFound(err) ||
		op == hnslb.OpUpdateLoadBalancer && hnslb.IsNotImplemented(err) {
		return
	}
	l.drop(noted{op: op, doc: doc, id: id, err: err}, maxPendingRefusals)
}

// tellRefusals tells Options.LoadBalancerRefused of the refusals noted
// since the last Sync, each with the key and origin of the load balancer it
// was for: a document's frontend, or the load balancer realized under the
// ID. A delete of a load balancer no key realizes (left over from before
// the start, or blocking a frontend) is not told: kube-proxy, which deletes
// every load balancer at its start, has no such kind. Called with the lock
// held.
func (r *Reconciler) tellRefusals() {
	if r.client == nil || !r.client.refused.on {
		return
	}
	refused := r.client.refused.drain()
	if len(refused) == 0 {
		return
	}
	var byID map[string]intent.LBKey
	for _, n := range refused {
		var key intent.LBKey
		var ok bool
		if n.doc != nil {
			key, ok = KeyOf(n.doc)
		} else {
			if byID == nil {
				byID = make(map[string]intent.LBKey, len(r.lbs))
				for k, e := range r.lbs {
					if e.realizedID != "" {
						byID[e.realizedID] = k
					}
				}
			}
			key, ok = byID[n.id]
		}
		e := r.lbs[key]
		if !ok || e == nil {
			continue
		}
		r.opts.LoadBalancerRefused(LBRefusal{Op: n.op, Key: key, Origin: e.origin, Err: n.err})
	}
}
