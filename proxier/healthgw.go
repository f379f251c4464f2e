package proxier

import (
	"context"
	"maps"

	"k8s.io/klog/v2"
)

// readHealthCheckGateway re-reads the root HNS endpoint that health checks
// on ingress IPs are forwarded to, as kube-proxy reads it on every sync:
// while none is known, since the CNI may make it after the network
// hnsproxy waited for at start (flannel makes cbr0, then cbr0_ep), and at
// each drift repair, to follow one made again. While none is known it is
// read at most once per --sync-period: a node whose CNI makes none (or
// names it otherwise) must not pay an HNS query for every change. A
// failed read keeps what is known; a change recomputes every Service
// (configChanged).
func (p *Proxier) readHealthCheckGateway(ctx context.Context, repair bool) {
	if p.opts.HealthCheckGateway == nil || !p.cfg.ForwardHealthCheckVIP {
		return
	}
	now := p.clock.Now()
	if !repair && (len(p.cfg.HealthCheckGateway) > 0 || now.Before(p.gatewayReadAt.Add(p.opts.SyncPeriod))) {
		return
	}
	p.gatewayReadAt = now
	gw, err := p.opts.HealthCheckGateway(ctx)
	if err != nil || len(gw) == 0 || maps.Equal(gw, p.cfg.HealthCheckGateway) {
		return
	}
	klog.FromContext(ctx).Info("Found the root HNS endpoint; health checks on load balancer ingress IPs are forwarded to it", "addresses", gw)
	p.cfg.HealthCheckGateway = gw
}
