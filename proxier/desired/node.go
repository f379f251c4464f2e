package desired

import (
	"maps"
	"net/netip"

	v1 "k8s.io/api/core/v1"

	"github.com/hnsproxy/hnsproxy/intent"
)

// NodeIPs is the node IP per family (Config.NodeIPs): bound's (the
// --bind-address, one family) in its family, the Node's InternalIP in the
// others, as kube-proxy's detectNodeIPs overrides only the bind address's
// family, so --bind-address=<IPv4> keeps a dual-stack node's IPv6.
func NodeIPs(node *v1.Node, bound map[intent.IPFamily]netip.Addr) map[intent.IPFamily]netip.Addr {
	ips := NodeInternalIPs(node)
	maps.Copy(ips, bound)
	return ips
}

// NodeInternalIPs is the first valid InternalIP per family of node.
func NodeInternalIPs(node *v1.Node) map[intent.IPFamily]netip.Addr {
	ips := map[intent.IPFamily]netip.Addr{}
	for _, a := range node.Status.Addresses {
		if a.Type != v1.NodeInternalIP {
			continue
		}
		ip, err := netip.ParseAddr(a.Address)
		if err != nil {
			continue
		}
		fam := intent.FamilyOf(ip)
		if _, seen := ips[fam]; !seen {
			ips[fam] = ip.Unmap()
		}
	}
	return ips
}
