package proxier

import (
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
	for _, l := range res.LeftOut {
		now[l.Key] = true
		// The addresses come last: a note the API would find too long is
		// cut at its end (package events), and the count and the why stay.
		if ips := strings.Join(l.IPs, ", "); p.leftOutReported.due(l.Key, ips) {
			p.serviceEvent(l.Key, ReasonBackendsUnrealizable,
				"%s: %d ready endpoints on this node have no HNS endpoint and are left out (over the backend cap, other endpoints stand in): %s",
				l.Key, len(l.IPs), ips)
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
