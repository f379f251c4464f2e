package diag

import (
	"net/netip"

	"github.com/hnsproxy/hnsproxy/intent"
)

// BackendOtherKind is a wanted backend whose address the load balancer
// reaches through an endpoint of the other kind than hnsproxy resolves it
// to: a remote endpoint for a pod of this node, or a local endpoint for a
// pod of another node. Matching by address alone read either as agreeing,
// yet the first sends the pod's traffic to another node on Windows Server
// 2019 and 2022 (kubernetes/kubernetes#138000), and hnsproxy replaces both.
const BackendOtherKind = "other-kind"

// resolvesLocal reports whether hnsproxy uses a local endpoint for b: a
// backend its slice places on this node, or one whose slice names no node
// while a local endpoint of the network holds its address, as the
// reconciler resolves it (reconciler/nodeunknown.go).
func (v *view) resolvesLocal(b intent.Backend) bool {
	if b.Local || !b.NodeUnknown {
		return b.Local
	}
	ip, err := netip.ParseAddr(b.IP)
	return err == nil && v.localHolds(ip.Unmap())
}
