package desired

import (
	"maps"
	"net/netip"

	v1 "k8s.io/api/core/v1"

	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/internal/kubeip"
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
// Addresses are read as GetNodeHostIPs reads them (ParseIPSloppy, through
// kubeip): "010.0.0.11" is 10.0.0.11, a zoned IPv6 address is skipped.
func NodeHostIPs(node *v1.Node) map[intent.IPFamily]netip.Addr {
	ips := map[intent.IPFamily]netip.Addr{}
	for _, typ := range []v1.NodeAddressType{v1.NodeInternalIP, v1.NodeExternalIP} {
		for _, a := range node.Status.Addresses {
			if a.Type != typ {
				continue
			}
			ip, ok := kubeip.ParseAddr(a.Address)
			if !ok {
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

// SkippedNodeAddresses are the Node's InternalIP and ExternalIP texts that
// NodeHostIPs skips, as kube-proxy does, for the caller to warn about.
func SkippedNodeAddresses(node *v1.Node) []string {
	var out []string
	for _, a := range node.Status.Addresses {
		if a.Type != v1.NodeInternalIP && a.Type != v1.NodeExternalIP {
			continue
		}
		if _, ok := kubeip.ParseAddr(a.Address); !ok {
			out = append(out, a.Address)
		}
	}
	return out
}

// PodCIDRsOf are a Node's pod CIDRs (spec.podCIDRs, else spec.podCIDR)
// that parse as kube-proxy reads CIDRs (kubeip), masked: Config.PodCIDRs
// for this node, and the overlay routes the proxier waits for on the
// others. nil if none.
func PodCIDRsOf(node *v1.Node) []netip.Prefix {
	cidrs := node.Spec.PodCIDRs
	if len(cidrs) == 0 && node.Spec.PodCIDR != "" {
		cidrs = []string{node.Spec.PodCIDR}
	}
	var out []netip.Prefix
	for _, c := range cidrs {
		if prefix, ok := kubeip.ParsePrefix(c); ok {
			out = append(out, prefix.Masked())
		}
	}
	return out
}
