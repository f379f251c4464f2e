package proxier

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
	"github.com/hnsproxy/hnsproxy/vfp"
)

// Packet-flow table tests: Services and EndpointSlices go through the real
// proxier of three simulated nodes; then the flows Kubernetes promises on
// Windows (pod→pod, pod→Service, node→pod, pod→node, external→NodePort and
// LoadBalancer IP) are traced through the nodes' HNS state with the VFP
// model, on l2bridge and overlay, with and without --enable-dsr.

// The cluster: three nodes, pods 10.244.<n>.10/.11; win-3 hosts a pod that
// backs no Service, so it sees every Service from a node without backends.
const (
	ip1, ip2, ip3 = "10.0.0.1", "10.0.0.2", "10.0.0.3"
	pod1a, pod1b  = "10.244.1.10", "10.244.1.11"
	pod2a, pod2b  = "10.244.2.10", "10.244.2.11"
	pod3a         = "10.244.3.10"
	extClient     = "203.0.113.7"
)

func threeNodes() []nodeSpec {
	return []nodeSpec{
		{name: "win-1", ips: []string{ip1}, podCIDRs: []string{"10.244.1.0/24"}, pods: []string{pod1a, pod1b}},
		{name: "win-2", ips: []string{ip2}, podCIDRs: []string{"10.244.2.0/24"}, pods: []string{pod2a, pod2b}},
		{name: "win-3", ips: []string{ip3}, podCIDRs: []string{"10.244.3.0/24"}, pods: []string{pod3a}},
	}
}

// flowServices are the Services every flow variant programs.
func flowServices() []any {
	const ipv4 = discoveryv1.AddressTypeIPv4
	nodePort := func(typ v1.ServiceType, port int32, etp v1.ServiceExternalTrafficPolicy, ingress string) func(*v1.Service) {
		return func(s *v1.Service) {
			s.Spec.Type = typ
			s.Spec.Ports[0].NodePort = port
			s.Spec.ExternalTrafficPolicy = etp
			if ingress != "" {
				s.Status.LoadBalancer.Ingress = []v1.LoadBalancerIngress{{IP: ingress}}
			}
			if typ == v1.ServiceTypeLoadBalancer && etp == v1.ServiceExternalTrafficPolicyLocal {
				s.Spec.HealthCheckNodePort = 32000 + port%100
			}
		}
	}
	return []any{
		service("web", "10.96.0.10"),
		sliceOf("web", "web-1", ipv4, readyEP(pod1a, "win-1"), readyEP(pod2a, "win-2")),

		service("itp-local", "10.96.0.20", func(s *v1.Service) {
			s.Spec.InternalTrafficPolicy = ptr.To(v1.ServiceInternalTrafficPolicyLocal)
		}),
		sliceOf("itp-local", "itp-local-1", ipv4, readyEP(pod1a, "win-1"), readyEP(pod2a, "win-2")),

		service("np", "10.96.0.30", nodePort(v1.ServiceTypeNodePort, 30080, v1.ServiceExternalTrafficPolicyCluster, "")),
		sliceOf("np", "np-1", ipv4, readyEP(pod2a, "win-2")),

		service("lb-local", "10.96.0.40", nodePort(v1.ServiceTypeLoadBalancer, 30081, v1.ServiceExternalTrafficPolicyLocal, "192.0.2.10")),
		sliceOf("lb-local", "lb-local-1", ipv4, readyEP(pod1a, "win-1"), readyEP(pod2a, "win-2")),

		service("lb-cluster", "10.96.0.50", nodePort(v1.ServiceTypeLoadBalancer, 30082, v1.ServiceExternalTrafficPolicyCluster, "192.0.2.20")),
		sliceOf("lb-cluster", "lb-cluster-1", ipv4, readyEP(pod1b, "win-1"), readyEP(pod2a, "win-2")),

		service("keep-dst", "10.96.0.60", nodePort(v1.ServiceTypeLoadBalancer, 30083, v1.ServiceExternalTrafficPolicyCluster, "192.0.2.30"),
			func(s *v1.Service) { s.Annotations = map[string]string{desired.PreserveDestinationAnnotation: "true"} }),
		sliceOf("keep-dst", "keep-dst-1", ipv4, readyEP(pod1a, "win-1"), readyEP(pod2a, "win-2")),

		service("sticky", "10.96.0.70", func(s *v1.Service) { s.Spec.SessionAffinity = v1.ServiceAffinityClientIP }),
		sliceOf("sticky", "sticky-1", ipv4, readyEP(pod1a, "win-1"), readyEP(pod1b, "win-1"), readyEP(pod2a, "win-2")),

		service("ext-ip", "10.96.0.90", func(s *v1.Service) { s.Spec.ExternalIPs = []string{"192.0.2.40"} }),
		sliceOf("ext-ip", "ext-ip-1", ipv4, readyEP(pod2a, "win-2")),

		service("dns", "10.96.0.53", func(s *v1.Service) {
			s.Spec.Ports = []v1.ServicePort{{Name: "http", Protocol: v1.ProtocolUDP, Port: 53, TargetPort: s.Spec.Ports[0].TargetPort}}
		}),
		udpSlice("dns", "dns-1", readyEP(pod1a, "win-1"), readyEP(pod2a, "win-2")),

		// Terminating endpoints serve only when no endpoint is ready (KEP-1669).
		service("draining", "10.96.0.80"),
		sliceOf("draining", "draining-1", ipv4, readyEP(pod1a, "win-1"), terminatingEP(pod2a, "win-2", true)),
		service("all-draining", "10.96.0.81"),
		sliceOf("all-draining", "all-draining-1", ipv4, terminatingEP(pod1a, "win-1", false), terminatingEP(pod2a, "win-2", true)),
	}
}

// flowVariant is one cluster configuration the flow table runs on.
type flowVariant struct {
	mode desired.NetworkMode
	dsr  bool
}

func (v flowVariant) String() string { return fmt.Sprintf("%s/dsr=%t", v.mode, v.dsr) }

// srcKind is what source address the receiver must see.
type srcKind int

const (
	srcClient     srcKind = iota // the original source
	srcSNAT                      // the load balancer node's SNAT address (l2bridge: node IP; overlay: source VIP)
	srcClusterDSR                // the client with --enable-dsr, else SNAT (ClusterIP load balancers)
	srcSenderNode                // the sending pod's node IP (the pod's OutBoundNAT)
)

// dstKind is what destination the receiver must see.
type dstKind int

const (
	dstUnchanged dstKind = iota // direct traffic: the address sent to
	dstBackend                  // the chosen backend's IP and target port
	dstVIP                      // preserve-destination: the frontend IP with the target port
)

// flow is one row of the table.
type flow struct {
	name string
	// from is a pod IP, a node name or extClient; to is ip:port.
	from, to string
	// ingress is where an external packet enters (default: the owner of to).
	ingress string
	// only limits the row to some variants.
	only func(flowVariant) bool

	udp bool // UDP instead of TCP

	outcome  vfp.Outcome
	backends []string // the set of backend IPs reachable over many source ports
	noLB     bool     // no load balancer may match
	src      srcKind
	dst      dstKind
	pinned   bool // every source port of the client reaches the same backend
}

func l2bridgeOnly(v flowVariant) bool  { return v.mode == desired.L2Bridge }
func overlayOnly(v flowVariant) bool   { return v.mode == desired.Overlay }
func overlayDSR(v flowVariant) bool    { return v.mode == desired.Overlay && v.dsr }
func notOverlayDSR(v flowVariant) bool { return !overlayDSR(v) }

var flowTable = []flow{
	// Pod → pod by IP.
	{name: "pod to pod, same node", from: pod1a, to: pod1b + ":8080", outcome: vfp.DeliveredToPod, backends: []string{pod1b}},
	{name: "pod to pod, other node", from: pod1a, to: pod2a + ":8080", outcome: vfp.DeliveredToPod, backends: []string{pod2a}},
	{name: "pod to pod, third node", from: pod3a, to: pod1b + ":8080", outcome: vfp.DeliveredToPod, backends: []string{pod1b}},

	// Pod → ClusterIP.
	{name: "pod to ClusterIP, local and remote backends", from: pod1b, to: "10.96.0.10:80",
		outcome: vfp.DeliveredToPod, backends: []string{pod1a, pod2a}, src: srcClusterDSR, dst: dstBackend},
	{name: "pod to ClusterIP, remote backends only", from: pod3a, to: "10.96.0.10:80",
		outcome: vfp.DeliveredToPod, backends: []string{pod1a, pod2a}, src: srcClusterDSR, dst: dstBackend},
	{name: "pod to ClusterIP of a NodePort Service", from: pod1a, to: "10.96.0.30:80",
		outcome: vfp.DeliveredToPod, backends: []string{pod2a}, src: srcClusterDSR, dst: dstBackend},
	{name: "pod to UDP ClusterIP", from: pod3a, to: "10.96.0.53:53", udp: true,
		outcome: vfp.DeliveredToPod, backends: []string{pod1a, pod2a}, src: srcClusterDSR, dst: dstBackend},
	{name: "TCP to a UDP-only ClusterIP drops", from: pod3a, to: "10.96.0.53:53", outcome: vfp.Dropped, noLB: true},
	{name: "internalTrafficPolicy Local reaches the local backend only", from: pod1b, to: "10.96.0.20:80",
		outcome: vfp.DeliveredToPod, backends: []string{pod1a}, src: srcClusterDSR, dst: dstBackend},
	{name: "internalTrafficPolicy Local on the other node", from: pod2b, to: "10.96.0.20:80",
		outcome: vfp.DeliveredToPod, backends: []string{pod2a}, src: srcClusterDSR, dst: dstBackend},
	{name: "internalTrafficPolicy Local without a local backend drops", from: pod3a, to: "10.96.0.20:80",
		outcome: vfp.Dropped, noLB: true},
	{name: "session affinity pins a client", from: pod3a, to: "10.96.0.70:80",
		outcome: vfp.DeliveredToPod, pinned: true, backends: []string{pod1a, pod1b, pod2a}, src: srcClusterDSR, dst: dstBackend},
	{name: "ready endpoints win over terminating ones", from: pod3a, to: "10.96.0.80:80",
		outcome: vfp.DeliveredToPod, backends: []string{pod1a}, src: srcClusterDSR, dst: dstBackend},
	{name: "only serving terminating endpoints when none is ready", from: pod3a, to: "10.96.0.81:80",
		outcome: vfp.DeliveredToPod, backends: []string{pod2a}, src: srcClusterDSR, dst: dstBackend},

	// Node → pod and node → Service.
	{name: "node to local pod", from: "win-1", to: pod1a + ":8080", outcome: vfp.DeliveredToPod, backends: []string{pod1a}},
	{name: "node to remote pod", from: "win-1", to: pod2a + ":8080", only: l2bridgeOnly,
		outcome: vfp.DeliveredToPod, backends: []string{pod2a}},
	// Flannel VXLAN: node-pod connectivity only for local pods.
	{name: "node to remote pod on overlay", from: "win-1", to: pod2a + ":8080", only: overlayOnly, outcome: vfp.Dropped},
	{name: "node to ClusterIP", from: "win-3", to: "10.96.0.10:80", only: notOverlayDSR,
		outcome: vfp.DeliveredToPod, backends: []string{pod1a, pod2a}, src: srcClusterDSR, dst: dstBackend},
	// With --enable-dsr the ClusterIP load balancer keeps the node's
	// address, which overlay cannot encapsulate to a remote pod (the model's
	// Flannel VXLAN rule); only a local backend would be reachable.
	{name: "node to ClusterIP on overlay with DSR, remote backends", from: "win-3", to: "10.96.0.10:80", only: overlayDSR,
		outcome: vfp.Dropped},
	{name: "node to ClusterIP on overlay with DSR, local backend", from: "win-2", to: "10.96.0.30:80", only: overlayDSR,
		outcome: vfp.DeliveredToPod, backends: []string{pod2a}, src: srcClient, dst: dstBackend},

	// Pod → node.
	{name: "pod to its own node", from: pod1a, to: ip1 + ":10250", outcome: vfp.DeliveredToHost},
	{name: "pod to another node", from: pod1a, to: ip2 + ":10250", outcome: vfp.DeliveredToHost, src: srcSenderNode},

	// External → NodePort.
	{name: "NodePort, backend on another node", from: extClient, to: ip1 + ":30080",
		outcome: vfp.DeliveredToPod, backends: []string{pod2a}, src: srcSNAT, dst: dstBackend},
	{name: "NodePort, backend on the node", from: extClient, to: ip2 + ":30080",
		outcome: vfp.DeliveredToPod, backends: []string{pod2a}, src: srcSNAT, dst: dstBackend},
	{name: "NodePort externalTrafficPolicy Local keeps the client IP", from: extClient, to: ip1 + ":30081",
		outcome: vfp.DeliveredToPod, backends: []string{pod1a}, src: srcClient, dst: dstBackend},
	{name: "NodePort externalTrafficPolicy Local, other node's local backend", from: extClient, to: ip2 + ":30081",
		outcome: vfp.DeliveredToPod, backends: []string{pod2a}, src: srcClient, dst: dstBackend},
	{name: "NodePort externalTrafficPolicy Local on a node without local endpoints", from: extClient, to: ip3 + ":30081",
		outcome: vfp.DeliveredToHost, noLB: true},

	{name: "pod to its own node's NodePort", from: pod2b, to: ip2 + ":30080",
		outcome: vfp.DeliveredToPod, backends: []string{pod2a}, src: srcSNAT, dst: dstBackend},
	// Local NodePort access from the node itself is not supported on Windows.
	{name: "node to its own NodePort", from: "win-2", to: ip2 + ":30080", outcome: vfp.Dropped},
	{name: "node to another node's NodePort", from: "win-3", to: ip1 + ":30080",
		outcome: vfp.DeliveredToPod, backends: []string{pod2a}, src: srcSNAT, dst: dstBackend},

	// External → external IP.
	{name: "external IP, backend on another node", from: extClient, to: "192.0.2.40:80", ingress: "win-1",
		outcome: vfp.DeliveredToPod, backends: []string{pod2a}, src: srcSNAT, dst: dstBackend},
	{name: "pod to external IP", from: pod3a, to: "192.0.2.40:80",
		outcome: vfp.DeliveredToPod, backends: []string{pod2a}, src: srcSNAT, dst: dstBackend},

	// External → LoadBalancer ingress IP.
	{name: "ingress IP, externalTrafficPolicy Cluster", from: extClient, to: "192.0.2.20:80", ingress: "win-3",
		outcome: vfp.DeliveredToPod, backends: []string{pod1b, pod2a}, src: srcSNAT, dst: dstBackend},
	{name: "ingress IP, externalTrafficPolicy Local keeps the client IP", from: extClient, to: "192.0.2.10:80", ingress: "win-1",
		outcome: vfp.DeliveredToPod, backends: []string{pod1a}, src: srcClient, dst: dstBackend},
	{name: "ingress IP, externalTrafficPolicy Local via the other node", from: extClient, to: "192.0.2.10:80", ingress: "win-2",
		outcome: vfp.DeliveredToPod, backends: []string{pod2a}, src: srcClient, dst: dstBackend},
	{name: "ingress IP, externalTrafficPolicy Local on a node without local endpoints", from: extClient, to: "192.0.2.10:80", ingress: "win-3",
		outcome: vfp.Dropped, noLB: true},
	{name: "preserve-destination keeps the ingress IP and the client IP", from: extClient, to: "192.0.2.30:80", ingress: "win-1",
		outcome: vfp.DeliveredToPod, backends: []string{pod1a}, src: srcClient, dst: dstVIP},
	{name: "preserve-destination via the other node", from: extClient, to: "192.0.2.30:80", ingress: "win-2",
		outcome: vfp.DeliveredToPod, backends: []string{pod2a}, src: srcClient, dst: dstVIP},
	{name: "preserve-destination on a node without local endpoints", from: extClient, to: "192.0.2.30:80", ingress: "win-3",
		outcome: vfp.Dropped, noLB: true},
}

func TestPacketFlows(t *testing.T) {
	for _, v := range []flowVariant{
		{desired.L2Bridge, false}, {desired.L2Bridge, true},
		{desired.Overlay, false}, {desired.Overlay, true},
	} {
		t.Run(v.String(), func(t *testing.T) {
			c := newSimCluster(t, clusterSpec{profile: "ws2022", mode: v.mode, dsr: v.dsr, nodes: threeNodes()})
			c.apply(flowServices()...)
			c.converge()
			vc := c.vfp()
			for _, f := range flowTable {
				if f.only != nil && !f.only(v) {
					continue
				}
				t.Run(f.name, func(t *testing.T) { c.checkFlow(t, vc, v, f) })
			}
		})
	}
}

// sourcePorts is how many source ports a flow is traced from: enough for
// the model's hash to reach every backend of these small Services.
const sourcePorts = 64

// checkFlow traces f from many source ports and checks every verdict.
func (c *simCluster) checkFlow(t *testing.T, vc *vfp.Cluster, v flowVariant, f flow) {
	t.Helper()
	src := c.addr(f.from)
	dst := netip.MustParseAddrPort(f.to)
	reached := map[string]bool{}
	for i := range sourcePorts {
		pkt := vfp.Packet{Src: netip.AddrPortFrom(src, uint16(40000+i)), Dst: dst, Protocol: hnslb.ProtocolTCP}
		if f.udp {
			pkt.Protocol = hnslb.ProtocolUDP
		}
		verdict, err := vc.Trace(pkt, vfp.Options{Ingress: f.ingress})
		if err != nil {
			t.Fatalf("Trace(%s): %v", pkt, err)
		}
		if verdict.Outcome != f.outcome {
			t.Fatalf("%s: %s, want %s\n%s", pkt, verdict.Outcome, f.outcome, verdict)
		}
		if f.noLB && verdict.LoadBalancerID != "" {
			t.Fatalf("%s matched load balancer %s on %s, want none", pkt, verdict.LoadBalancerID, verdict.LBNode)
		}
		if !verdict.Delivered() {
			continue
		}
		if verdict.Outcome == vfp.DeliveredToPod {
			reached[verdict.Backend.Addr().String()] = true
		}
		if want := c.wantSrc(v, f, pkt, verdict); verdict.SeenSrc.Addr() != want {
			t.Fatalf("%s: receiver sees source %s, want %s\n%s", pkt, verdict.SeenSrc, want, verdict)
		}
		if want := wantDst(f, pkt, verdict); verdict.SeenDst != want {
			t.Fatalf("%s: receiver sees destination %s, want %s\n%s", pkt, verdict.SeenDst, want, verdict)
		}
	}
	got := sortedKeys(reached)
	if f.pinned {
		if len(got) != 1 || !slices.Contains(f.backends, got[0]) {
			t.Fatalf("one client reached backends %v over %d source ports, want exactly one of %v", got, sourcePorts, f.backends)
		}
		return
	}
	want := slices.Clone(f.backends)
	sort.Strings(want)
	if f.outcome == vfp.DeliveredToPod && !slices.Equal(got, want) {
		t.Fatalf("reached backends %v, want %v", got, want)
	}
}

// addr resolves a flow endpoint: a node name is the node's IPv4 address.
func (c *simCluster) addr(s string) netip.Addr {
	for _, ns := range c.spec.nodes {
		if ns.name == s {
			return netip.MustParseAddr(ns.ips[0])
		}
	}
	return netip.MustParseAddr(s)
}

// nodeAddr is the node's address of like's family.
func (c *simCluster) nodeAddr(node string, like netip.Addr) netip.Addr {
	for _, ns := range c.spec.nodes {
		if ns.name != node {
			continue
		}
		for _, s := range ns.ips {
			if ip := netip.MustParseAddr(s); ip.Is4() == like.Is4() {
				return ip
			}
		}
	}
	c.t.Fatalf("node %q has no address of %s's family", node, like)
	return netip.Addr{}
}

// snatAddr is the source a non-DSR load balancer on node gives packets
// of like's family.
func (c *simCluster) snatAddr(node string, like netip.Addr) netip.Addr {
	if c.spec.mode == desired.Overlay {
		for _, ns := range c.spec.nodes {
			if ns.name == node {
				return sourceVIP(ns)
			}
		}
	}
	return c.nodeAddr(node, like)
}

func (c *simCluster) wantSrc(v flowVariant, f flow, pkt vfp.Packet, verdict vfp.Verdict) netip.Addr {
	src := pkt.Src.Addr()
	switch f.src {
	case srcSNAT:
		return c.snatAddr(verdict.LBNode, src)
	case srcClusterDSR:
		if v.dsr {
			return src
		}
		return c.snatAddr(verdict.LBNode, src)
	case srcSenderNode:
		return c.nodeAddr(verdict.Hops[0].Node, src)
	}
	return src
}

func wantDst(f flow, pkt vfp.Packet, verdict vfp.Verdict) netip.AddrPort {
	switch f.dst {
	case dstBackend:
		return netip.AddrPortFrom(verdict.Backend.Addr(), targetPort(f))
	case dstVIP:
		return netip.AddrPortFrom(pkt.Dst.Addr(), targetPort(f))
	}
	return pkt.Dst
}

// targetPort is where the fixture's Services send: 8080/TCP, 5353/UDP.
func targetPort(f flow) uint16 {
	if f.udp {
		return 5353
	}
	return 8080
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestOverlayRemoteSubnetsAreReReadAtDriftRepair: a node whose pod subnet
// the overlay network does not route yet (flannel adds the route when it
// learns the node) is reachable once the route appears and the periodic
// drift repair has re-read the network: the remote endpoint then carries
// that node's provider address.
func TestOverlayRemoteSubnetsAreReReadAtDriftRepair(t *testing.T) {
	c := newSimCluster(t, clusterSpec{profile: "ws2022", mode: desired.Overlay, nodes: threeNodes()})
	c.converge() // started: a start still under way would overwrite repairNow's due repair
	n1 := c.node("win-1")
	nw, err := n1.hns.GetNetworkByID(context.Background(), n1.networkID)
	if err != nil {
		t.Fatal(err)
	}
	routes := nw.Policies
	var withoutWin3 []hnslb.NetworkPolicy
	for _, p := range routes {
		if !strings.Contains(string(p.Settings), ip3) {
			withoutWin3 = append(withoutWin3, p)
		}
	}
	setRoutes := func(pols []hnslb.NetworkPolicy) {
		t.Helper()
		if err := n1.hns.SetNetworkPolicies(n1.networkID, pols); err != nil {
			t.Fatal(err)
		}
		n1.repaired()
		c.converge()
	}
	// win-1's hnsproxy starts before Flannel there has learned win-3 (a
	// route that vanishes under a running proxier while its Node remains is
	// held: TestVanishedRouteIsHeldWhileItsNodeStays).
	n1.stop()
	if err := n1.hns.SetNetworkPolicies(n1.networkID, withoutWin3); err != nil {
		t.Fatal(err)
	}
	n1.start()
	c.converge()

	c.apply(service("web", "10.96.0.10"), sliceOf("web", "web-1", discoveryv1.AddressTypeIPv4, readyEP(pod3a, "win-3")))
	c.converge()
	f := flow{from: pod1a, to: "10.96.0.10:80", outcome: vfp.DeliveredToPod, backends: []string{pod3a}, src: srcSNAT, dst: dstBackend}
	if v, err := c.vfp().Trace(vfp.Packet{Src: netip.MustParseAddrPort(pod1a + ":40000"), Dst: netip.MustParseAddrPort(f.to), Protocol: hnslb.ProtocolTCP}, vfp.Options{}); err != nil || v.Outcome == vfp.DeliveredToPod {
		t.Fatalf("without a route to win-3's pods the flow was %v (err %v), want no delivery", v, err)
	}

	setRoutes(routes)
	if pa := n1.remoteEndpointPA(pod3a); pa != ip3 {
		t.Fatalf("remote endpoint %s has provider address %q after the route appeared, want %s", pod3a, pa, ip3)
	}
	c.checkFlow(t, c.vfp(), flowVariant{mode: desired.Overlay}, f)
}

// TestOverlayServiceVIPEndpointGoesWithTheService: on overlay each served
// cluster IP has a service-VIP endpoint; deleting the Service removes it.
func TestOverlayServiceVIPEndpointGoesWithTheService(t *testing.T) {
	c := newSimCluster(t, clusterSpec{profile: "ws2022", mode: desired.Overlay, nodes: threeNodes()[:2]})
	c.apply(service("web", "10.96.0.10"), sliceOf("web", "web-1", discoveryv1.AddressTypeIPv4, readyEP(pod2a, "win-2")))
	c.converge()
	n1 := c.node("win-1")
	if pa := n1.remoteEndpointPA("10.96.0.10"); pa != ip1 {
		t.Fatalf("service-VIP endpoint of 10.96.0.10 has provider address %q, want this node's %s", pa, ip1)
	}
	if err := c.client.CoreV1().Services("default").Delete(context.Background(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	delete(c.applied, "*v1.Service/default/web")
	n1.eventually("Service gone from the informer", func() bool {
		_, err := n1.proxier.services.Services("default").Get("web")
		return err != nil
	})
	c.converge()
	if got := n1.remoteEndpointIPs(); slices.Contains(got, "10.96.0.10") {
		t.Errorf("remote endpoints after the Service was deleted: %v, want no service-VIP endpoint for 10.96.0.10", got)
	}
}

// TestOverlayBackendsOutsideTheOverlay: on overlay, Services whose
// backends are a node's own address (a host-network pod on another Windows
// node, the API server on a Linux control-plane node) or a public IP are
// reached on the underlay, from pods and from the node, with and without
// DSR. The load balancers must SNAT to the node address, not the source
// VIP, which the underlay does not route back (winkernel's source VIP rule,
// kubernetes/kubernetes#91886).
func TestOverlayBackendsOutsideTheOverlay(t *testing.T) {
	const ipv4 = discoveryv1.AddressTypeIPv4
	const linuxCP, public = "10.0.0.100", "198.51.100.9"
	for _, dsr := range []bool{false, true} {
		t.Run(fmt.Sprintf("dsr=%t", dsr), func(t *testing.T) {
			c := newSimCluster(t, clusterSpec{profile: "ws2022", mode: desired.Overlay, dsr: dsr, nodes: threeNodes()})
			c.apply(
				service("api", "10.96.0.1"), sliceOf("api", "api-1", ipv4, readyEP(linuxCP, "linux-cp")),
				service("hostnet", "10.96.0.2"), sliceOf("hostnet", "hostnet-1", ipv4, readyEP(ip2, "win-2")),
				service("outside", "10.96.0.3"), sliceOf("outside", "outside-1", ipv4, readyEP(public, "")),
			)
			c.converge()
			vc := c.vfp()
			for _, tc := range []struct {
				from, to string
				outcome  vfp.Outcome
				backend  string
			}{
				{pod1a, "10.96.0.1:80", vfp.LeftCluster, linuxCP},
				{"win-1", "10.96.0.1:80", vfp.LeftCluster, linuxCP},
				{pod1a, "10.96.0.2:80", vfp.DeliveredToHost, ip2},
				{pod1a, "10.96.0.3:80", vfp.LeftCluster, public},
			} {
				pkt := vfp.Packet{Src: netip.AddrPortFrom(c.addr(tc.from), 40000), Dst: netip.MustParseAddrPort(tc.to), Protocol: hnslb.ProtocolTCP}
				v, err := vc.Trace(pkt, vfp.Options{})
				if err != nil {
					t.Fatalf("Trace(%s): %v", pkt, err)
				}
				if v.Outcome != tc.outcome || v.Backend.Addr().String() != tc.backend || v.SeenSrc.Addr().String() != ip1 {
					t.Errorf("%s: %s to %s seen from %s, want %s to %s seen from %s\n%s",
						pkt, v.Outcome, v.Backend, v.SeenSrc, tc.outcome, tc.backend, ip1, v)
				}
			}
		})
	}
}
