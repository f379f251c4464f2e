package app

import (
	"testing"

	"k8s.io/component-base/metrics/testutil"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/metrics"
	"github.com/hnsproxy/hnsproxy/reconciler"
)

// A refused load balancer write is counted under kube-proxy 1.37's lb_type
// of what it was for, in its family; one of no known kind is not counted.
func TestRefusedWritesAreCountedByKubeProxysLBType(t *testing.T) {
	metrics.Register()
	refused := hnslb.NewError("delete", 0x5, "Access is denied.")
	for origin, lbType := range map[intent.Origin]string{
		intent.OriginClusterIP:   "clusterip",
		intent.OriginNodePort:    "nodeport",
		intent.OriginExternalIP:  "externalip",
		intent.OriginIngress:     "ingressip",
		intent.OriginHealthCheck: "healthcheck",
	} {
		c := metrics.WinKernelLBDeleteFailure.WithLabelValues("IPv6", lbType, "other")
		before := must(testutil.GetCounterMetricValue(c))
		lbRefused(reconciler.LBRefusal{Op: hnslb.OpDeleteLoadBalancer, Key: intent.LBKey{Family: intent.IPv6, VIP: "fd00::10", Port: 80}, Origin: origin, Err: refused})
		if got := must(testutil.GetCounterMetricValue(c)) - before; got != 1 {
			t.Errorf("%v: delete_failures_total{ip_family=IPv6,lb_type=%s} moved by %v, want 1", origin, lbType, got)
		}
	}
	total := func() float64 {
		n, err := testutil.GetCounterMetricValue(metrics.WinKernelLBDeleteFailure.WithLabelValues("IPv6", "", "other"))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := total()
	lbRefused(reconciler.LBRefusal{Op: hnslb.OpDeleteLoadBalancer, Key: intent.LBKey{Family: intent.IPv6}, Origin: intent.OriginUnknown, Err: refused})
	if total() != before {
		t.Error("a load balancer of no known kind was counted")
	}
}
