//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
	hnsremote "github.com/hnsproxy/hnsproxy/sim/remote"
)

// TestHNSFaults runs checkHNSOutage on the overlay cluster.
func TestHNSFaults(t *testing.T) {
	checkHNSOutage(t, framework.StartClusterForTest(t, overlaySpec), "")
}

// checkHNSOutage takes HNS away under a running hnsproxy on every node of c
// (every call fails as "unavailable", as while the HNS service restarts)
// and makes a third of load balancer creates fail, while Services and
// endpoints change. Once HNS answers, each node must hold exactly the
// desired load balancers, those of an untouched Service must be the very
// same objects, and the endpoints of a pod removed meanwhile must be gone
// (hnscni's and hnsproxy's deletes were retried): an unavailable HNS is
// never read as "gone". The Services live in namespace prefix+"web" and
// prefix+"kube-system", the pods are named after prefix, so that a cluster
// with Services of its own can run it. The first two nodes carry the pods.
func checkHNSOutage(t *testing.T, c *framework.Cluster, prefix string) {
	ctx := context.Background()
	w := startWebAndDNS(t, c, prefix)
	web, dns, webSvc, dnsSvc, expect := w.web, w.dns, w.webSvc, w.dnsSvc, w.expect
	dnsIDs := map[*framework.Node]string{}
	for _, n := range c.Nodes {
		dnsIDs[n] = lbID(t, n, dnsSvc.Spec.ClusterIP)
	}

	for _, n := range c.Nodes {
		if err := n.Sim.SetFaults(ctx, hnsremote.FaultsRequest{
			Restart:   hnsremote.Duration(5 * time.Second),
			ErrorRate: map[string]float64{"CreateLoadBalancer": 0.34},
		}); err != nil {
			t.Fatal(err)
		}
	}
	// Changes while HNS is away: a pod leaves web, a Service arrives.
	shrunk := web[1:]
	if err := framework.UpdateEndpoints(ctx, c, webSvc, framework.Backends(shrunk)); err != nil {
		t.Fatal(err)
	}
	late := apply(t, c, service(prefix+"web", "late", "", 81, 8080), framework.Backends(shrunk))
	// ... and its sandbox goes (CNI DEL while HNS is away fails and is retried, as kubelet does).
	gone := web[0]
	err := framework.Poll(ctx, framework.ConvergeWait, pollEvery, func(ctx context.Context) error {
		return c.Node(gone.Node).RemovePod(ctx, gone)
	})
	if err != nil {
		t.Fatal(err)
	}

	for _, n := range c.Nodes {
		expectLBs(t, c, n, webSvc, expect(n, 80, 8080, webSvc.Spec.ClusterIP, shrunk))
		expectLBs(t, c, n, late, expect(n, 81, 8080, late.Spec.ClusterIP, shrunk))
	}
	for _, n := range c.Nodes {
		if err := n.Sim.SetFaults(ctx, hnsremote.FaultsRequest{}); err != nil {
			t.Fatal(err)
		}
		if got := lbID(t, n, dnsSvc.Spec.ClusterIP); got != dnsIDs[n] {
			t.Errorf("node %s: the untouched DNS load balancer was replaced (%s -> %s) across the HNS outage", n.Name(), dnsIDs[n], got)
		}
		expectLBs(t, c, n, dnsSvc, expect(n, 53, 53, dnsSvc.Spec.ClusterIP, dns))
	}
	// Neither its local endpoint nor the other node's remote endpoint for
	// it may stay behind.
	for _, n := range c.Nodes {
		err := framework.Poll(ctx, framework.ConvergeWait, pollEvery, func(ctx context.Context) error {
			snap, err := n.Sim.Dump(ctx)
			if err != nil {
				return err
			}
			for _, e := range snap.Endpoints {
				if len(e.IpConfigurations) > 0 && e.IpConfigurations[0].IpAddress == gone.IP.String() {
					return errorf("endpoint %s (%s, remote %v) for the removed pod %s is still there", e.ID, e.Name, e.IsRemote(), gone.IP)
				}
			}
			return nil
		})
		if err != nil {
			t.Errorf("node %s: %v", n.Name(), err)
		}
	}
	stats := statsOf(t, c)
	for _, n := range c.Nodes {
		if failed := stats[n].Count("CreateLoadBalancer") - stats[n].CountResult("CreateLoadBalancer", "ok"); failed == 0 {
			t.Errorf("node %s: no load balancer create failed; the injected faults did not bite", n.Name())
		}
		unavailable := 0
		for _, results := range stats[n].Calls {
			unavailable += results["RPCServerUnavailable"]
		}
		if unavailable == 0 {
			t.Errorf("node %s: no call saw HNS unavailable; the outage did not bite", n.Name())
		}
	}
}

// TestHNSRestartThatLosesObjects: an HNS restart that drops every load
// balancer and remote endpoint (docs/simulator.md, "Restart": public
// reports show HNS keeping objects across a restart and losing them), under
// a running hnsproxy whose drift repair is an hour away. A change during
// the restart lets hnsproxy see it; once HNS answers, every node holds the
// desired load balancers again, those of the Service nothing changed too,
// with their remote backends. Then a restart that drops the load balancers
// while nothing changes: told by the service's instance, repaired too.
func TestHNSRestartThatLosesObjects(t *testing.T) {
	spec := overlaySpec
	spec.DriftRepairPeriod = time.Hour
	c := framework.StartClusterForTest(t, spec)
	ctx := context.Background()
	w := startWebAndDNS(t, c, "lossy-")
	web, dns, webSvc, dnsSvc, expect := w.web, w.dns, w.webSvc, w.dnsSvc, w.expect
	for _, n := range c.Nodes {
		if err := n.Sim.SetFaults(ctx, hnsremote.FaultsRequest{Restart: hnsremote.Duration(3 * time.Second), RestartLoses: "remote-endpoints"}); err != nil {
			t.Fatal(err)
		}
		snap, err := n.Sim.Dump(ctx) // hnssim's own view, past the restart
		if err != nil {
			t.Fatal(err)
		}
		if len(snap.LoadBalancers) != 0 {
			t.Fatalf("node %s: %d load balancers left by a restart that drops them", n.Name(), len(snap.LoadBalancers))
		}
	}
	shrunk := web[1:]
	if err := framework.UpdateEndpoints(ctx, c, webSvc, framework.Backends(shrunk)); err != nil {
		t.Fatal(err)
	}
	for _, n := range c.Nodes {
		expectLBs(t, c, n, dnsSvc, expect(n, 53, 53, dnsSvc.Spec.ClusterIP, dns))
		expectLBs(t, c, n, webSvc, expect(n, 80, 8080, webSvc.Spec.ClusterIP, shrunk))
	}
	if t.Failed() {
		t.FailNow()
	}

	// Now a restart with nothing changing: hnsproxy may make no call
	// during it, and tells it by the service's instance at a periodic
	// sync (--sync-period 30s here).
	for _, n := range c.Nodes {
		if err := n.Sim.SetFaults(ctx, hnsremote.FaultsRequest{Restart: hnsremote.Duration(3 * time.Second), RestartLoses: "load-balancers"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range c.Nodes {
		expectLBs(t, c, n, dnsSvc, expect(n, 53, 53, dnsSvc.Spec.ClusterIP, dns))
		expectLBs(t, c, n, webSvc, expect(n, 80, 8080, webSvc.Spec.ClusterIP, shrunk))
	}
}

// webAndDNS are two ClusterIP Services with pods on the first two nodes of
// a cluster: web (two pods on each) and dns (one on each).
type webAndDNS struct {
	web, dns       []framework.Pod
	webSvc, dnsSvc *corev1.Service
}

// startWebAndDNS makes them, the Services in namespaces prefix+"web" and
// prefix+"kube-system", the pods named after prefix, and waits until
// every node holds their load balancers.
func startWebAndDNS(t *testing.T, c *framework.Cluster, prefix string) webAndDNS {
	t.Helper()
	x, y := c.Nodes[0], c.Nodes[1]
	var w webAndDNS
	w.web = append(wire(t, x, prefix+"web", 2), wire(t, y, prefix+"web", 2)...)
	w.dns = append(wire(t, x, prefix+"dns", 1), wire(t, y, prefix+"dns", 1)...)
	w.dnsSvc = apply(t, c, service(prefix+"kube-system", "dns", "", 53, 53), framework.Backends(w.dns))
	w.webSvc = apply(t, c, service(prefix+"web", "web", "", 80, 8080), framework.Backends(w.web))
	for _, n := range c.Nodes {
		expectLBs(t, c, n, w.dnsSvc, w.expect(n, 53, 53, w.dnsSvc.Spec.ClusterIP, w.dns))
		expectLBs(t, c, n, w.webSvc, w.expect(n, 80, 8080, w.webSvc.Spec.ClusterIP, w.web))
	}
	if t.Failed() {
		t.FailNow()
	}
	return w
}

// expect is the load balancer node n should hold for a ClusterIP Service
// on clusterIP:port with pods as backends.
func (webAndDNS) expect(n *framework.Node, port, target int32, clusterIP string, pods []framework.Pod) string {
	return lb("ClusterIP", frontend(clusterIP, port, "TCP", target), flags("DSR"),
		backends(local(onNode(pods, n.Name())...), remote(notOnNode(pods, n.Name())...))...)
}

// lbID is the ID of the node's load balancer with frontend vip.
func lbID(t *testing.T, n *framework.Node, vip string) string {
	t.Helper()
	snap, err := n.Sim.Dump(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range snap.LoadBalancers {
		if len(l.FrontendVIPs) > 0 && l.FrontendVIPs[0] == vip {
			return l.ID
		}
	}
	t.Fatalf("node %s: no load balancer for %s", n.Name(), vip)
	return ""
}
