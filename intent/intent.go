package intent

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// IPFamily of a load balancer or endpoint.
type IPFamily uint8

const (
	IPv4 IPFamily = 4
	IPv6 IPFamily = 6
)

// FamilyOf is the family of ip; an IPv4-mapped IPv6 address is IPv4, as HNS
// sees it.
func FamilyOf(ip netip.Addr) IPFamily {
	if ip.Is4() || ip.Is4In6() {
		return IPv4
	}
	return IPv6
}

// String names the family as messages do ("IPv4", "IPv6"); formatting with
// %d still gives the number.
func (f IPFamily) String() string { return fmt.Sprintf("IPv%d", uint8(f)) }

// LBKey is what HNS treats as a load balancer's identity: two load balancers
// with the same frontend VIP, protocol and external port conflict. VIP is ""
// for NodePort load balancers, which apply to the node's own addresses.
type LBKey struct {
	Family   IPFamily
	VIP      string
	Protocol uint32
	Port     uint16
}

// String is "VIP:port/tcp", "VIP:port/udp" or, for another protocol (a
// foreign load balancer's), "VIP:port/protocol-N": a foreign one on ICMP or
// any protocol must not read as TCP in diag output and logs.
func (k LBKey) String() string {
	var proto string
	switch k.Protocol {
	case hnslb.ProtocolTCP:
		proto = "tcp"
	case hnslb.ProtocolUDP:
		proto = "udp"
	default:
		proto = "protocol-" + strconv.FormatUint(uint64(k.Protocol), 10)
	}
	if k.VIP == "" {
		return fmt.Sprintf("nodeport/v%d:%d/%s", k.Family, k.Port, proto)
	}
	// JoinHostPort brackets an IPv6 VIP: "fd00::20:80" would hide the port.
	return net.JoinHostPort(k.VIP, strconv.Itoa(int(k.Port))) + "/" + proto
}

// Backend is one destination of a load balancer, by IP. Local backends are
// pods on this node (their HNS endpoints are made by the CNI); remote ones
// need a remote endpoint, which the reconciler creates and removes.
type Backend struct {
	IP    string
	Local bool
	// NodeUnknown marks a remote backend whose EndpointSlice endpoint names
	// no node (hand-made Endpoints mirrored, third-party controllers). Like
	// kube-proxy it counts as remote for the traffic policies, but it may
	// be a pod of this node: winkernel uses whatever HNS endpoint holds the
	// address before it creates a remote one. The reconciler uses the
	// local endpoint at IP if it knows one, else the remote endpoint.
	NodeUnknown bool
	// ProviderAddress is the node IP hosting a remote backend on overlay
	// networks ("" on l2bridge).
	ProviderAddress string
}

// LB is one HNS load balancer hnsproxy wants on this node.
type LB struct {
	Key          LBKey
	SourceVIP    string
	InternalPort uint16
	Distribution hnslb.Distribution
	PortFlags    hnslb.PortMappingFlags
	Flags        hnslb.LoadBalancerFlags
	// Backends sorted by IP; at most the node's backend cap.
	Backends []Backend
	// Spares, in order, stand in for backends the reconciler cannot realize
	// (a local pod with no HNS endpoint): set only when the cap left
	// candidates out, at most one per local backend.
	Spares []Backend
	// Owner names what asked for it ("namespace/name:port"), for events and debugging.
	Owner string
	// Origin says who chose the frontend (see Origin).
	Origin Origin
}

// RemoteEndpoint is one remote HNS endpoint hnsproxy wants on this node. The
// set is the desired state's (package proxier/desired, State.RemoteEndpoints):
// load balancers' remote backends, overlay service-VIP endpoints and the
// overlay source-VIP endpoint. The reconciler takes it as given.
type RemoteEndpoint struct {
	IP              string
	MAC             string
	ProviderAddress string
	// Local asks for an endpoint without the RemoteEndpoint flag and without
	// a ProviderAddress policy: the overlay source-VIP endpoint, which
	// winkernel creates that way. Pods' local endpoints are the CNI's, never these.
	Local bool
	// UnlessLocal: every backend that wants it has NodeUnknown, so it is
	// wanted only while no local endpoint holds the address; while one
	// does, the reconciler makes none (and deletes its own once unused), as
	// a remote endpoint beside a pod's sends the pod's traffic to another
	// node on Windows Server 2019 and 2022 (kubernetes/kubernetes#138000).
	UnlessLocal bool
}

// EndpointOf is the remote endpoint a remote backend needs, with the MAC
// conjured from its IP (none for an IP that does not parse).
func EndpointOf(b Backend) RemoteEndpoint {
	ep := RemoteEndpoint{IP: b.IP, ProviderAddress: b.ProviderAddress, UnlessLocal: b.NodeUnknown}
	if ip, err := netip.ParseAddr(b.IP); err == nil {
		ep.MAC = ConjureMAC(ip)
	}
	return ep
}
