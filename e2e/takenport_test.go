//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
	hnsremote "github.com/hnsproxy/hnsproxy/sim/remote"
)

// TestPortTakenOutsideHNS: HNS refuses a Service's frontend as taken while
// no load balancer holds it (hnssim --taken-port: a host process's socket,
// kubernetes/community#8883; a reservation HNS kept after a delete,
// kubernetes/kubernetes#137530). With the real binaries the Service gets
// an HNSLoadBalancerRejected Warning that names the cause (listed by
// kubectl describe service, which finds events by the Service's UID), a Service on
// another port is programmed meanwhile, and once the port is free the
// frontend is programmed too.
func TestPortTakenOutsideHNS(t *testing.T) {
	ctx := context.Background()
	c := framework.StartClusterForTest(t, l2bridgeSpec)
	w := startWebAndDNS(t, c, "")
	setTaken := func(ports ...string) {
		for _, n := range c.Nodes {
			if err := n.Sim.SetFaults(ctx, hnsremote.FaultsRequest{TakenPorts: ports}); err != nil {
				t.Fatal(err)
			}
		}
	}
	setTaken("tcp/81")
	taken := apply(t, c, service("web", "taken", "", 81, 8080), framework.Backends(w.web))
	free := apply(t, c, service("web", "free", "", 82, 8080), framework.Backends(w.web))
	for _, n := range c.Nodes {
		expectLBs(t, c, n, free, w.expect(n, 82, 8080, free.Spec.ClusterIP, w.web))
	}
	// Looked up as `kubectl describe service` does: by the Service's name,
	// kind and UID.
	events := c.Admin.CoreV1().Events("web")
	kind, uid := "Service", string(taken.UID)
	describe := events.GetFieldSelector(&taken.Name, &taken.Namespace, &kind, &uid).String()
	err := framework.Poll(ctx, framework.ConvergeWait, pollEvery, func(ctx context.Context) error {
		list, err := events.List(ctx, metav1.ListOptions{FieldSelector: describe})
		if err != nil {
			return err
		}
		for _, ev := range list.Items {
			if ev.Reason == "HNSLoadBalancerRejected" && strings.Contains(ev.Message, "a host process may hold the port") {
				return nil
			}
		}
		return fmt.Errorf("no HNSLoadBalancerRejected Warning that kubectl describe service %s lists, naming a port taken outside HNS", taken.Name)
	})
	if err != nil {
		t.Fatal(err)
	}
	// kube-proxy 1.37's counter of the creates HNS refused has it, by its
	// kind of load balancer and class of HNS's error.
	refused := `kubeproxy_sync_proxy_rules_winkernel_lb_create_failures_total{error="port_already_exists",ip_family="IPv4",lb_type="clusterip"} `
	for _, n := range c.Nodes {
		err := framework.Poll(ctx, framework.ConvergeWait, pollEvery, func(ctx context.Context) error {
			code, body, err := httpGet(ctx, n.Proxy.MetricsURL())
			if err != nil || code != http.StatusOK {
				return fmt.Errorf("GET /metrics: %d, %v", code, err)
			}
			var counted []string
			for _, line := range strings.Split(string(body), "\n") {
				if v, ok := strings.CutPrefix(line, refused); ok && v != "0" {
					return nil
				}
				if strings.HasPrefix(line, "kubeproxy_sync_proxy_rules_winkernel_lb_") || strings.HasPrefix(line, "hnsproxy_hns_operations_total{operation=\"create_load_balancer\"") {
					counted = append(counted, line)
				}
			}
			return fmt.Errorf("no sample %s> 0; counted: %q", refused, counted)
		})
		if err != nil {
			t.Fatalf("%s: %v", n.Name(), err)
		}
	}
	setTaken()
	for _, n := range c.Nodes {
		expectLBs(t, c, n, taken, w.expect(n, 81, 8080, taken.Spec.ClusterIP, w.web))
	}
}
