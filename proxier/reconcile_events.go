package proxier

import (
	"context"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"

	hnsevents "github.com/hnsproxy/hnsproxy/events"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/reconciler"
)

// Warning events on a Service about what the reconciler could not program
// (past hnsevents.Bound's bound, one on the Node for the rest).
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

// holderUID is the UID of the Service whose load balancer key is ("" when
// none is known), part of what onceEach remembers: a Service deleted and
// made again under its name between two syncs is another object, whose
// events kubectl describe shows apart, and gets the condition raised on
// it, though its load balancer and the condition stay the same.
func (p *Proxier) holderUID(key intent.LBKey) string {
	if _, svc := p.holder(key); svc != nil {
		return string(svc.UID)
	}
	return ""
}

// holder is the name of the Service whose load balancer key is ("" when
// none), and the Service from the informer's cache (nil when not there).
func (p *Proxier) holder(key intent.LBKey) (types.NamespacedName, *v1.Service) {
	name, ok := p.state.Holder(key)
	if !ok {
		return types.NamespacedName{}, nil
	}
	svc, err := p.services.Services(name.Namespace).Get(name.Name)
	if err != nil {
		return name, nil
	}
	return name, svc
}

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

// maxServiceEvents is how many load balancers' conditions of one reason
// are raised on their Services while more than that many have it
// (hnsevents.Bound).
const maxServiceEvents = hnsevents.MaxRaisedOneByOne

// reportReconcile raises the events of one Sync's result, once per
// condition. One cause on the node (HNS restarted and lost the
// containers' endpoints, projectcalico/calico#5164; another service proxy
// still programming the node) can give a condition to every load
// balancer: past maxServiceEvents, one Warning on the Node stands for the
// rest (hnsevents.Bound).
func (p *Proxier) reportReconcile(res reconciler.SyncResult) {
	// One event per Service and reason for this Sync's conditions: the
	// broadcaster would fold a second into the first's series, its note
	// unsaid (hnsevents.NewBatch).
	rec := p.opts.Recorder
	if rec != nil {
		var flush func()
		rec, flush = hnsevents.NewBatch(rec)
		defer flush()
	}
	now := make(map[intent.LBKey]bool, len(res.ForeignHeld))
	for _, f := range res.ForeignHeld {
		now[f.Key] = true
	}
	p.foreignReported.keep(now)
	p.foreignRaised.Round(now)
	for _, f := range res.ForeignHeld {
		if !p.foreignReported.due(f.Key, p.holderUID(f.Key)+" "+f.ID) && !p.foreignRaised.Owed(f.Key) {
			continue
		}
		const why = "hnsproxy does not delete it for an external or ingress IP, so this frontend is not served here until it is removed"
		switch p.foreignRaised.Next(f.Key) {
		case hnsevents.OnObject:
			p.serviceEvent(rec, f.Key, ReasonForeignLoadBalancerConflict,
				"%s is held on this node by HNS load balancer %s, which hnsproxy does not own; "+why, f.Key, f.ID)
		case hnsevents.OnNode:
			p.nodeWideEvent(ReasonForeignLoadBalancerConflict, f.Key,
				fmt.Sprintf("load balancers hnsproxy does not own hold the external or ingress IPs of more than %d load balancers on this node (is another service proxy running here?); %s", maxServiceEvents, why),
				fmt.Sprintf("%s, held by %s", f.Key, f.ID))
		default:
			klog.V(2).InfoS("Load balancer not fully programmed", "frontend", f.Key, "reason", ReasonForeignLoadBalancerConflict)
		}
	}

	now = make(map[intent.LBKey]bool, len(res.LeftOut))
	for _, l := range res.LeftOut {
		now[l.Key] = true
	}
	p.leftOutReported.keep(now)
	p.leftOutRaised.Round(now)
	for _, l := range res.LeftOut {
		ips := strings.Join(l.IPs, ", ")
		if !p.leftOutReported.due(l.Key, p.holderUID(l.Key)+" "+ips) && !p.leftOutRaised.Owed(l.Key) {
			continue
		}
		switch p.leftOutRaised.Next(l.Key) {
		case hnsevents.OnObject:
			// The addresses come last: a note the API would find too long is
			// cut at its end (package events), and the count and the why stay.
			p.serviceEvent(rec, l.Key, ReasonBackendsUnrealizable,
				"%s: %d ready endpoints on this node have no HNS endpoint and are left out (over the backend cap, other endpoints stand in): %s",
				l.Key, len(l.IPs), ips)
		case hnsevents.OnNode:
			p.nodeWideEvent(ReasonBackendsUnrealizable, l.Key,
				fmt.Sprintf("more than %d load balancers leave out ready endpoints on this node that have no HNS endpoint (HNS lost them, or the CNI has not made them)", maxServiceEvents),
				fmt.Sprintf("%s leaves out %s", l.Key, ips))
		default:
			klog.V(2).InfoS("Load balancer not fully programmed", "frontend", l.Key, "reason", ReasonBackendsUnrealizable)
		}
	}
}

// nodeWideEvent raises on the Node the event that stands for the load
// balancers of reason past maxServiceEvents (what they have; next, the
// first of them, last, where a cut note loses it), and logs it.
func (p *Proxier) nodeWideEvent(reason string, key intent.LBKey, what, next string) {
	klog.InfoS("Load balancers not fully programmed; the rest are not raised on their Services", "reason", reason, "next", key)
	p.warnNode(context.Background(), reason, "Sync",
		"%s; the others are not raised on their Services while it lasts (/debug/hns and hnsproxy-diag list them). The next: %s", what, next)
}

// serviceEvent raises through rec a Warning on the Service whose load
// balancer key is.
func (p *Proxier) serviceEvent(rec events.EventRecorder, key intent.LBKey, reason, format string, args ...any) {
	name, svc := p.holder(key)
	if name.Name == "" {
		return
	}
	klog.InfoS("Load balancer not fully programmed", "service", name, "frontend", key, "reason", reason)
	if rec == nil || svc == nil {
		return
	}
	rec.Eventf(svc, nil, v1.EventTypeWarning, reason, "Sync", format, args...)
}
