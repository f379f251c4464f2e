package app

import (
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/metrics"
	"github.com/hnsproxy/hnsproxy/reconciler"
)

// lbTypes are kube-proxy 1.37's lb_type values for what a load balancer
// is for.
var lbTypes = map[intent.Origin]string{
	intent.OriginClusterIP:   metrics.LBTypeClusterIP,
	intent.OriginNodePort:    metrics.LBTypeNodePort,
	intent.OriginExternalIP:  metrics.LBTypeExternalIP,
	intent.OriginIngress:     metrics.LBTypeIngressIP,
	intent.OriginHealthCheck: metrics.LBTypeHealthCheck,
}

// lbRefused counts a load balancer write HNS refused, as kube-proxy 1.37's
// winkernel counts it.
func lbRefused(f reconciler.LBRefusal) {
	if t, ok := lbTypes[f.Origin]; ok {
		metrics.CountLBFailure(f.Op, f.Key.Family.String(), t, f.Err)
	}
}
