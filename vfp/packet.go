package vfp

import (
	"fmt"
	"net/netip"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// ICMP protocol numbers: no load balancer matches them, and VFP does not
// translate them, so they only reach pods and nodes directly.
const (
	ProtocolICMP   uint32 = 1
	ProtocolICMPv6 uint32 = 58
)

// Packet is the first packet of a flow. Ports are ignored for ICMP.
type Packet struct {
	Src      netip.AddrPort
	Dst      netip.AddrPort
	Protocol uint32 // hnslb.ProtocolTCP, hnslb.ProtocolUDP, ProtocolICMP or ProtocolICMPv6
}

func (p Packet) String() string {
	return fmt.Sprintf("%s->%s/%s", p.Src, p.Dst, protoName(p.Protocol))
}

// Options tune a trace.
type Options struct {
	// Ingress is the node where a packet from outside the cluster enters (the
	// node an external load balancer or client sends it to). Default: the node
	// that owns Dst as a node address or a pod address. Not used for packets
	// sent by a pod or a node, but it must name a node of the cluster if set.
	Ingress string

	// OtherNodes and OtherPods place addresses on nodes whose HNS state is
	// not in the cluster (a trace over one real node's HNS): node addresses
	// and pod addresses, each mapped to its node's name. A packet the
	// cluster forwards to one of them ends the trace as HandedOff, where it
	// would otherwise leave the cluster or be dropped for want of that
	// node's state. Addresses the cluster's own nodes hold take precedence.
	OtherNodes map[netip.Addr]string
	OtherPods  map[netip.Addr]string
}

// normalize unmaps IPv4-in-IPv6 addresses and checks the packet makes sense.
func (p Packet) normalize() (Packet, error) {
	if !p.Src.Addr().IsValid() || !p.Dst.Addr().IsValid() {
		return p, fmt.Errorf("vfp: packet %s: source and destination must be valid addresses", p)
	}
	p.Src = netip.AddrPortFrom(p.Src.Addr().Unmap(), p.Src.Port())
	p.Dst = netip.AddrPortFrom(p.Dst.Addr().Unmap(), p.Dst.Port())
	if p.Src.Addr().Is4() != p.Dst.Addr().Is4() {
		return p, fmt.Errorf("vfp: packet %s: source and destination are of different IP families", p)
	}
	switch p.Protocol {
	case hnslb.ProtocolTCP, hnslb.ProtocolUDP:
		if p.Dst.Port() == 0 {
			return p, fmt.Errorf("vfp: packet %s: destination port 0", p)
		}
	case ProtocolICMP, ProtocolICMPv6:
		p.Src = netip.AddrPortFrom(p.Src.Addr(), 0)
		p.Dst = netip.AddrPortFrom(p.Dst.Addr(), 0)
	default:
		return p, fmt.Errorf("vfp: packet %s: protocol %d is not modelled (TCP, UDP, ICMP)", p, p.Protocol)
	}
	return p, nil
}

func (p Packet) isICMP() bool {
	return p.Protocol == ProtocolICMP || p.Protocol == ProtocolICMPv6
}
