package proxier

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/reconciler"
)

// ReasonForeignLoadBalancerConflict is the Warning event on a Service whose
// frontend a load balancer hnsproxy does not own holds, and which hnsproxy
// will not delete (a tenant- or controller-chosen frontend, see
// docs/reliability.md, "Frontend ownership").
const ReasonForeignLoadBalancerConflict = "ForeignLoadBalancerConflict"

// reportForeign raises one event per conflict (a frontend and the foreign
// load balancer on it): again only when the holder changes, or after the
// conflict ended and came back.
func (p *Proxier) reportForeign(held []reconciler.ForeignFrontend) {
	now := make(map[intent.LBKey]string, len(held))
	for _, f := range held {
		now[f.Key] = f.ID
		if p.foreignReported[f.Key] == f.ID {
			continue
		}
		p.foreignReported[f.Key] = f.ID
		name, ok := p.state.Holder(f.Key)
		if !ok {
			continue
		}
		klog.InfoS("A foreign load balancer holds a Service's frontend; not deleting it", "service", name, "frontend", f.Key, "id", f.ID)
		if p.opts.Recorder == nil {
			continue
		}
		svc, err := p.services.Services(name.Namespace).Get(name.Name)
		if err != nil {
			continue
		}
		p.opts.Recorder.Eventf(svc, nil, v1.EventTypeWarning, ReasonForeignLoadBalancerConflict, "Sync",
			"%s is held on this node by HNS load balancer %s, which hnsproxy does not own; hnsproxy does not delete it for an external or ingress IP, so this frontend is not served here until it is removed",
			f.Key, f.ID)
	}
	for k := range p.foreignReported {
		if _, ok := now[k]; !ok {
			delete(p.foreignReported, k)
		}
	}
}
