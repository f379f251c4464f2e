package desired

import (
	"net/netip"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// ownsPodAddress reports whether ip can only be a pod of this node: it lies
// in the HNS network's own subnets and in the Node's pod CIDRs. Neither
// alone says so. Calico IPAM hands out its own blocks and ignores the
// spec.podCIDR kube-controller-manager may still allocate, so a pod CIDR
// can hold another node's pods; an l2bridge network whose subnet is the
// host's (Azure CNI) spans every node, whose Nodes carry no pod CIDR. The
// network's subnet is this node's lease (Flannel), IPAM block (Calico,
// whose Windows nodes need strict affinity) or configured subnet (sdnbridge,
// sdnoverlay, hnscni), which kube-controller-manager's pod CIDR holds where
// both come from it.
func (c *Config) ownsPodAddress(ip netip.Addr) bool {
	if !c.inPodCIDRs(ip) {
		return false
	}
	for _, p := range c.NetworkSubnets {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// NetworkSubnetsOf are the subnets of a network's IPAMs, masked, leaving out
// those that do not parse: Config.NetworkSubnets.
func NetworkSubnetsOf(n *hnslb.Network) []netip.Prefix {
	var out []netip.Prefix
	for _, ipam := range n.Ipams {
		for _, s := range ipam.Subnets {
			if p, err := netip.ParsePrefix(s.IpAddressPrefix); err == nil {
				out = append(out, p.Masked())
			}
		}
	}
	return out
}
