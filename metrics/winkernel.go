package metrics

import (
	"k8s.io/component-base/metrics"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// kube-proxy 1.37's winkernel counts the load balancer writes HNS refuses,
// by IP family, kind of load balancer and a coarse class of HNS's error
// (pkg/proxy/metrics and pkg/proxy/winkernel/proxier.go in kubernetes
// v1.37.2): the same names, help, labels and values here.

// Label values of lb_type.
const (
	LBTypeClusterIP   = "clusterip"
	LBTypeNodePort    = "nodeport"
	LBTypeExternalIP  = "externalip"
	LBTypeIngressIP   = "ingressip"
	LBTypeHealthCheck = "healthcheck"
)

var winKernelLBLabels = []string{"ip_family", "lb_type", "error"}

var (
	// WinKernelLBCreateFailure counts load balancer creates HNS refused.
	WinKernelLBCreateFailure = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem: kubeProxySubsystem, Name: "sync_proxy_rules_winkernel_lb_create_failures_total",
		Help: "Cumulative proxy winkernel lb create failures", StabilityLevel: metrics.ALPHA,
	}, winKernelLBLabels)
	// WinKernelLBUpdateFailure counts load balancer modifies HNS refused.
	WinKernelLBUpdateFailure = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem: kubeProxySubsystem, Name: "sync_proxy_rules_winkernel_lb_update_failures_total",
		Help: "Cumulative proxy winkernel lb update failures", StabilityLevel: metrics.ALPHA,
	}, winKernelLBLabels)
	// WinKernelLBDeleteFailure counts load balancer deletes HNS refused.
	WinKernelLBDeleteFailure = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem: kubeProxySubsystem, Name: "sync_proxy_rules_winkernel_lb_delete_failures_total",
		Help: "Cumulative proxy winkernel lb delete failures", StabilityLevel: metrics.ALPHA,
	}, winKernelLBLabels)
)

// CountLBFailure counts one load balancer write HNS refused, op being
// hnslb.OpCreateLoadBalancer, OpUpdateLoadBalancer or OpDeleteLoadBalancer;
// family is "IPv4" or "IPv6" and lbType one of the LBType values.
func CountLBFailure(op, family, lbType string, err error) {
	var c *metrics.CounterVec
	switch op {
	case hnslb.OpCreateLoadBalancer:
		c = WinKernelLBCreateFailure
	case hnslb.OpUpdateLoadBalancer:
		c = WinKernelLBUpdateFailure
	case hnslb.OpDeleteLoadBalancer:
		c = WinKernelLBDeleteFailure
	default:
		return
	}
	c.WithLabelValues(family, lbType, lbErrorClass(err)).Inc()
}

// lbErrorClass is kube-proxy's class of an HNS error, tested in its order.
func lbErrorClass(err error) string {
	code, _ := hnslb.CodeOf(err)
	switch {
	case code == hnslb.CodePortAlreadyExists:
		return "port_already_exists"
	case code == hnslb.CodeNetworkNotFound:
		return "network_not_found"
	case code == hnslb.CodeNotImplemented:
		return "not_implemented"
	case code == hnslb.CodeInvalidIP:
		return "invalid_ip"
	}
	return "other"
}
