package metrics

import (
	"fmt"
	"testing"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// Each refused write lands in kube-proxy 1.37's counter of its operation,
// with HNS's error in kube-proxy's class of it (classifyLBError, tested in
// its order), and nothing else moves.
func TestCountLBFailureUsesKubeProxysClasses(t *testing.T) {
	Register()
	counters := map[string]*metrics.CounterVec{
		hnslb.OpCreateLoadBalancer: WinKernelLBCreateFailure,
		hnslb.OpUpdateLoadBalancer: WinKernelLBUpdateFailure,
		hnslb.OpDeleteLoadBalancer: WinKernelLBDeleteFailure,
	}
	classes := []struct {
		err   error
		class string
	}{
		{hnslb.NewError("x", hnslb.CodePortAlreadyExists, "The specified port already exists."), "port_already_exists"},
		{hnslb.NewError("x", hnslb.CodeNetworkNotFound, "The network was not found."), "network_not_found"},
		{hnslb.NewError("x", hnslb.CodeNotImplemented, ""), "not_implemented"},
		{hnslb.NewError("x", hnslb.CodeInvalidIP, "The IP address is invalid."), "invalid_ip"},
		// Close to those, and not them, as kube-proxy's hcn checks read them.
		{hnslb.NewError("x", hnslb.CodeRequestUnsupported, ""), "other"},
		{hnslb.NewError("x", hnslb.CodeNotFound, "Element not found."), "other"},
		{hnslb.NewError("x", hnslb.CodeAlreadyExists, ""), "other"},
		{fmt.Errorf("no code"), "other"},
	}
	value := func(c *metrics.CounterVec, labels ...string) float64 {
		v, err := testutil.GetCounterMetricValue(c.WithLabelValues(labels...))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for op, c := range counters {
		for _, cl := range classes {
			before := map[string]float64{}
			for other, oc := range counters {
				before[other] = value(oc, "IPv6", LBTypeIngressIP, cl.class)
			}
			CountLBFailure(op, "IPv6", LBTypeIngressIP, cl.err)
			for other, oc := range counters {
				want := before[other]
				if oc == c {
					want++
				}
				if got := value(oc, "IPv6", LBTypeIngressIP, cl.class); got != want {
					t.Errorf("%s refused with %v: %s's counter{error=%q} is %v, want %v", op, cl.err, other, cl.class, got, want)
				}
			}
		}
	}
	before := value(WinKernelLBCreateFailure, "IPv4", LBTypeClusterIP, "other")
	CountLBFailure(hnslb.OpGetLoadBalancer, "IPv4", LBTypeClusterIP, fmt.Errorf("a read"))
	if value(WinKernelLBCreateFailure, "IPv4", LBTypeClusterIP, "other") != before {
		t.Error("a failed read counted as a create failure")
	}
}
