package desired

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"

	"github.com/hnsproxy/hnsproxy/intent"
)

// overlayIndex answers "which node hosts this pod IP" from the network's
// RemoteSubnetRoute policies.
type overlayIndex struct {
	// subnets sorted by descending prefix length, so the first match is the longest.
	subnets []RemoteSubnet
	// nodes: the provider addresses themselves (a host-network pod's IP is its node's PA).
	nodes map[netip.Addr]bool
}

func newOverlayIndex(cfg *Config) *overlayIndex {
	ov := &overlayIndex{nodes: map[netip.Addr]bool{}}
	if cfg.Mode != Overlay {
		return ov
	}
	for _, s := range cfg.RemoteSubnets {
		if !s.Prefix.IsValid() || !s.ProviderAddress.IsValid() {
			continue
		}
		ov.subnets = append(ov.subnets, RemoteSubnet{Prefix: s.Prefix.Masked(), ProviderAddress: s.ProviderAddress})
		ov.nodes[s.ProviderAddress] = true
	}
	slices.SortStableFunc(ov.subnets, func(a, b RemoteSubnet) int {
		if c := cmp.Compare(b.Prefix.Bits(), a.Prefix.Bits()); c != 0 {
			return c
		}
		if c := a.Prefix.Addr().Compare(b.Prefix.Addr()); c != 0 {
			return c
		}
		return a.ProviderAddress.Compare(b.ProviderAddress)
	})
	return ov
}

// providerAddress returns the PA of the node hosting ip: the node itself if
// ip is a provider address, else the longest matching remote subnet's.
func (ov *overlayIndex) providerAddress(ip netip.Addr) (netip.Addr, bool) {
	if ov.nodes[ip] {
		return ip, true
	}
	for _, s := range ov.subnets {
		if s.Prefix.Contains(ip) {
			return s.ProviderAddress, true
		}
	}
	return netip.Addr{}, false
}

// ConjureMAC makes the MAC HNS gets for a remote endpoint, as kube-proxy's
// winkernel does: "02-11-" then the four IPv4 bytes, or for IPv6 the last
// four bytes in reverse order. The MAC never goes on the wire; it only needs
// to differ between endpoints.
func ConjureMAC(ip netip.Addr) string {
	ip = ip.Unmap()
	switch {
	case ip.Is4():
		b := ip.As4()
		return fmt.Sprintf("02-11-%02x-%02x-%02x-%02x", b[0], b[1], b[2], b[3])
	case ip.Is6():
		b := ip.As16()
		return fmt.Sprintf("02-11-%02x-%02x-%02x-%02x", b[15], b[14], b[13], b[12])
	}
	return "02-11-22-33-44-55"
}

// SourceVIPEndpoints returns, on overlay, the endpoint carrying the source
// VIP for each family that has both a source VIP and a node IP: IP = source
// VIP, MAC = host MAC. Like winkernel, it is a local endpoint (Local: no
// RemoteEndpoint flag, no provider-address policy). Nil on l2bridge.
func SourceVIPEndpoints(cfg Config) []intent.RemoteEndpoint {
	if cfg.Mode != Overlay {
		return nil
	}
	var out []intent.RemoteEndpoint
	for _, fam := range []intent.IPFamily{intent.IPv4, intent.IPv6} {
		vip := cfg.SourceVIP[fam]
		if !vip.IsValid() || !cfg.NodeIPs[fam].IsValid() {
			continue
		}
		out = append(out, intent.RemoteEndpoint{IP: vip.String(), MAC: cfg.HostMAC, Local: true})
	}
	return out
}

// serviceVIPEndpoint is winkernel's overlay endpoint for a cluster IP: a
// remote endpoint with the host MAC whose provider address is this node.
func serviceVIPEndpoint(cfg *Config, clusterIP netip.Addr) intent.RemoteEndpoint {
	return intent.RemoteEndpoint{
		IP:              clusterIP.String(),
		MAC:             cfg.HostMAC,
		ProviderAddress: cfg.NodeIPs[familyOf(clusterIP)].String(),
	}
}

func backendEndpoint(b intent.Backend) intent.RemoteEndpoint {
	return intent.RemoteEndpoint{IP: b.IP, MAC: b.MAC, ProviderAddress: b.ProviderAddress}
}

// compareIPStrings orders IP strings numerically (unparsable ones last, by text).
func compareIPStrings(a, b string) int {
	x, errA := netip.ParseAddr(a)
	y, errB := netip.ParseAddr(b)
	switch {
	case errA == nil && errB == nil:
		return x.Compare(y)
	case errA == nil:
		return -1
	case errB == nil:
		return 1
	}
	return cmp.Compare(a, b)
}
