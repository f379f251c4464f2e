//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/vfp"
)

// TestOSBugL2BridgeDSR: two Windows Server 2022 nodes with KB5005619
// (hnssim profile ws2022-kb5005619, whose packet model loses pod traffic
// through DSR load balancers on l2bridge). Node a runs hnsproxy with
// --os-bug-workarounds=none and keeps DSR: pod to ClusterIP is lost. Node b
// runs the default: its ClusterIP load balancers have no DSR and the same
// flow is delivered.
func TestOSBugL2BridgeDSR(t *testing.T) {
	c := framework.StartClusterForTest(t, framework.ClusterSpec{
		NetworkType: framework.NetworkL2Bridge,
		Nodes: []framework.NodeSpec{
			{Name: "win-a", Profile: "ws2022-kb5005619", NodeIP: "10.0.0.31", PodCIDR: "10.244.5.0/24", OSBugWorkarounds: "none"},
			{Name: "win-b", Profile: "ws2022-kb5005619", NodeIP: "10.0.0.32", PodCIDR: "10.244.6.0/24"},
		},
	})
	a, b := c.Nodes[0], c.Nodes[1]
	web := append(wire(t, a, "web", 1), wire(t, b, "web", 1)...)
	clientA, clientB := wire(t, a, "client", 1)[0], wire(t, b, "client", 1)[0]
	svc := apply(t, c, service("web", "frontend", "", 80, 8080), framework.Backends(web))
	all := func(n *framework.Node) []string {
		return backends(local(onNode(web, n.Name())...), remote(notOnNode(web, n.Name())...))
	}
	expectLBs(t, c, a, svc, lb("ClusterIP", frontend(svc.Spec.ClusterIP, 80, "TCP", 8080), flags("DSR"), all(a)...))
	expectLBs(t, c, b, svc, lb("ClusterIP", frontend(svc.Spec.ClusterIP, 80, "TCP", 8080), flags("SNAT-to-"+b.Spec.NodeIP), all(b)...))

	for i := range 4 {
		broken := tracePacket(t, c, framework.Flow{Src: fmt.Sprintf("%s:%d", clientA.IP, 34000+i), Dst: addr(svc.Spec.ClusterIP, 80), Protocol: "tcp"})
		if broken.Verdict.Outcome != vfp.Dropped || !strings.Contains(broken.Verdict.DropReason, string(hnslb.BugL2BridgeDSRPodToService)) {
			t.Errorf("without the workaround, pod to ClusterIP on %s: %s; want lost to the OS bug", a.Name(), broken.Summary)
		}
		checkFlow(t, c, flowCase{name: "pod to ClusterIP with the workaround",
			flow:    framework.Flow{Src: fmt.Sprintf("%s:%d", clientB.IP, 34000+i), Dst: addr(svc.Spec.ClusterIP, 80), Protocol: "tcp"},
			outcome: vfp.DeliveredToPod, backends: web, port: 8080, clientIP: boolp(false)})
	}
}

// TestOSBugOverlayNodePort: two Windows Server 2022 overlay nodes (hnssim
// profile ws2022-rtm, whose packet model loses NodePort traffic forwarded
// to another node). Node x runs hnsproxy with --os-bug-workarounds=none:
// some connections to its node port pick the backend on y and are lost.
// Node y runs the default: its NodePort load balancer uses only its local
// endpoint and every connection is delivered; ClusterIP keeps both.
func TestOSBugOverlayNodePort(t *testing.T) {
	c := framework.StartClusterForTest(t, framework.ClusterSpec{
		NetworkType: framework.NetworkOverlay,
		Nodes: []framework.NodeSpec{
			{Name: "win-x", Profile: "ws2022-rtm", NodeIP: "10.0.0.41", PodCIDR: "10.244.7.0/24", OSBugWorkarounds: "none"},
			{Name: "win-y", Profile: "ws2022-rtm", NodeIP: "10.0.0.42", PodCIDR: "10.244.8.0/24"},
		},
	})
	x, y := c.Nodes[0], c.Nodes[1]
	web := append(wire(t, x, "web", 1), wire(t, y, "web", 1)...)
	np := service("web", "frontend", corev1.ServiceTypeNodePort, 80, 8080)
	np.Spec.Ports[0].NodePort = 30081
	np = apply(t, c, np, framework.Backends(web))
	for _, n := range c.Nodes {
		snat := "SNAT-to-" + nthIP(n.Spec.PodCIDR, 2)
		all := backends(local(onNode(web, n.Name())...), remote(notOnNode(web, n.Name())...))
		nodePort := all
		if n == y {
			nodePort = backends(local(onNode(web, n.Name())...))
		}
		expectLBs(t, c, n, np,
			lb("ClusterIP", frontend(np.Spec.ClusterIP, 80, "TCP", 8080), flags("DSR"), all...),
			lb("NodePort", frontend("*", 30081, "TCP", 8080), flags("local-routed-VIP", "VIP-external-IP", snat), nodePort...))
	}

	lost := 0
	for i := range 16 {
		src := fmt.Sprintf("198.51.100.7:%d", 41000+i)
		tr := tracePacket(t, c, framework.Flow{Src: src, Dst: addr(x.Spec.NodeIP, 30081), Protocol: "tcp", Ingress: x.Name()})
		switch v := tr.Verdict; {
		case v.Outcome == vfp.Dropped && strings.Contains(v.DropReason, string(hnslb.BugOverlayNodePortRemote)):
			lost++
		case v.Outcome != vfp.DeliveredToPod:
			t.Errorf("NodePort on %s without the workaround: %s", x.Name(), tr.Summary)
		}
		checkFlow(t, c, flowCase{name: "NodePort with the workaround",
			flow:    framework.Flow{Src: src, Dst: addr(y.Spec.NodeIP, 30081), Protocol: "tcp", Ingress: y.Name()},
			outcome: vfp.DeliveredToPod, backends: onNode(web, y.Name()), port: 8080})
	}
	if lost == 0 {
		t.Errorf("no NodePort connection to %s reached the remote backend and met the OS bug: the broken flow is not reproduced", x.Name())
	}
}
