//go:build e2e

package e2e

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
	"github.com/hnsproxy/hnsproxy/vfp"
)

// dualStackSpec is two dual-stack Windows Server 2022 nodes on l2bridge:
// an InternalIP and a pod CIDR of each family, pods with both addresses.
var dualStackSpec = framework.ClusterSpec{
	NetworkType: framework.NetworkL2Bridge,
	Nodes: []framework.NodeSpec{
		{Name: "win-a", Profile: "ws2022", NodeIP: "10.0.0.21", PodCIDR: "10.244.3.0/24", NodeIPv6: "fd00:10::21", PodCIDRv6: "fd00:10:244:3::/64"},
		{Name: "win-b", Profile: "ws2022", NodeIP: "10.0.0.22", PodCIDR: "10.244.4.0/24", NodeIPv6: "fd00:10::22", PodCIDRv6: "fd00:10:244:4::/64"},
	},
}

// TestDualStackServices wires dual-stack pods with hnscni and checks that
// each node programs both families: a RequireDualStack NodePort Service
// gets an IPv4 and an IPv6 ClusterIP and NodePort load balancer (the IPv6
// ones flagged IPv6, over the pods' IPv6 addresses), a SingleStack IPv6
// Service only IPv6 ones; and that IPv6 flows reach the pods across nodes.
func TestDualStackServices(t *testing.T) {
	c := framework.StartClusterForTest(t, dualStackSpec)
	a, b := c.Nodes[0], c.Nodes[1]
	web := append(wire(t, a, "web", 2), wire(t, b, "web", 1)...)
	client := wire(t, a, "client", 1)[0]
	for _, p := range append(web, client) {
		if !p.IPv6.IsValid() || !p.IPv6.Is6() {
			t.Fatalf("pod %s on %s has no IPv6 address (IPv4 %s)", p.Name, p.Node, p.IP)
		}
	}

	dual := service("web", "dual", corev1.ServiceTypeNodePort, 80, 8080)
	dual.Spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicyRequireDualStack)
	dual.Spec.Ports[0].NodePort = 30090
	dual = apply(t, c, dual, framework.Backends(web))
	if len(dual.Spec.ClusterIPs) != 2 {
		t.Fatalf("RequireDualStack Service got ClusterIPs %v", dual.Spec.ClusterIPs)
	}
	v6only := service("web", "v6only", "", 81, 8080)
	v6only.Spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicySingleStack)
	v6only.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol}
	v6only = apply(t, c, v6only, framework.Backends(web))

	for _, n := range c.Nodes {
		all := backends(local(onNode(web, n.Name())...), remote(notOnNode(web, n.Name())...))
		all6 := backends(local6(onNode(web, n.Name())...), remote6(notOnNode(web, n.Name())...))
		snat := "SNAT-to-" + n.Spec.NodeIP
		snat6 := "SNAT-to-" + n.Spec.NodeIPv6
		expectLBs(t, c, n, dual,
			lb("ClusterIP", frontend(dual.Spec.ClusterIPs[0], 80, "TCP", 8080), flags("DSR"), all...),
			lb("ClusterIP", frontend(dual.Spec.ClusterIPs[1], 80, "TCP", 8080), flags("DSR", "IPv6"), all6...),
			lb("NodePort", frontend("*", 30090, "TCP", 8080), flags("local-routed-VIP", "VIP-external-IP", snat), all...),
			lb("NodePort", frontend("::", 30090, "TCP", 8080), flags("IPv6", "local-routed-VIP", "VIP-external-IP", snat6), all6...))
		expectLBs(t, c, n, v6only,
			lb("ClusterIP", frontend(v6only.Spec.ClusterIP, 81, "TCP", 8080), flags("DSR", "IPv6"), all6...))
	}
	if t.Failed() {
		t.FailNow()
	}

	webB := onNode(web, b.Name())
	flows := []flowCase{
		{name: "IPv6 pod to pod on another node", flow: framework.Flow{Src: addr(client.IPv6.String(), 33000), Dst: addr(webB[0].IPv6.String(), 8080), Protocol: "tcp"},
			outcome: vfp.DeliveredToPod, backends: webB, port: 8080, clientIP: boolp(true)},
		{name: "IPv6 pod to the IPv6 ClusterIP", flow: framework.Flow{Src: addr(client.IPv6.String(), 33001), Dst: addr(dual.Spec.ClusterIPs[1], 80), Protocol: "tcp"},
			outcome: vfp.DeliveredToPod, backends: web, port: 8080},
		{name: "IPv4 pod to the IPv4 ClusterIP of the same Service", flow: framework.Flow{Src: addr(client.IP.String(), 33002), Dst: addr(dual.Spec.ClusterIPs[0], 80), Protocol: "tcp"},
			outcome: vfp.DeliveredToPod, backends: web, port: 8080},
		{name: "IPv6 pod to the single-stack IPv6 Service", flow: framework.Flow{Src: addr(client.IPv6.String(), 33003), Dst: addr(v6only.Spec.ClusterIP, 81), Protocol: "tcp"},
			outcome: vfp.DeliveredToPod, backends: web, port: 8080},
		{name: "outside to the IPv6 NodePort", flow: framework.Flow{Src: "[2001:db8::7]:40000", Dst: addr(b.Spec.NodeIPv6, 30090), Protocol: "tcp", Ingress: b.Name()},
			outcome: vfp.DeliveredToPod, backends: web, port: 8080},
	}
	for _, fc := range flows {
		checkFlow(t, c, fc)
	}
}
