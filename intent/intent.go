package intent

import (
	"fmt"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// IPFamily of a load balancer or endpoint.
type IPFamily uint8

const (
	IPv4 IPFamily = 4
	IPv6 IPFamily = 6
)

// LBKey is what HNS treats as a load balancer's identity: two load balancers
// with the same frontend VIP, protocol and external port conflict. VIP is ""
// for NodePort load balancers, which apply to the node's own addresses.
type LBKey struct {
	Family   IPFamily
	VIP      string
	Protocol uint32
	Port     uint16
}

func (k LBKey) String() string {
	proto := "tcp"
	if k.Protocol == hnslb.ProtocolUDP {
		proto = "udp"
	}
	vip := k.VIP
	if vip == "" {
		vip = fmt.Sprintf("nodeport/v%d", k.Family)
	}
	return fmt.Sprintf("%s:%d/%s", vip, k.Port, proto)
}

// Backend is one destination of a load balancer, by IP. Local backends are
// pods on this node (their HNS endpoints are made by the CNI); remote ones
// need a remote endpoint, which the reconciler creates and removes.
type Backend struct {
	IP    string
	Local bool
	// ProviderAddress is the node IP hosting a remote backend on overlay
	// networks ("" on l2bridge).
	ProviderAddress string
	// MAC given to the remote endpoint HNS creates for a remote backend.
	MAC string
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
	// Owner names what asked for it ("namespace/name:port"), for events and debugging.
	Owner string
}

// RemoteEndpoint is one remote HNS endpoint hnsproxy wants on this node. The
// set is derived from the desired load balancers' remote backends plus
// extras such as the overlay source-VIP endpoint; nothing is reference-counted by hand.
type RemoteEndpoint struct {
	IP              string
	MAC             string
	ProviderAddress string
	// Local asks for an endpoint without the RemoteEndpoint flag and without
	// a ProviderAddress policy: the overlay source-VIP endpoint, which
	// winkernel creates that way. Pods' local endpoints are the CNI's, never these.
	Local bool
}
