package vfp

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// backendsOver traces one packet per source (pod or external client IP and
// port) and returns the set of backends seen.
func backendsOver(t *testing.T, c *Cluster, dst string, opt Options, srcs []netip.AddrPort) map[netip.AddrPort]int {
	t.Helper()
	got := map[netip.AddrPort]int{}
	for _, src := range srcs {
		v, err := c.Trace(Packet{Src: src, Dst: ap(dst), Protocol: hnslb.ProtocolTCP}, opt)
		if err != nil {
			t.Fatal(err)
		}
		if v.Outcome != DeliveredToPod {
			t.Fatalf("%s -> %s: %s", src, dst, v)
		}
		got[v.Backend]++
	}
	return got
}

func ports(ip string, n int) []netip.AddrPort {
	var out []netip.AddrPort
	for p := 0; p < n; p++ {
		out = append(out, netip.AddrPortFrom(netip.MustParseAddr(ip), uint16(40000+p)))
	}
	return out
}

func TestSessionAffinityPinsAClient(t *testing.T) {
	c := l2bridgeCluster(t)
	// SourceIP: 64 connections of one pod land on one backend...
	if got := backendsOver(t, c, "10.96.0.30:80", Options{}, ports(podA1, 64)); len(got) != 1 {
		t.Errorf("SourceIP affinity: one client reached %d backends: %v", len(got), got)
	}
	// ...while the same backends without affinity spread by 5-tuple.
	if got := backendsOver(t, c, "10.96.0.31:80", Options{}, ports(podA1, 64)); len(got) < 2 {
		t.Errorf("5-tuple hash: 64 connections reached only %v", got)
	}
	// Affinity is per client: external clients on the affinity NodePort are
	// each pinned, and different clients spread over the backends.
	spread := map[netip.AddrPort]bool{}
	for i := 1; i <= 32; i++ {
		ip := fmt.Sprintf("203.0.113.%d", i)
		got := backendsOver(t, c, ipA+":30082", Options{}, ports(ip, 8))
		if len(got) != 1 {
			t.Fatalf("client %s reached %d backends: %v", ip, len(got), got)
		}
		for b := range got {
			spread[b] = true
		}
	}
	if len(spread) != 2 {
		t.Errorf("32 clients reached backends %v, want both", spread)
	}
}

func TestSourceIPProtocolDistribution(t *testing.T) {
	a := newHNS(nodeA, hnslb.NetworkTypeL2Bridge, "10.244.1.0/24", 0)
	for i := 10; i < 20; i++ {
		a.pod(fmt.Sprintf("10.244.1.%d", i))
	}
	var backends []string
	for i := 10; i < 20; i++ {
		backends = append(backends, fmt.Sprintf("10.244.1.%d", i))
	}
	a.lb(lbSpec{vip: "10.96.0.80", ext: 53, int: 53, backends: backends, dist: hnslb.DistributionSourceIPProtocol, proto: hnslb.ProtocolUDP})
	a.lb(lbSpec{vip: "10.96.0.80", ext: 53, int: 53, backends: backends, dist: hnslb.DistributionSourceIPProtocol, proto: hnslb.ProtocolTCP})
	c := mustCluster(t, a.asNode(ipA))
	backendOf := func(proto uint32, port uint16) netip.AddrPort {
		v, err := c.Trace(Packet{Src: netip.AddrPortFrom(netip.MustParseAddr(ipA), port), Dst: ap("10.96.0.80:53"), Protocol: proto}, Options{})
		if err != nil || v.Outcome != DeliveredToPod {
			t.Fatalf("trace: %v %s", err, v)
		}
		return v.Backend
	}
	udp := backendOf(hnslb.ProtocolUDP, 1000)
	for port := uint16(1001); port < 1032; port++ {
		if got := backendOf(hnslb.ProtocolUDP, port); got != udp {
			t.Fatalf("SourceIPProtocol: port %d reached %s, port 1000 reached %s", port, got, udp)
		}
	}
	tcp := backendOf(hnslb.ProtocolTCP, 1000)
	if tcp.Addr() == udp.Addr() {
		// The protocol is part of the key; with 10 backends a collision is
		// possible but would make this test vacuous, so the fixture avoids it.
		t.Errorf("TCP and UDP of one client hashed to the same backend %s; the protocol should change the key", tcp)
	}
}

// edgeCluster is node a (l2bridge) with load balancers that exercise the
// combinations the model refuses, and node b hosting podB1.
func edgeCluster(t *testing.T, extra func(a *hns)) *Cluster {
	a := newHNS(nodeA, hnslb.NetworkTypeL2Bridge, "10.244.1.0/24", 0)
	b := newHNS(nodeB, hnslb.NetworkTypeL2Bridge, "10.244.2.0/24", 0)
	a.pod(podA1)
	a.remote(podB1, "")
	a.remote(ipB, "") // a host-network backend on node b
	b.pod(podB1)
	extra(a)
	return mustCluster(t, a.asNode(ipA), b.asNode(ipB))
}

func TestRefusedCombinations(t *testing.T) {
	ext := hnslb.PortMappingFlagsVipExternalIP
	c := edgeCluster(t, func(a *hns) {
		a.lb(lbSpec{ext: 30090, int: 8080, backends: []string{podB1}, flags: hnslb.LoadBalancerFlagsDSR, portFlags: ext})
		a.lb(lbSpec{vip: "192.0.2.30", ext: 80, int: 8080, backends: []string{podB1}, flags: hnslb.LoadBalancerFlagsDSR,
			portFlags: ext | hnslb.PortMappingFlagsPreserveDIP})
		a.snap.LoadBalancers = append(a.snap.LoadBalancers, hnslb.LoadBalancer{ID: "dangling", FrontendVIPs: []string{"10.96.0.90"},
			HostComputeEndpoints: []string{"no-such-endpoint"}, PortMappings: []hnslb.PortMapping{{Protocol: hnslb.ProtocolTCP, ExternalPort: 80}}})
		a.lb(lbSpec{vip: "10.96.0.91", ext: 443, int: 6443, backends: []string{ipB}})
	})
	runFlows(t, c, "", "", []flow{
		{name: "DSR for external traffic to a remote backend", pkt: tcp(client+":5555", ipA+":30090"),
			want: want{outcome: Dropped, dsr: true, reason: "DSR load balancer a-lb1 chose remote backend 10.244.2.10"}},
		{name: "PreserveDIP with a remote backend", pkt: tcp(client+":5555", "192.0.2.30:80"), opt: Options{Ingress: nodeA},
			want: want{outcome: Dropped, dsr: true, reason: "PreserveDIP disables node-to-node forwarding"}},
		{name: "backend ID that is no endpoint", pkt: tcp(podA1+":40000", "10.96.0.90:80"),
			want: want{outcome: Dropped, lb: "dangling", reason: "no-such-endpoint, which does not exist on node a"}},
		{name: "unset internal port means the external port; host-network backend on another node", pkt: tcp(podA1+":40000", "10.96.0.91:443"),
			want: want{outcome: DeliveredToHost, node: nodeB, backend: ipB + ":6443", src: ipA + ":40000",
				actions: []Action{ActionFromPod, ActionDNAT, ActionSNAT, ActionUnderlay, ActionDeliver}}},
		{name: "pod to the dangling LB's VIP on another port", pkt: tcp(podA1+":40000", "10.96.0.90:81"),
			want: want{outcome: Dropped, reason: "listens on port 80, not 81"}},
	})
	v, err := c.Trace(tcp(podA1+":40000", "10.96.0.90:80"), Options{})
	if err != nil || v.Backend.IsValid() {
		t.Errorf("dangling backend: err %v, backend %v", err, v.Backend)
	}
}

func TestInternalPortDefaultsToExternal(t *testing.T) {
	a := newHNS(nodeA, hnslb.NetworkTypeL2Bridge, "10.244.1.0/24", 0)
	a.pod(podA1)
	a.pod(podA2)
	a.lb(lbSpec{vip: "10.96.0.10", ext: 80, backends: []string{podA2}})
	v, err := mustCluster(t, a.asNode(ipA)).Trace(tcp(podA1+":40000", "10.96.0.10:80"), Options{})
	if err != nil || v.SeenDst != ap(podA2+":80") {
		t.Errorf("got err %v, verdict %s; want destination %s:80", err, v, podA2)
	}
}

func TestOverlayVNI(t *testing.T) {
	cluster := func(vsidA, vsidB uint32, routeVNI uint16) *Cluster {
		a := newHNS(nodeA, hnslb.NetworkTypeOverlay, "10.244.1.0/24", vsidA, remoteSubnet("10.244.2.0/24", ipB, routeVNI))
		b := newHNS(nodeB, hnslb.NetworkTypeOverlay, "10.244.2.0/24", vsidB)
		a.pod(podA1)
		b.pod(podB1)
		return mustCluster(t, a.asNode(ipA), b.asNode(ipB))
	}
	for _, tc := range []struct {
		name               string
		vsidA, vsidB       uint32
		routeVNI           uint16
		outcome            Outcome
		detail, reasonPart string
	}{
		{name: "default 4096 on both", outcome: DeliveredToPod, detail: "vni=4096 port=4789 pa=10.0.0.2 via RemoteSubnetRoute 10.244.2.0/24"},
		{name: "network VSID", vsidA: 5000, vsidB: 5000, outcome: DeliveredToPod, detail: "vni=5000"},
		{name: "route isolation ID wins", vsidA: 5000, vsidB: 6000, routeVNI: 6000, outcome: DeliveredToPod, detail: "vni=6000"},
		{name: "mismatch", vsidB: 4097, outcome: Dropped, reasonPart: "VNI 4096 does not match node b's VNI 4097"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cluster(tc.vsidA, tc.vsidB, tc.routeVNI)
			v, err := c.Trace(tcp(podA1+":40000", podB1+":80"), Options{})
			if err != nil {
				t.Fatal(err)
			}
			checkVerdict(t, v, want{outcome: tc.outcome, node: map[bool]string{true: nodeB}[tc.outcome == DeliveredToPod],
				detail: tc.detail, reason: tc.reasonPart, keepsIP: tc.outcome == DeliveredToPod}, strings.NewReplacer())
		})
	}
}

// TestOverlayLongestRemoteSubnetRouteWins: overlapping RemoteSubnetRoutes
// (a cluster-wide /16 beside each node's /24) route a pod address by the
// most specific one, whatever their order in the network's policies, as
// the host's routing table does.
func TestOverlayLongestRemoteSubnetRouteWins(t *testing.T) {
	wide, narrow := remoteSubnet("10.244.0.0/16", "10.0.0.9", 0), remoteSubnet("10.244.2.0/24", ipB, 0)
	for name, routes := range map[string][]hnslb.NetworkPolicy{
		"wide first":   {wide, narrow},
		"narrow first": {narrow, wide},
	} {
		t.Run(name, func(t *testing.T) {
			a := newHNS(nodeA, hnslb.NetworkTypeOverlay, "10.244.1.0/24", 0, routes...)
			b := newHNS(nodeB, hnslb.NetworkTypeOverlay, "10.244.2.0/24", 0)
			a.pod(podA1)
			b.pod(podB1)
			v, err := mustCluster(t, a.asNode(ipA), b.asNode(ipB)).Trace(tcp(podA1+":40000", podB1+":80"), Options{})
			if err != nil {
				t.Fatal(err)
			}
			checkVerdict(t, v, want{outcome: DeliveredToPod, node: nodeB, detail: "pa=10.0.0.2 via RemoteSubnetRoute 10.244.2.0/24", keepsIP: true}, strings.NewReplacer())
		})
	}
}

// TestOverlayVXLANPort: both ends must use one VXLAN UDP port (the
// network's VxlanPort policy, else 4789); the trace names it.
func TestOverlayVXLANPort(t *testing.T) {
	portPolicy := func(port uint16) []hnslb.NetworkPolicy {
		if port == 0 {
			return nil
		}
		return []hnslb.NetworkPolicy{hnslb.NewNetworkPolicy(hnslb.NetworkPolicyVxlanPort, hnslb.VxlanPortPolicySetting{Port: port})}
	}
	for _, tc := range []struct {
		name               string
		portA, portB       uint16
		outcome            Outcome
		detail, reasonPart string
	}{
		{name: "same non-default port", portA: 8472, portB: 8472, outcome: DeliveredToPod, detail: "vni=4096 port=8472 pa=10.0.0.2"},
		{name: "one end on the default", portA: 8472, outcome: Dropped, reasonPart: "VXLAN port 8472 does not match node b's port 4789"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newHNS(nodeA, hnslb.NetworkTypeOverlay, "10.244.1.0/24", 0, append(portPolicy(tc.portA), remoteSubnet("10.244.2.0/24", ipB, 0))...)
			b := newHNS(nodeB, hnslb.NetworkTypeOverlay, "10.244.2.0/24", 0, portPolicy(tc.portB)...)
			a.pod(podA1)
			b.pod(podB1)
			v, err := mustCluster(t, a.asNode(ipA), b.asNode(ipB)).Trace(tcp(podA1+":40000", podB1+":80"), Options{})
			if err != nil {
				t.Fatal(err)
			}
			checkVerdict(t, v, want{outcome: tc.outcome, node: map[bool]string{true: nodeB}[tc.outcome == DeliveredToPod],
				detail: tc.detail, reason: tc.reasonPart, keepsIP: tc.outcome == DeliveredToPod}, strings.NewReplacer())
		})
	}
}

func TestOverlayWithoutSourceVIP(t *testing.T) {
	a := newHNS(nodeA, hnslb.NetworkTypeOverlay, "10.244.1.0/24", 0, remoteSubnet("10.244.2.0/24", ipB, 0))
	b := newHNS(nodeB, hnslb.NetworkTypeOverlay, "10.244.2.0/24", 0)
	a.remote(podB1, ipB)
	b.pod(podB1)
	a.lb(lbSpec{ext: 30080, int: 8080, backends: []string{podB1}, portFlags: hnslb.PortMappingFlagsVipExternalIP})
	v, err := mustCluster(t, a.asNode(ipA), b.asNode(ipB)).Trace(tcp(client+":5555", ipA+":30080"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkVerdict(t, v, want{outcome: Dropped, reason: "source 10.0.0.1 is a node address", detail: "node address",
		actions: []Action{ActionIngress, ActionDNAT, ActionSNAT, ActionDrop}}, strings.NewReplacer())
}

func TestDualStack(t *testing.T) {
	const podA1v6, podA2v6, vip6 = "fd00:1::10", "fd00:1::11", "fd00:96::10"
	a := newHNS(nodeA, hnslb.NetworkTypeL2Bridge, "10.244.1.0/24", 0)
	a.pod(podA1, podA1v6)
	a.pod(podA2, podA2v6)
	a.lb(lbSpec{vip: vip6, ext: 80, int: 8080, backends: []string{podA2}, flags: hnslb.LoadBalancerFlagsIPv6, sourceVIP: ipA})
	a.lb(lbSpec{vip: "10.96.0.10", ext: 80, int: 8080, backends: []string{podA2}, sourceVIP: ipA})
	c := mustCluster(t, a.asNode(ipA, "fd00::1"))
	runFlows(t, c, "", "", []flow{
		{name: "IPv6 ClusterIP to the backend's IPv6 address, SNAT to the node's IPv6 address", pkt: tcp("["+podA1v6+"]:40000", "["+vip6+"]:80"),
			want: want{outcome: DeliveredToPod, backend: "[" + podA2v6 + "]:8080", src: "[fd00::1]:40000", dst: "[" + podA2v6 + "]:8080"}},
		{name: "IPv4 ClusterIP of the same pods", pkt: tcp(podA1+":40000", "10.96.0.10:80"),
			want: want{outcome: DeliveredToPod, backend: podA2 + ":8080", src: ipA + ":40000"}},
		{name: "IPv4-mapped IPv6 addresses are IPv4", pkt: tcp("[::ffff:"+podA1+"]:40000", "[::ffff:10.96.0.10]:80"),
			want: want{outcome: DeliveredToPod, backend: podA2 + ":8080"}},
		{name: "an IPv4 OutBoundNAT policy leaves IPv6 traffic alone", pkt: tcp("["+podA1v6+"]:40000", "[2001:db8::1]:443"),
			want: want{outcome: LeftCluster, src: "[" + podA1v6 + "]:40000", keepsIP: true, actions: []Action{ActionFromPod, ActionEgress}}},
		{name: "and translates IPv4 traffic", pkt: tcp(podA1+":40000", "198.51.100.1:443"),
			want: want{outcome: LeftCluster, src: ipA + ":40000", actions: []Action{ActionFromPod, ActionOutboundNAT, ActionEgress}}},
	})

	// A policy with the IPv6 flag translates IPv6 traffic, and only that.
	const podA3v6 = "fd00:1::12"
	a.endpoint(hnslb.Endpoint{Policies: []hnslb.EndpointPolicy{
		hnslb.NewEndpointPolicy(hnslb.EndpointPolicyOutBoundNAT, hnslb.OutboundNatPolicySetting{Flags: hnslb.NatFlagsIPv6}),
	}}, "10.244.1.12", podA3v6)
	// An IPv4 policy naming a VirtualIP of the other family cannot put it
	// on an IPv4 packet: it translates to the node's IPv4 address.
	a.endpoint(hnslb.Endpoint{Policies: []hnslb.EndpointPolicy{
		hnslb.NewEndpointPolicy(hnslb.EndpointPolicyOutBoundNAT, hnslb.OutboundNatPolicySetting{VirtualIP: "fd00::99"}),
	}}, "10.244.1.13")
	runFlows(t, mustCluster(t, a.asNode(ipA, "fd00::1")), "", "", []flow{
		{name: "a VirtualIP of the other family is not put on the packet", pkt: tcp("10.244.1.13:40000", "198.51.100.1:443"),
			want: want{outcome: LeftCluster, src: ipA + ":40000", actions: []Action{ActionFromPod, ActionOutboundNAT, ActionEgress}}},
		{name: "an IPv6 OutBoundNAT policy translates IPv6", pkt: tcp("["+podA3v6+"]:40000", "[2001:db8::1]:443"),
			want: want{outcome: LeftCluster, src: "[fd00::1]:40000", actions: []Action{ActionFromPod, ActionOutboundNAT, ActionEgress}}},
		{name: "and leaves IPv4 alone", pkt: tcp("10.244.1.12:40000", "198.51.100.1:443"),
			want: want{outcome: LeftCluster, src: "10.244.1.12:40000", keepsIP: true, actions: []Action{ActionFromPod, ActionEgress}}},
	})
}

func TestDSRHairpinNeedsLoopbackDSR(t *testing.T) {
	const podA3 = "10.244.1.12"
	a := newHNS(nodeA, hnslb.NetworkTypeL2Bridge, "10.244.1.0/24", 0)
	a.pod(podA1)
	// podA3 as win-bridge makes it with loopbackDSR: an extra OutBoundNAT
	// policy with the pod's own address as its only destination.
	a.endpoint(hnslb.Endpoint{Policies: []hnslb.EndpointPolicy{
		hnslb.NewEndpointPolicy(hnslb.EndpointPolicyOutBoundNAT, hnslb.OutboundNatPolicySetting{Exceptions: natExceptions}),
		hnslb.NewEndpointPolicy(hnslb.EndpointPolicyOutBoundNAT, hnslb.OutboundNatPolicySetting{Destinations: []string{podA3}}),
	}}, podA3)
	dsr := hnslb.LoadBalancerFlagsDSR
	a.lb(lbSpec{vip: "10.96.0.10", ext: 80, int: 8080, backends: []string{podA1}, flags: dsr})
	a.lb(lbSpec{vip: "10.96.0.11", ext: 80, int: 8080, backends: []string{podA3}, flags: dsr})
	a.lb(lbSpec{vip: "10.96.0.12", ext: 80, int: 8080, backends: []string{podA1}, sourceVIP: ipA})
	runFlows(t, mustCluster(t, a.asNode(ipA)), "", "", []flow{
		{name: "without loopback DSR the pod cannot reach itself", pkt: tcp(podA1+":40000", "10.96.0.10:80"),
			want: want{outcome: Dropped, dsr: true, reason: "has no loopback DSR policy"}},
		{name: "with loopback DSR the source is translated", pkt: tcp(podA3+":40000", "10.96.0.11:80"),
			want: want{outcome: DeliveredToPod, dsr: true, src: ipA + ":40000", dst: podA3 + ":8080",
				actions: []Action{ActionFromPod, ActionDNAT, ActionOutboundNAT, ActionDeliver}}},
		{name: "another pod reaches it through DSR", pkt: tcp(podA3+":40000", "10.96.0.10:80"),
			want: want{outcome: DeliveredToPod, dsr: true, keepsIP: true, src: podA3 + ":40000"}},
		{name: "non-DSR hairpin works through SNAT", pkt: tcp(podA1+":40000", "10.96.0.12:80"),
			want: want{outcome: DeliveredToPod, src: ipA + ":40000", dst: podA1 + ":8080"}},
		// The loopback policy translates only what goes to its destinations:
		// to another node's pod, an exception of the other policy, the
		// pod's own address goes out.
		{name: "the loopback DSR policy leaves traffic to other pods untranslated", pkt: tcp(podA3+":40000", podB1+":8080"),
			opt:  Options{OtherPods: map[netip.Addr]string{netip.MustParseAddr(podB1): nodeB}},
			want: want{outcome: HandedOff, node: nodeB, src: podA3 + ":40000", keepsIP: true}},
	})
}
