package proxier

import (
	"context"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/reconciler"
)

// Warning events on a Service about what the reconciler could not program.
const (
	// ReasonForeignLoadBalancerConflict: a load balancer hnsproxy does not
	// own holds the Service's frontend, and hnsproxy will not delete it (an
	// external or ingress IP, see docs/reliability.md, "Frontend ownership").
	ReasonForeignLoadBalancerConflict = "ForeignLoadBalancerConflict"
	// ReasonBackendsUnrealizable: ready endpoints on this node have no HNS
	// endpoint, so the load balancer leaves them out.
	ReasonBackendsUnrealizable = "BackendsUnrealizable"
)

// onceEach remembers what was last reported per load-balancer key, so a
// steady condition is one event: again only when it changes, or after it
// ended and came back.
type onceEach map[intent.LBKey]string

// due records sig as key's condition and reports whether it is new.
func (o onceEach) due(key intent.LBKey, sig string) bool {
	if o[key] == sig {
		return false
	}
	o[key] = sig
	return true
}

// keep forgets the keys whose condition ended.
func (o onceEach) keep(now map[intent.LBKey]bool) {
	for k := range o {
		if !now[k] {
			delete(o, k)
		}
	}
}

// reportReconcile raises the events of one Sync's result, once per condition.
func (p *Proxier) reportReconcile(res reconciler.SyncResult) {
	now := make(map[intent.LBKey]bool, len(res.ForeignHeld))
	for _, f := range res.ForeignHeld {
		now[f.Key] = true
		if p.foreignReported.due(f.Key, f.ID) {
			p.serviceEvent(f.Key, ReasonForeignLoadBalancerConflict,
				"%s is held on this node by HNS load balancer %s, which hnsproxy does not own; hnsproxy does not delete it for an external or ingress IP, so this frontend is not served here until it is removed",
				f.Key, f.ID)
		}
	}
	p.foreignReported.keep(now)
	now = make(map[intent.LBKey]bool, len(res.LeftOut))
	if len(res.LeftOut) == 0 {
		p.leftOutRaised = 0 // the streak ended
	}
	for _, l := range res.LeftOut {
		now[l.Key] = true
		ips := strings.Join(l.IPs, ", ")
		if !p.leftOutReported.due(l.Key, ips) {
			continue
		}
		switch p.leftOutRaised++; {
		case p.leftOutRaised <= maxLeftOutEvents:
			// The addresses come last: a note the API would find too long is
			// cut at its end (package events), and the count and the why stay.
			p.serviceEvent(l.Key, ReasonBackendsUnrealizable,
				"%s: %d ready endpoints on this node have no HNS endpoint and are left out (over the backend cap, other endpoints stand in): %s",
				l.Key, len(l.IPs), ips)
		case p.leftOutRaised == maxLeftOutEvents+1:
			klog.InfoS("Load balancers leave out backends with no HNS endpoint; the rest are not raised on their Services", "reasonRaisedOnNode", ReasonBackendsUnrealizable, "frontend", l.Key, "leftOut", ips)
			p.warnNode(context.Background(), ReasonBackendsUnrealizable, "Sync",
				"more than %d load balancers leave out ready endpoints on this node that have no HNS endpoint (HNS lost them, or the CNI has not made them); "+
					"the others are not raised on their Services while it lasts (/debug/hns and hnsproxy-diag list them). The next, %s: %s",
				maxLeftOutEvents, l.Key, ips)
		default:
			klog.V(2).InfoS("Load balancer not fully programmed", "frontend", l.Key, "reason", ReasonBackendsUnrealizable)
		}
	}
	p.leftOutReported.keep(now)
}

// serviceEvent raises a Warning on the Service whose load balancer key is.
func (p *Proxier) serviceEvent(key intent.LBKey, reason, format string, args ...any) {
	name, ok := p.state.Holder(key)
	if !ok {
		return
	}
	klog.InfoS("Load balancer not fully programmed", "service", name, "frontend", key, "reason", reason)
	if p.opts.Recorder == nil {
		return
	}
	svc, err := p.services.Services(name.Namespace).Get(name.Name)
	if err != nil {
		return
	}
	p.opts.Recorder.Eventf(svc, nil, v1.EventTypeWarning, reason, "Sync", format, args...)
}

// maxLeftOutEvents bounds the BackendsUnrealizable events on Services
// while load balancers leave out backends. One cause on the node (HNS
// restarted and lost the containers' endpoints, projectcalico/calico#5164)
// leaves out a backend of every load balancer that has one there: one
// event each would be an event per Service from the node, and client-go's
// events.k8s.io broadcaster has no spam filter to thin them. Past the
// bound one Warning on the Node stands for the rest, until no load
// balancer leaves a backend out.
const maxLeftOutEvents = 10
