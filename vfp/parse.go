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
	if p.Dst.Port() == 0 && !p.isICMP() {
		// "fd00:96::20:80" is a valid address: its port read as a group.
		hint := ""
		if p.Dst.Addr().Is6() && !strings.HasPrefix(dst, "[") {
			hint = "; an IPv6 address with a port is written [IPv6]:PORT"
		}
		return p, fmt.Errorf("destination %q has no port: %s needs IP:PORT%s", dst, protoName(p.Protocol), hint)
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

// parseAddrPort accepts "IP:PORT", "[IPv6]:PORT" or a bare address (port
// 0). An IPv6 zone is refused: no Kubernetes object holds a zoned address
// (kubeip refuses them), so a trace of one would meet nothing.
func parseAddrPort(s string) (netip.AddrPort, error) {
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		a, aerr := netip.ParseAddr(strings.Trim(s, "[]"))
		if aerr != nil {
			return netip.AddrPort{}, fmt.Errorf("%q is not IP[:PORT]", s)
		}
		ap = netip.AddrPortFrom(a, 0)
	}
	if ap.Addr().Zone() != "" {
		return ap, fmt.Errorf("%q has an IPv6 zone, which no node, pod or Service address has", s)
	}
	return ap, nil
}
