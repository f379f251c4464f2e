package proxier

import (
	"net/netip"

	v1 "k8s.io/api/core/v1"
)

// FlannelPublicIPAnnotation is where Flannel's kube subnet manager reads the
// public IP of a node's lease (flannel-io/flannel, pkg/subnet/kube), which
// its VXLAN backend on Windows makes the provider address of the node's
// RemoteSubnetRoute. flanneld writes it at its start: --public-ip, the
// address of its interface, or the Node's public-ip-overwrite annotation.
// It need not be an address the Node's status lists (a multi-homed node
// whose kubelet --node-ip is another interface's), and it moves without
// the status moving (that interface given a new address under DHCP at a
// reboot), so the route's owner is judged by it where a Node has it.
const FlannelPublicIPAnnotation = "flannel.alpha.coreos.com/public-ip"

// flannelPublicIP is the IPv4 public IP node's Flannel announces, if it
// announces one (overlay carries IPv4 only).
func flannelPublicIP(node *v1.Node) (netip.Addr, bool) {
	addr, err := netip.ParseAddr(node.Annotations[FlannelPublicIPAnnotation])
	if err != nil || !addr.Is4() {
		return netip.Addr{}, false
	}
	return addr, true
}
