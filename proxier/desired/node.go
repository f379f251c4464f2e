package desired

import (
	"net/netip"

	v1 "k8s.io/api/core/v1"

	"github.com/hnsproxy/hnsproxy/intent"
)

// NodeInternalIPs is the first valid InternalIP per family of node: the
// node IPs (Config.NodeIPs) unless --bind-address names one.
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
