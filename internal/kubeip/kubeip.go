// Package kubeip owns how hnsproxy reads an IP address or CIDR that
// Kubernetes wrote (a Node's addresses and pod CIDRs, a Service's IPs, an
// EndpointSlice's addresses) or that kube-proxy's flags and configuration
// file carry: as kube-proxy reads them, with k8s.io/utils/net's
// ParseIPSloppy and ParseCIDRSloppy. An IPv4 part with leading zeros
// ("010.0.0.1") is read as decimal, as the API server accepted such text
// for years and objects stored then still hold it; an IPv6 zone
// ("fe80::1%eth0") is refused. Both hand back netip values, so the text
// they print is the canonical form.
package kubeip

import (
	"net"
	"net/netip"
	"strings"

	netutils "k8s.io/utils/net"
)

// ParseAddr reads s as kube-proxy does (ParseIPSloppy). An IPv4-mapped IPv6
// text ("::ffff:10.0.0.1") stays a 16-byte address, for the caller to
// refuse or unmap. Only what netip refuses pays for the second parse.
func ParseAddr(s string) (netip.Addr, bool) {
	if ip, err := netip.ParseAddr(s); err == nil {
		return ip, ip.Zone() == ""
	}
	return fromNetIP(netutils.ParseIPSloppy(s), s)
}

// ParsePrefix reads s as kube-proxy does (ParseCIDRSloppy): an IPv4 part
// with leading zeros is decimal, a zone is refused. The address keeps its
// host bits, as netip.ParsePrefix's does.
func ParsePrefix(s string) (netip.Prefix, bool) {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p, true
	}
	ip, ipnet, err := netutils.ParseCIDRSloppy(s)
	if err != nil {
		return netip.Prefix{}, false
	}
	addr, ok := fromNetIP(ip, s[:strings.IndexByte(s, '/')])
	if !ok {
		return netip.Prefix{}, false
	}
	ones, _ := ipnet.Mask.Size()
	return netip.PrefixFrom(addr, ones), true
}

// fromNetIP converts what the sloppy parser read from text: 4 bytes for
// dotted IPv4 text, 16 for text with a colon.
func fromNetIP(ip net.IP, text string) (netip.Addr, bool) {
	if ip == nil {
		return netip.Addr{}, false
	}
	if v4 := ip.To4(); v4 != nil && !strings.Contains(text, ":") {
		return netip.AddrFrom4([4]byte(v4)), true
	}
	return netip.AddrFrom16([16]byte(ip.To16())), true
}
