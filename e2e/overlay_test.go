//go:build e2e

package e2e

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
	"github.com/hnsproxy/hnsproxy/vfp"
)

// overlaySpec is Flannel VXLAN's vxlan0 with a Windows Server 2022 node and
// a Windows Server 2019 node (HNS 9.5: 64 backends per load balancer, no
// session affinity).
var overlaySpec = framework.ClusterSpec{
	NetworkType: framework.NetworkOverlay,
	Nodes: []framework.NodeSpec{
		{Name: "win-x", Profile: "ws2022", NodeIP: "10.0.0.21", PodCIDR: "10.244.3.0/24"},
		{Name: "win-y", Profile: "ws2019", NodeIP: "10.0.0.22", PodCIDR: "10.244.4.0/24"},
	},
}

// TestOverlayServices checks the overlay mapping (source VIP, remote
// endpoints behind provider addresses), the backend cap of an old HNS and
// affinity where HNS lacks it, and traces flows through VXLAN.
func TestOverlayServices(t *testing.T) {
	c := framework.StartClusterForTest(t, overlaySpec)
	x, y := c.Nodes[0], c.Nodes[1]
	web := append(wire(t, x, "web", 2), wire(t, y, "web", 1)...)
	many := append(wire(t, x, "many", 35), wire(t, y, "many", 35)...)
	client := wire(t, x, "client", 1)[0]

	np := service("web", "frontend", corev1.ServiceTypeNodePort, 80, 8080)
	np.Spec.Ports[0].NodePort = 30080
	np.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
	np = apply(t, c, np, framework.Backends(web))
	big := apply(t, c, service("batch", "workers", "", 9000, 9000), framework.Backends(many))

	for _, n := range c.Nodes {
		snat := "SNAT-to-" + nthIP(n.Spec.PodCIDR, 2)
		all := func(pods []framework.Pod) []string {
			return backends(local(onNode(pods, n.Name())...), remote(notOnNode(pods, n.Name())...))
		}
		cipFlags, npFlags := flags("DSR", "client-IP-affinity"), flags("local-routed-VIP", "VIP-external-IP", "client-IP-affinity", snat)
		if n == y { // HNS 9.5 has no session affinity
			cipFlags, npFlags = flags("DSR"), flags("local-routed-VIP", "VIP-external-IP", snat)
		}
		expectLBs(t, c, n, np,
			lb("ClusterIP", frontend(np.Spec.ClusterIP, 80, "TCP", 8080), cipFlags, all(web)...),
			lb("NodePort", frontend("*", 30080, "TCP", 8080), npFlags, all(web)...))
	}
	// ws2022: all 70 backends; ws2019: a subset of exactly 64.
	expectLBs(t, c, x, big, lb("ClusterIP", frontend(big.Spec.ClusterIP, 9000, "TCP", 9000), flags("DSR"),
		backends(local(onNode(many, x.Name())...), remote(onNode(many, y.Name())...))...))
	expectCappedLB(t, c, y, big, many, 64)

	webX, webY := onNode(web, x.Name()), onNode(web, y.Name())
	flows := []flowCase{
		{name: "pod to pod through VXLAN", flow: framework.Flow{Src: client.IP.String() + ":33000", Dst: addr(webY[0].IP.String(), 8080), Protocol: "tcp"},
			outcome: vfp.DeliveredToPod, backends: webY, port: 8080, clientIP: boolp(true)},
		{name: "pod to ClusterIP", flow: framework.Flow{Src: client.IP.String() + ":33001", Dst: addr(np.Spec.ClusterIP, 80), Protocol: "tcp"},
			outcome: vfp.DeliveredToPod, backends: web, port: 8080},
		{name: "pod to the capped Service", flow: framework.Flow{Src: client.IP.String() + ":33002", Dst: addr(big.Spec.ClusterIP, 9000), Protocol: "tcp"},
			outcome: vfp.DeliveredToPod, backends: many, port: 9000},
		{name: "pod to outside", flow: framework.Flow{Src: client.IP.String() + ":33003", Dst: internet, Protocol: "tcp"},
			outcome: vfp.LeftCluster, clientIP: boolp(false)},
		{name: "node to local pod", flow: framework.Flow{Src: x.Spec.NodeIP + ":33004", Dst: addr(webX[0].IP.String(), 8080), Protocol: "tcp"},
			outcome: vfp.DeliveredToPod, backends: webX, port: 8080},
		{name: "pod to node", flow: framework.Flow{Src: client.IP.String() + ":33005", Dst: y.Spec.NodeIP + ":10250", Protocol: "tcp"},
			outcome: vfp.DeliveredToHost, node: y.Name()},
		{name: "outside to NodePort on the ws2019 node", flow: framework.Flow{Src: outsideClient, Dst: addr(y.Spec.NodeIP, 30080), Protocol: "tcp", Ingress: y.Name()},
			outcome: vfp.DeliveredToPod, backends: web, port: 8080, clientIP: boolp(false)},
	}
	for _, fc := range flows {
		checkFlow(t, c, fc)
	}
}
