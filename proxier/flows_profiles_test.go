package proxier

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
	"github.com/hnsproxy/hnsproxy/vfp"
)

// Flows that depend on the HNS profile: dual-stack (HNS 11.10+, l2bridge
// only) and the 64-backend cap of Windows Server 2019.

// TestPacketFlowsDualStack runs with and without --enable-dsr: DSR keeps
// the client's address in each family alike (LoadBalancerFlagsIPv6 with
// LoadBalancerFlagsDSR on the IPv6 load balancers), on the ClusterIPs with
// --enable-dsr and on externalTrafficPolicy Local node ports always.
func TestPacketFlowsDualStack(t *testing.T) {
	nodes := []nodeSpec{
		{name: "win-1", ips: []string{ip1, "fd00::1"}, podCIDRs: []string{"10.244.1.0/24", "fd00:10:244:1::/64"},
			pods: []string{pod1a + ",fd00:10:244:1::10", pod1b + ",fd00:10:244:1::11"}},
		{name: "win-2", ips: []string{ip2, "fd00::2"}, podCIDRs: []string{"10.244.2.0/24", "fd00:10:244:2::/64"},
			pods: []string{pod2a + ",fd00:10:244:2::10"}},
	}
	dualStack := func(name, clusterIPv4, clusterIPv6 string, nodePort int32, etp v1.ServiceExternalTrafficPolicy) []any {
		return []any{
			service(name, clusterIPv4, func(s *v1.Service) {
				s.Spec.Type = v1.ServiceTypeNodePort
				s.Spec.ClusterIPs = []string{clusterIPv4, clusterIPv6}
				s.Spec.IPFamilies = []v1.IPFamily{v1.IPv4Protocol, v1.IPv6Protocol}
				s.Spec.IPFamilyPolicy = ptrTo(v1.IPFamilyPolicyRequireDualStack)
				s.Spec.Ports[0].NodePort = nodePort
				s.Spec.ExternalTrafficPolicy = etp
			}),
			sliceOf(name, name+"-v4", discoveryv1.AddressTypeIPv4, readyEP(pod1a, "win-1"), readyEP(pod2a, "win-2")),
			// A local and a remote IPv6 backend: the local one is the second
			// address of a dual-stack pod endpoint.
			sliceOf(name, name+"-v6", discoveryv1.AddressTypeIPv6, readyEP("fd00:10:244:1::10", "win-1"), readyEP("fd00:10:244:2::10", "win-2")),
		}
	}
	for _, dsr := range []bool{false, true} {
		v := flowVariant{mode: desired.L2Bridge, dsr: dsr}
		t.Run(v.String(), func(t *testing.T) {
			c := newSimCluster(t, clusterSpec{profile: "ws2022", mode: desired.L2Bridge, dsr: dsr, nodes: nodes})
			c.apply(dualStack("dual", "10.96.0.10", "fd00:10:96::10", 30090, v1.ServiceExternalTrafficPolicyCluster)...)
			c.apply(dualStack("dual-local", "10.96.0.11", "fd00:10:96::11", 30091, v1.ServiceExternalTrafficPolicyLocal)...)
			c.converge()
			vc := c.vfp()
			for _, f := range []flow{
				{name: "IPv4 pod to ClusterIP", from: pod1b, to: "10.96.0.10:80",
					outcome: vfp.DeliveredToPod, backends: []string{pod1a, pod2a}, src: srcClusterDSR, dst: dstBackend},
				{name: "IPv6 pod to ClusterIP", from: "fd00:10:244:1::11", to: "[fd00:10:96::10]:80",
					outcome: vfp.DeliveredToPod, backends: []string{"fd00:10:244:1::10", "fd00:10:244:2::10"}, src: srcClusterDSR, dst: dstBackend},
				{name: "IPv6 pod to pod, other node", from: "fd00:10:244:1::11", to: "[fd00:10:244:2::10]:8080",
					outcome: vfp.DeliveredToPod, backends: []string{"fd00:10:244:2::10"}},
				{name: "IPv6 external to NodePort", from: "2001:db8::7", to: "[fd00::1]:30090",
					outcome: vfp.DeliveredToPod, backends: []string{"fd00:10:244:1::10", "fd00:10:244:2::10"}, src: srcSNAT, dst: dstBackend},
				{name: "IPv6 node to pod, other node", from: "fd00::1", to: "[fd00:10:244:2::10]:8080",
					outcome: vfp.DeliveredToPod, backends: []string{"fd00:10:244:2::10"}},
				{name: "IPv4 external to NodePort", from: extClient, to: ip2 + ":30090",
					outcome: vfp.DeliveredToPod, backends: []string{pod1a, pod2a}, src: srcSNAT, dst: dstBackend},
				{name: "IPv6 NodePort externalTrafficPolicy Local keeps the client IP", from: "2001:db8::7", to: "[fd00::1]:30091",
					outcome: vfp.DeliveredToPod, backends: []string{"fd00:10:244:1::10"}, src: srcClient, dst: dstBackend},
				{name: "IPv6 NodePort externalTrafficPolicy Local, other node's local backend", from: "2001:db8::7", to: "[fd00::2]:30091",
					outcome: vfp.DeliveredToPod, backends: []string{"fd00:10:244:2::10"}, src: srcClient, dst: dstBackend},
				{name: "IPv4 NodePort externalTrafficPolicy Local keeps the client IP", from: extClient, to: ip1 + ":30091",
					outcome: vfp.DeliveredToPod, backends: []string{pod1a}, src: srcClient, dst: dstBackend},
			} {
				t.Run(f.name, func(t *testing.T) { c.checkFlow(t, vc, v, f) })
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }

// TestBackendCapSubsetsPerNode: a Service with more endpoints than the
// ws2019 cap (64) gets, on each node, a load balancer with its local
// endpoints and a node-specific subset of the rest; a client reaches
// exactly that subset, and the nodes' subsets differ.
func TestBackendCapSubsetsPerNode(t *testing.T) {
	const perNode = 34 // 102 endpoints in all
	var nodes []nodeSpec
	var eps []discoveryv1.Endpoint
	for n := 1; n <= 3; n++ {
		ns := nodeSpec{
			name: fmt.Sprintf("win-%d", n), ips: []string{fmt.Sprintf("10.0.0.%d", n)},
			podCIDRs: []string{fmt.Sprintf("10.244.%d.0/24", n)},
			pods:     []string{fmt.Sprintf("10.244.%d.200", n)}, // the client, no backend
		}
		for i := range perNode {
			ip := fmt.Sprintf("10.244.%d.%d", n, 10+i)
			ns.pods = append(ns.pods, ip)
			eps = append(eps, readyEP(ip, ns.name))
		}
		nodes = append(nodes, ns)
	}
	c := newSimCluster(t, clusterSpec{profile: "ws2019", mode: desired.L2Bridge, nodes: nodes})
	c.apply(service("big", "10.96.1.1"), sliceOf("big", "big-1", discoveryv1.AddressTypeIPv4, eps...))
	c.converge()
	vc := c.vfp()

	subsets := map[string][]string{}
	for _, ns := range nodes {
		n := c.node(ns.name)
		var subset []string
		for _, lb := range n.lbs() {
			if lb.Frontend == "10.96.1.1" {
				subset = lb.Backends
			}
		}
		if len(subset) != hnslb.MaxBackendsLegacy {
			t.Fatalf("%s: load balancer has %d backends, want the cap %d", ns.name, len(subset), hnslb.MaxBackendsLegacy)
		}
		for _, local := range ns.pods[1:] {
			if !slices.Contains(subset, local) {
				t.Errorf("%s: local endpoint %s left out of the capped subset", ns.name, local)
			}
		}
		subsets[ns.name] = subset

		reached := map[string]bool{}
		client := netip.MustParseAddr(ns.pods[0])
		for port := range 2048 {
			pkt := vfp.Packet{Src: netip.AddrPortFrom(client, uint16(20000+port)), Dst: netip.MustParseAddrPort("10.96.1.1:80"), Protocol: hnslb.ProtocolTCP}
			v, err := vc.Trace(pkt, vfp.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if v.Outcome != vfp.DeliveredToPod {
				t.Fatalf("%s: %s", pkt, v)
			}
			reached[v.Backend.Addr().String()] = true
		}
		if got := sortedKeys(reached); !slices.Equal(got, subset) {
			t.Errorf("%s: client reached %d backends, want exactly the node's %d: extra/missing in %v", ns.name, len(got), len(subset), symmetricDiff(got, subset))
		}
	}
	if slices.Equal(subsets["win-1"], subsets["win-2"]) || slices.Equal(subsets["win-2"], subsets["win-3"]) {
		t.Errorf("nodes chose the same subsets: %v", subsets)
	}
}

func symmetricDiff(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, "+"+x)
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			out = append(out, "-"+x)
		}
	}
	return out
}
