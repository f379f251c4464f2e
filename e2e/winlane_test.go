//go:build e2e

package e2e

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
)

// windowsLaneSpec is l2bridgeSpec with hnsproxy.exe under Wine on every
// node, reaching hnssim through hcn and the HCN bridge.
func windowsLaneSpec() framework.ClusterSpec {
	spec := repairOnlySpec()
	spec.Windows = true
	return spec
}

// TestWindowsLane runs the Windows release build of hnsproxy under Wine,
// through hnslb/hcnclient and hcsshim's hcn (handles, result buffers,
// HRESULTs) against the simulated HNS: Services of each kind, a restart
// that writes nothing, drift repair, and the Linux lane's HNS outage
// (checkHNSOutage) with failing creates and a pod removed meanwhile, where
// "unavailable" must never be read as "not found" by hnsproxy.exe or
// hnscni.exe.
func TestWindowsLane(t *testing.T) {
	c := framework.StartClusterForTest(t, windowsLaneSpec())
	a, b := c.Nodes[0], c.Nodes[1]
	for _, n := range c.Nodes {
		name, err := n.Proxy.ProcessName()
		if err != nil || name != framework.HNSProxyExe {
			t.Fatalf("node %s: hnsproxy process is %q (%v), want %s under Wine", n.Name(), name, err, framework.HNSProxyExe)
		}
		t.Logf("node %s: %s (pid %d) under Wine", n.Name(), name, n.Proxy.PID())
	}
	w := startWebAndIngress(t, c, 30443)
	web, webSvc, want := w.web, w.webSvc, w.want
	np := service("web", "frontend", corev1.ServiceTypeNodePort, 81, 8080)
	np.Spec.Ports[0].NodePort = 30080
	np.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
	np = apply(t, c, np, framework.Backends(web))
	for _, n := range c.Nodes {
		all := backends(local(onNode(web, n.Name())...), remote(notOnNode(web, n.Name())...))
		expectLBs(t, c, n, np,
			lb("ClusterIP", frontend(np.Spec.ClusterIP, 81, "TCP", 8080), flags("DSR", "client-IP-affinity"), all...),
			lb("NodePort", frontend("*", 30080, "TCP", 8080), flags("local-routed-VIP", "VIP-external-IP", "client-IP-affinity", "SNAT-to-"+n.Spec.NodeIP), all...))
	}
	if t.Failed() {
		t.FailNow()
	}
	bridged(t, c)

	t.Run("restart without HNS writes", func(t *testing.T) {
		checkRestartsWithoutWrites(t, c, a, b, "hnsproxy.exe", webSvc, want)
	})
	t.Run("drift repair", func(t *testing.T) { checkDriftRepair(t, c, a, webSvc, want[a]) })
	t.Run("HNS fault burst and restart", func(t *testing.T) { checkHNSOutage(t, c, "outage-") })
	t.Run("CNI ADD CHECK DEL GC through hnscni.exe", func(t *testing.T) { checkWindowsCNI(t, a) })
	t.Run("as a Windows service under the SCM", func(t *testing.T) { checkWindowsService(t, c, b, web) })
	for _, n := range c.Nodes {
		checkLogClean(t, n)
	}
}

// checkWindowsCNI drives hnscni.exe through libcni: ADD, CHECK, DEL, and a
// GC that removes a sandbox the runtime lost track of.
func checkWindowsCNI(t *testing.T, n *framework.Node) {
	ctx := context.Background()
	pods := wire(t, n, "cni", 2)
	for _, p := range pods {
		if err := n.CheckPod(ctx, p); err != nil {
			t.Error(err)
		}
	}
	kept, leaked := pods[0], pods[1]
	if err := n.RemovePod(ctx, kept); err != nil {
		t.Fatal(err)
	}
	// The runtime forgets the leaked sandbox without a DEL; GC must remove it.
	n.Pods = slices.DeleteFunc(n.Pods, func(p framework.Pod) bool { return p.Name == leaked.Name })
	if err := n.GCPods(ctx); err != nil {
		t.Fatal(err)
	}
	snap, err := n.Sim.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range snap.Endpoints {
		if ip := e.IP(); !e.IsRemote() && (ip == kept.IP.String() || ip == leaked.IP.String()) {
			t.Errorf("node %s: endpoint %s (%s) of a deleted or collected pod is still in HNS", n.Name(), e.ID, ip)
		}
	}
	calls, err := n.Sim.BridgeCalls(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Only hnscni attaches endpoints to namespaces.
	if calls["HcnModifyNamespace"] == 0 {
		t.Errorf("node %s: no namespace attach came through the bridge; did hnscni.exe wire the pods? %v", n.Name(), calls)
	}
}

// bridged checks that the nodes' HNS calls came through the HCN bridge:
// hcn's enumerate-open-query-close and create-query-close sequences.
func bridged(t *testing.T, c *framework.Cluster) {
	t.Helper()
	for _, n := range c.Nodes {
		calls, err := n.Sim.BridgeCalls(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, fn := range []string{"HNSCall", "HcnEnumerateLoadBalancers", "HcnCreateLoadBalancer", "HcnQueryLoadBalancerProperties", "HcnCloseLoadBalancer"} {
			if calls[fn] == 0 {
				t.Errorf("node %s: no %s reached hnssim through the bridge: %v", n.Name(), fn, calls)
			}
		}
	}
}
