package vfp

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// ParsePacket reads a packet as people type it: src "IP[:PORT]", dst
// "IP:PORT" (or "[IPv6]:PORT", a bare IP for ICMP) and a protocol name
// (tcp, the default, udp, icmp or icmpv6). It checks syntax, and that an
// ICMP protocol is the destination family's; Trace checks the packet makes
// sense.
func ParsePacket(src, dst, protocol string) (Packet, error) {
	var p Packet
	switch strings.ToLower(protocol) {
	case "tcp", "":
		p.Protocol = hnslb.ProtocolTCP
	case "udp":
		p.Protocol = hnslb.ProtocolUDP
	case "icmp":
		p.Protocol = ProtocolICMP
	case "icmpv6":
		p.Protocol = ProtocolICMPv6
	default:
		return p, fmt.Errorf("protocol %q: want tcp, udp, icmp or icmpv6", protocol)
	}
	var err error
	if p.Src, err = parseAddrPort(src); err != nil {
		return p, fmt.Errorf("source: %w", err)
	}
	if p.Dst, err = parseAddrPort(dst); err != nil {
		return p, fmt.Errorf("destination: %w", err)
	}
	// Each family has its own ICMP: a typo here would otherwise trace as a
	// packet no load balancer or pod answers, not as the mistake it is.
	switch v4 := p.Dst.Addr().Unmap().Is4(); {
	case p.Protocol == ProtocolICMP && !v4:
		return p, fmt.Errorf("protocol %q with an IPv6 destination: IPv6's is icmpv6", protocol)
	case p.Protocol == ProtocolICMPv6 && v4:
		return p, fmt.Errorf("protocol %q with an IPv4 destination: IPv4's is icmp", protocol)
	}
	return p, nil
}

// parseAddrPort accepts "IP:PORT", "[IPv6]:PORT" or a bare address (port 0).
func parseAddrPort(s string) (netip.AddrPort, error) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap, nil
	}
	a, err := netip.ParseAddr(strings.Trim(s, "[]"))
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("%q is not IP[:PORT]", s)
	}
	return netip.AddrPortFrom(a, 0), nil
}
