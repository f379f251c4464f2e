package vfp

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// Hand-built HNS state, laid out like a two-node cluster that the CNI and a
// proxy programmed: node a (10.0.0.1, pods 10.244.1.0/24) and node b
// (10.0.0.2, pods 10.244.2.0/24); cluster CIDR 10.244.0.0/16, service CIDR
// 10.96.0.0/12.

const (
	nodeA, nodeB = "a", "b"
	networkName  = "cbr0"
	podA1        = "10.244.1.10"
	podA2        = "10.244.1.11"
	podB1        = "10.244.2.10"
	ipA, ipB     = "10.0.0.1", "10.0.0.2"
	svipA, svipB = "10.244.1.2", "10.244.2.2" // overlay source VIPs
	client       = "203.0.113.7"              // an external client
)

var natExceptions = []string{"10.244.0.0/16", "10.96.0.0/12"}

// hns builds one node's snapshot.
type hns struct {
	node string
	snap hnslb.Snapshot
	ids  map[string]string // endpoint IP → ID
}

func newHNS(node string, typ hnslb.NetworkType, subnet string, vsid uint32, policies ...hnslb.NetworkPolicy) *hns {
	s := hnslb.Subnet{IpAddressPrefix: subnet}
	if vsid != 0 {
		s.Policies = []json.RawMessage{hnslb.NewVSIDSubnetPolicy(vsid)}
	}
	return &hns{node: node, ids: map[string]string{}, snap: hnslb.Snapshot{Networks: []hnslb.Network{{
		ID: node + "-net", Name: networkName, Type: typ, Policies: policies,
		Ipams: []hnslb.Ipam{{Subnets: []hnslb.Subnet{s}}},
	}}}}
}

func remoteSubnet(prefix, pa string, vni uint16) hnslb.NetworkPolicy {
	return hnslb.NewNetworkPolicy(hnslb.NetworkPolicyRemoteSubnetRoute, hnslb.RemoteSubnetRoutePolicySetting{
		DestinationPrefix: prefix, ProviderAddress: pa, IsolationId: vni,
	})
}

func (h *hns) endpoint(e hnslb.Endpoint, ips ...string) string {
	e.ID = fmt.Sprintf("%s-ep%d", h.node, len(h.snap.Endpoints)+1)
	e.HostComputeNetwork = h.node + "-net"
	for _, ip := range ips {
		e.IpConfigurations = append(e.IpConfigurations, hnslb.IPConfig{IpAddress: ip})
		h.ids[ip] = e.ID
	}
	h.snap.Endpoints = append(h.snap.Endpoints, e)
	return e.ID
}

// pod adds a local endpoint as the CNI makes it: OutBoundNAT with the
// cluster and service CIDRs as exceptions.
func (h *hns) pod(ips ...string) string {
	return h.endpoint(hnslb.Endpoint{Policies: []hnslb.EndpointPolicy{
		hnslb.NewEndpointPolicy(hnslb.EndpointPolicyOutBoundNAT, hnslb.OutboundNatPolicySetting{Exceptions: natExceptions}),
	}}, ips...)
}

// remote adds a remote endpoint, with a ProviderAddress policy when pa != "".
func (h *hns) remote(ip, pa string) string {
	e := hnslb.Endpoint{Flags: hnslb.EndpointFlagsRemoteEndpoint}
	if pa != "" {
		e.Policies = []hnslb.EndpointPolicy{hnslb.NewEndpointPolicy(hnslb.EndpointPolicyProviderAddress,
			hnslb.ProviderAddressEndpointPolicySetting{ProviderAddress: pa})}
	}
	return h.endpoint(e, ip)
}

// lbSpec is a load balancer by backend IPs (resolved to this node's endpoint IDs).
type lbSpec struct {
	vip       string // "" for NodePort
	proto     uint32
	ext, int  uint16
	backends  []string
	sourceVIP string
	flags     hnslb.LoadBalancerFlags
	portFlags hnslb.PortMappingFlags
	dist      hnslb.Distribution
}

func (h *hns) lb(s lbSpec) string {
	lb := hnslb.LoadBalancer{
		ID:        fmt.Sprintf("%s-lb%d", h.node, len(h.snap.LoadBalancers)+1),
		SourceVIP: s.sourceVIP, Flags: s.flags, SchemaVersion: hnslb.V2,
		PortMappings: []hnslb.PortMapping{{Protocol: s.proto, ExternalPort: s.ext, InternalPort: s.int,
			DistributionType: s.dist, Flags: s.portFlags}},
	}
	if lb.PortMappings[0].Protocol == 0 {
		lb.PortMappings[0].Protocol = hnslb.ProtocolTCP
	}
	if s.vip != "" {
		lb.FrontendVIPs = []string{s.vip}
	}
	for _, ip := range s.backends {
		id, ok := h.ids[ip]
		if !ok {
			panic(fmt.Sprintf("test setup: node %s has no endpoint %s", h.node, ip))
		}
		lb.HostComputeEndpoints = append(lb.HostComputeEndpoints, id)
	}
	h.snap.LoadBalancers = append(h.snap.LoadBalancers, lb)
	return lb.ID
}

// both adds the same service load balancer to both nodes (source VIPs per node).
func both(a, b *hns, svA, svB string, s lbSpec) {
	s.sourceVIP = svA
	a.lb(s)
	s.sourceVIP = svB
	b.lb(s)
}

func (h *hns) asNode(ips ...string) Node {
	n := Node{Name: h.node, HNS: &h.snap, NetworkName: networkName}
	for _, ip := range ips {
		n.IPs = append(n.IPs, netip.MustParseAddr(ip))
	}
	return n
}

func mustCluster(t *testing.T, nodes ...Node) *Cluster {
	t.Helper()
	c, err := NewCluster(nodes...)
	if err != nil {
		t.Fatalf("NewCluster: %v", err)
	}
	return c
}

func ap(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }

func tcp(src, dst string) Packet {
	return Packet{Src: ap(src), Dst: ap(dst), Protocol: hnslb.ProtocolTCP}
}

// Services both fixtures program (ClusterIPs in 10.96.0.0/12):
//
//	10.96.0.10:80 → :8080 backend podA2            (local on a)
//	10.96.0.20:80 → :8080 backend podB1            (remote from a)
//	10.96.0.30:80 → :8080 podA1,podA2,podB1, SourceIP affinity
//	10.96.0.31:80 → :8080 podA1,podA2,podB1, 5-tuple hash
//	10.96.0.40:80 no backends
//	10.96.0.50:80 wrongly flagged IPv6
//	10.96.0.60:80 → :8080 backend podB1, DSR
//	NodePort 30080 → :8080 backend podB1
//	NodePort 30081 → :8080 on a only, ETP=Local + DSR, backend podA2
//	NodePort 30082 → :8080 podA1,podA2 on a, SourceIP affinity
//	192.0.2.10:443 → :8443 (LoadBalancer ingress IP) backend podB1
//	192.0.2.20:80 → :8080 preserve-destination on a, backend podA2
func programServices(a, b *hns, svA, svB string) {
	ext := hnslb.PortMappingFlagsVipExternalIP
	nodePort := hnslb.PortMappingFlagsLocalRoutedVIP | ext
	both(a, b, svA, svB, lbSpec{vip: "10.96.0.10", ext: 80, int: 8080, backends: []string{podA2}})
	both(a, b, svA, svB, lbSpec{vip: "10.96.0.20", ext: 80, int: 8080, backends: []string{podB1}})
	all := []string{podA1, podA2, podB1}
	both(a, b, svA, svB, lbSpec{vip: "10.96.0.30", ext: 80, int: 8080, backends: all, dist: hnslb.DistributionSourceIP})
	both(a, b, svA, svB, lbSpec{vip: "10.96.0.31", ext: 80, int: 8080, backends: all})
	both(a, b, svA, svB, lbSpec{vip: "10.96.0.40", ext: 80, int: 8080})
	both(a, b, svA, svB, lbSpec{vip: "10.96.0.50", ext: 80, int: 8080, backends: []string{podA2}, flags: hnslb.LoadBalancerFlagsIPv6})
	both(a, b, svA, svB, lbSpec{vip: "10.96.0.60", ext: 80, int: 8080, backends: []string{podB1}, flags: hnslb.LoadBalancerFlagsDSR})
	both(a, b, svA, svB, lbSpec{ext: 30080, int: 8080, backends: []string{podB1}, portFlags: nodePort})
	a.lb(lbSpec{ext: 30081, int: 8080, backends: []string{podA2}, flags: hnslb.LoadBalancerFlagsDSR, portFlags: nodePort})
	a.lb(lbSpec{ext: 30082, int: 8080, backends: []string{podA1, podA2}, sourceVIP: svA, portFlags: nodePort, dist: hnslb.DistributionSourceIP})
	both(a, b, svA, svB, lbSpec{vip: "192.0.2.10", ext: 443, int: 8443, backends: []string{podB1}, portFlags: ext})
	a.lb(lbSpec{vip: "192.0.2.20", ext: 80, int: 8080, backends: []string{podA2}, flags: hnslb.LoadBalancerFlagsDSR,
		portFlags: ext | hnslb.PortMappingFlagsUseMux | hnslb.PortMappingFlagsPreserveDIP})
}

// l2bridgeCluster: remote endpoints carry no provider address; the node
// address is the source VIP.
func l2bridgeCluster(t *testing.T) *Cluster {
	a, b := l2bridgeHNS()
	return mustCluster(t, a.asNode(ipA), b.asNode(ipB))
}

func l2bridgeHNS() (a, b *hns) {
	a = newHNS(nodeA, hnslb.NetworkTypeL2Bridge, "10.244.1.0/24", 0)
	b = newHNS(nodeB, hnslb.NetworkTypeL2Bridge, "10.244.2.0/24", 0)
	a.pod(podA1)
	a.pod(podA2)
	a.remote(podB1, "")
	b.pod(podB1)
	b.remote(podA1, "")
	b.remote(podA2, "")
	programServices(a, b, ipA, ipB)
	return a, b
}

// overlayCluster: Flannel-like VXLAN with RemoteSubnetRoutes, remote
// endpoints with provider addresses and a source VIP endpoint per node.
func overlayCluster(t *testing.T) *Cluster {
	a, b := overlayHNS()
	return mustCluster(t, a.asNode(ipA), b.asNode(ipB))
}

func overlayHNS() (a, b *hns) {
	a = newHNS(nodeA, hnslb.NetworkTypeOverlay, "10.244.1.0/24", 4096, remoteSubnet("10.244.2.0/24", ipB, 4096))
	b = newHNS(nodeB, hnslb.NetworkTypeOverlay, "10.244.2.0/24", 4096, remoteSubnet("10.244.1.0/24", ipA, 4096))
	a.endpoint(hnslb.Endpoint{Name: "sourcevip"}, svipA)
	b.endpoint(hnslb.Endpoint{Name: "sourcevip"}, svipB)
	a.pod(podA1)
	a.pod(podA2)
	a.remote(podB1, ipB)
	b.pod(podB1)
	b.remote(podA1, ipA)
	b.remote(podA2, ipA)
	programServices(a, b, svipA, svipB)
	return a, b
}
