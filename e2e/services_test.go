//go:build e2e

package e2e

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
	"github.com/hnsproxy/hnsproxy/vfp"
)

// Addresses below are simulator data (TEST-NET ranges for outside
// clients and cloud addresses); nothing is sent anywhere.
const (
	outsideClient = "198.51.100.7:40000"
	internet      = "198.51.100.200:443"
	ingressLocal  = "203.0.113.10"
	ingressPDst   = "203.0.113.20"
	externalIP    = "198.51.100.50"
)

// l2bridgeSpec is two Windows Server 2022 nodes on Flannel host-gw's cbr0.
var l2bridgeSpec = framework.ClusterSpec{
	NetworkType: framework.NetworkL2Bridge,
	Nodes: []framework.NodeSpec{
		{Name: "win-a", Profile: "ws2022", NodeIP: "10.0.0.11", PodCIDR: "10.244.1.0/24"},
		{Name: "win-b", Profile: "ws2022", NodeIP: "10.0.0.12", PodCIDR: "10.244.2.0/24"},
	},
}

// TestL2BridgeServices applies every Service shape to two l2bridge nodes and
// checks each node's HNS load balancers exactly and the flows of the
// Windows networking guide (pod to pod, pod to Service, pod to outside,
// node to pod, pod to node, outside to NodePort and LoadBalancer).
func TestL2BridgeServices(t *testing.T) {
	c := framework.StartClusterForTest(t, l2bridgeSpec)
	a, b := c.Nodes[0], c.Nodes[1]
	web := append(wire(t, a, "web", 2), wire(t, b, "web", 1)...)
	dns := append(wire(t, a, "dns", 1), wire(t, b, "dns", 1)...)
	ing := wire(t, a, "ing", 2)
	client := wire(t, a, "client", 1)[0]
	clientB := wire(t, b, "client", 1)[0]
	webA, webB := onNode(web, a.Name()), onNode(web, b.Name())

	// CoreDNS-like: UDP and TCP 53.
	dnsSvc := service("kube-system", "kube-dns", "", 53, 53)
	dnsSvc.Spec.ClusterIP = "10.96.0.10"
	dnsSvc.Spec.Ports[0].Name, dnsSvc.Spec.Ports[0].Protocol = "dns", corev1.ProtocolUDP
	dnsSvc.Spec.Ports = append(dnsSvc.Spec.Ports, corev1.ServicePort{Name: "dns-tcp", Protocol: corev1.ProtocolTCP, Port: 53, TargetPort: dnsSvc.Spec.Ports[0].TargetPort})
	dnsSvc = apply(t, c, dnsSvc, framework.Backends(dns))

	// NodePort with ClientIP affinity.
	np := service("web", "frontend", corev1.ServiceTypeNodePort, 80, 8080)
	np.Spec.Ports[0].NodePort = 30080
	np.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
	np = apply(t, c, np, framework.Backends(web))

	// LoadBalancer, externalTrafficPolicy Local, status ingress IP.
	lbLocal := service("web", "ingress", corev1.ServiceTypeLoadBalancer, 443, 8443)
	lbLocal.Spec.Ports[0].NodePort = 30443
	lbLocal.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	lbLocal.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: ingressLocal}}
	lbLocal = apply(t, c, lbLocal, framework.Backends(ing))

	// externalIPs.
	ext := service("web", "external", "", 8081, 8080)
	ext.Spec.ExternalIPs = []string{externalIP}
	ext = apply(t, c, ext, framework.Backends(web))

	// internalTrafficPolicy Local with pods on win-a only.
	itp := service("web", "node-local", "", 9090, 8443)
	itp.Spec.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicyLocal)
	itp = apply(t, c, itp, framework.Backends(ing))

	// preserve-destination on a LoadBalancer (DSR is on).
	pdst := service("web", "preserve", corev1.ServiceTypeLoadBalancer, 80, 8080)
	pdst.Annotations = map[string]string{"preserve-destination": "true"}
	pdst.Spec.Ports[0].NodePort = 30081
	pdst.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: ingressPDst}}
	pdst = apply(t, c, pdst, framework.Backends(web))

	// Terminating endpoints: ignored beside ready ones, used when none is ready.
	term := service("web", "draining", "", 7000, 8080)
	term = apply(t, c, term, []framework.Backend{{Pod: webA[0]}, {Pod: webB[0], Terminating: true}})
	termOnly := service("web", "drained", "", 7001, 8080)
	termOnly = apply(t, c, termOnly, []framework.Backend{{Pod: webB[0], Terminating: true}})

	// Dual-stack Service on single-stack nodes: both ClusterIPs allocated,
	// but the pods have IPv4 addresses only, so only IPv4 is programmed
	// (TestDualStackServices runs dual-stack nodes).
	dual := service("web", "dual", "", 8000, 8080)
	dual.Spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicyPreferDualStack)
	dual = apply(t, c, dual, framework.Backends(web))
	if len(dual.Spec.ClusterIPs) != 2 {
		t.Errorf("dual-stack Service got ClusterIPs %v, want one per family", dual.Spec.ClusterIPs)
	}

	for _, n := range c.Nodes {
		dsr := flags("DSR")
		// Without DSR, l2bridge load balancers SNAT to the node IP.
		snat := "SNAT-to-" + n.Spec.NodeIP
		localWeb := webA
		all := func(pods []framework.Pod) []string {
			return backends(local(onNode(pods, n.Name())...), remote(notOnNode(pods, n.Name())...))
		}
		if n == b {
			localWeb = webB
		}
		expectLBs(t, c, n, dnsSvc,
			lb("ClusterIP", frontend("10.96.0.10", 53, "UDP", 53), dsr, all(dns)...),
			lb("ClusterIP", frontend("10.96.0.10", 53, "TCP", 53), dsr, all(dns)...))
		expectLBs(t, c, n, np,
			lb("ClusterIP", frontend(np.Spec.ClusterIP, 80, "TCP", 8080), flags("DSR", "client-IP-affinity"), all(web)...),
			lb("NodePort", frontend("*", 30080, "TCP", 8080), flags("local-routed-VIP", "VIP-external-IP", "client-IP-affinity", snat), all(web)...))
		if n == a {
			expectLBs(t, c, n, lbLocal,
				lb("ClusterIP", frontend(lbLocal.Spec.ClusterIP, 443, "TCP", 8443), dsr, local(ing...)...),
				lb("LoadBalancer", frontend(ingressLocal, 443, "TCP", 8443), flags("DSR", "VIP-external-IP"), local(ing...)...),
				lb("NodePort", frontend("*", 30443, "TCP", 8443), flags("DSR", "local-routed-VIP", "VIP-external-IP"), local(ing...)...))
			expectLBs(t, c, n, itp, lb("ClusterIP", frontend(itp.Spec.ClusterIP, 9090, "TCP", 8443), dsr, local(ing...)...))
		} else {
			// No local endpoint: only the ClusterIP, to win-a's pods.
			expectLBs(t, c, n, lbLocal, lb("ClusterIP", frontend(lbLocal.Spec.ClusterIP, 443, "TCP", 8443), dsr, remote(ing...)...))
			expectLBs(t, c, n, itp)
		}
		expectLBs(t, c, n, ext,
			lb("ClusterIP", frontend(ext.Spec.ClusterIP, 8081, "TCP", 8080), dsr, all(web)...),
			lb("ExternalIP", frontend(externalIP, 8081, "TCP", 8080), flags("VIP-external-IP", snat), all(web)...))
		expectLBs(t, c, n, pdst,
			lb("ClusterIP", frontend(pdst.Spec.ClusterIP, 80, "TCP", 8080), dsr, all(web)...),
			lb("LoadBalancer", frontend(ingressPDst, 80, "TCP", 8080), flags("DSR", "mux", "preserve-destination", "VIP-external-IP"), local(localWeb...)...),
			lb("NodePort", frontend("*", 30081, "TCP", 8080), flags("local-routed-VIP", "VIP-external-IP", snat), local(localWeb...)...))
		expectLBs(t, c, n, term, lb("ClusterIP", frontend(term.Spec.ClusterIP, 7000, "TCP", 8080), dsr, all(webA[:1])...))
		expectLBs(t, c, n, termOnly, lb("ClusterIP", frontend(termOnly.Spec.ClusterIP, 7001, "TCP", 8080), dsr, all(webB[:1])...))
		expectLBs(t, c, n, dual, lb("ClusterIP", frontend(dual.Spec.ClusterIPs[0], 8000, "TCP", 8080), dsr, all(web)...))
	}

	flows := []flowCase{
		{name: "pod to pod on another node", flow: framework.Flow{Src: client.IP.String() + ":33000", Dst: addr(webB[0].IP.String(), 8080), Protocol: "tcp"},
			outcome: vfp.DeliveredToPod, backends: webB, port: 8080, clientIP: boolp(true)},
		{name: "pod to pod on the same node", flow: framework.Flow{Src: client.IP.String() + ":33001", Dst: addr(webA[0].IP.String(), 8080), Protocol: "tcp"},
			outcome: vfp.DeliveredToPod, backends: webA[:1], port: 8080},
		{name: "pod to cluster DNS (UDP)", flow: framework.Flow{Src: client.IP.String() + ":33002", Dst: "10.96.0.10:53", Protocol: "udp"},
			outcome: vfp.DeliveredToPod, backends: dns, port: 53},
		{name: "pod to cluster DNS (TCP)", flow: framework.Flow{Src: clientB.IP.String() + ":33003", Dst: "10.96.0.10:53", Protocol: "tcp"},
			outcome: vfp.DeliveredToPod, backends: dns, port: 53},
		{name: "pod to ClusterIP", flow: framework.Flow{Src: clientB.IP.String() + ":33004", Dst: addr(np.Spec.ClusterIP, 80), Protocol: "tcp"},
			outcome: vfp.DeliveredToPod, backends: web, port: 8080},
		{name: "pod to outside (outbound NAT)", flow: framework.Flow{Src: client.IP.String() + ":33005", Dst: internet, Protocol: "tcp"},
			outcome: vfp.LeftCluster, clientIP: boolp(false)},
		{name: "node to pod", flow: framework.Flow{Src: a.Spec.NodeIP + ":33006", Dst: addr(webB[0].IP.String(), 8080), Protocol: "tcp"},
			outcome: vfp.DeliveredToPod, backends: webB, port: 8080},
		{name: "pod to node", flow: framework.Flow{Src: client.IP.String() + ":33007", Dst: b.Spec.NodeIP + ":10250", Protocol: "tcp"},
			outcome: vfp.DeliveredToHost, node: b.Name()},
		{name: "outside to NodePort", flow: framework.Flow{Src: outsideClient, Dst: addr(b.Spec.NodeIP, 30080), Protocol: "tcp", Ingress: b.Name()},
			outcome: vfp.DeliveredToPod, backends: web, port: 8080},
		{name: "outside to LoadBalancer (ETP Local) at a node with pods", flow: framework.Flow{Src: outsideClient, Dst: addr(ingressLocal, 443), Protocol: "tcp", Ingress: a.Name()},
			outcome: vfp.DeliveredToPod, backends: ing, port: 8443, node: a.Name(), clientIP: boolp(true)},
		{name: "outside to LoadBalancer (ETP Local) at a node without pods", flow: framework.Flow{Src: outsideClient, Dst: addr(ingressLocal, 443), Protocol: "tcp", Ingress: b.Name()},
			outcome: vfp.Dropped},
		{name: "outside to NodePort (ETP Local) at a node with pods", flow: framework.Flow{Src: outsideClient, Dst: addr(a.Spec.NodeIP, 30443), Protocol: "tcp", Ingress: a.Name()},
			outcome: vfp.DeliveredToPod, backends: ing, port: 8443, clientIP: boolp(true)},
		{name: "pod to externalIP", flow: framework.Flow{Src: clientB.IP.String() + ":33008", Dst: addr(externalIP, 8081), Protocol: "tcp"},
			outcome: vfp.DeliveredToPod, backends: web, port: 8080},
		{name: "pod to internalTrafficPolicy Local at a node with pods", flow: framework.Flow{Src: client.IP.String() + ":33009", Dst: addr(itp.Spec.ClusterIP, 9090), Protocol: "tcp"},
			outcome: vfp.DeliveredToPod, backends: ing, port: 8443, node: a.Name()},
		{name: "outside to preserve-destination LoadBalancer", flow: framework.Flow{Src: outsideClient, Dst: addr(ingressPDst, 80), Protocol: "tcp", Ingress: b.Name()},
			outcome: vfp.DeliveredToPod, backends: webB, port: 8080, seenDst: ingressPDst},
		{name: "pod to draining Service reaches the ready pod", flow: framework.Flow{Src: clientB.IP.String() + ":33010", Dst: addr(term.Spec.ClusterIP, 7000), Protocol: "tcp"},
			outcome: vfp.DeliveredToPod, backends: webA[:1], port: 8080},
		{name: "pod to drained Service reaches the terminating pod", flow: framework.Flow{Src: client.IP.String() + ":33011", Dst: addr(termOnly.Spec.ClusterIP, 7001), Protocol: "tcp"},
			outcome: vfp.DeliveredToPod, backends: webB[:1], port: 8080},
	}
	for _, fc := range flows {
		checkFlow(t, c, fc)
	}

	// ClientIP affinity: one client, many connections, one backend.
	first := tracePacket(t, c, framework.Flow{Src: client.IP.String() + ":40001", Dst: addr(np.Spec.ClusterIP, 80), Protocol: "tcp"})
	for port := 40002; port < 40010; port++ {
		tr := tracePacket(t, c, framework.Flow{Src: client.IP.String() + ":" + itoa(port), Dst: addr(np.Spec.ClusterIP, 80), Protocol: "tcp"})
		if tr.Verdict.Backend != first.Verdict.Backend {
			t.Errorf("affinity: source port %d reached %s, port 40001 reached %s", port, tr.Verdict.Backend, first.Verdict.Backend)
		}
	}
}

func notOnNode(pods []framework.Pod, node string) []framework.Pod {
	var out []framework.Pod
	for _, p := range pods {
		if p.Node != node {
			out = append(out, p)
		}
	}
	return out
}
