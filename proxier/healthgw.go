package proxier

import (
	"context"
	"maps"

	"k8s.io/klog/v2"
)

// readHealthCheckGateway re-reads the root HNS endpoint that health checks
// on ingress IPs are forwarded to, as kube-proxy reads it on every sync:
// each Sync while none is known, since the CNI may make it after the
// network hnsproxy waited for at start (flannel makes cbr0, then cbr0_ep),
// and each drift repair, to follow one made again. A failed read keeps
// what is known; a change recomputes every Service (configChanged).
func (p *Proxier) readHealthCheckGateway(ctx context.Context, repair bool) {
	if p.opts.HealthCheckGateway == nil || !p.cfg.ForwardHealthCheckVIP || (len(p.cfg.HealthCheckGateway) > 0 && !repair) {
		return
	}
	gw, err := p.opts.HealthCheckGateway(ctx)
	if err != nil || len(gw) == 0 || maps.Equal(gw, p.cfg.HealthCheckGateway) {
		return
	}
	klog.FromContext(ctx).Info("Found the root HNS endpoint; health checks on load balancer ingress IPs are forwarded to it", "addresses", gw)
	p.cfg.HealthCheckGateway = gw
}
