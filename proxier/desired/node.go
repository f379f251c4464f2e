package desired

import (
	"maps"
	"net/netip"

	v1 "k8s.io/api/core/v1"

	"github.com/hnsproxy/hnsproxy/intent"
)

// NodeIPs is the node IP per family (Config.NodeIPs): bound's (the
// --bind-address, one family) in its family, the Node's address
// (NodeHostIPs) in the others, as kube-proxy's detectNodeIPs overrides only
// the bind address's family, so --bind-address=<IPv4> keeps a dual-stack
// node's IPv6.
func NodeIPs(node *v1.Node, bound map[intent.IPFamily]netip.Addr) map[intent.IPFamily]netip.Addr {
	ips := NodeHostIPs(node)
	maps.Copy(ips, bound)
	return ips
}

// NodeHostIPs is, per family, the Node's first valid InternalIP, else its
// first valid ExternalIP: the addresses kube-proxy takes as its node IPs
// (GetNodeHostIPs puts InternalIPs before ExternalIPs and takes the first
// of each family), so a Node listing only ExternalIPs has node IPs too.
func NodeHostIPs(node *v1.Node) map[intent.IPFamily]netip.Addr {
	ips := map[intent.IPFamily]netip.Addr{}
	for _, typ := range []v1.NodeAddressType{v1.NodeInternalIP, v1.NodeExternalIP} {
		for _, a := range node.Status.Addresses {
			if a.Type != typ {
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
	}
	return ips
}
