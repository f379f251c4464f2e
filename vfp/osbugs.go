package vfp

import (
	"fmt"
	"slices"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// osBugDrop is why a known OS bug of node n (its snapshot's OSBugs) drops
// this load-balanced packet, "" when none does. Both bugs are modelled from
// the warning on the Kubernetes "Networking on Windows" page and
// microsoft/Windows-Containers#204, never verified on Windows; what exactly
// breaks is not published, so the model takes the narrowest reading that
// matches the text:
//   - l2bridge, DSR, KB5005619+: a pod's packet through a DSR load balancer
//     ("pod to pod connectivity", restored by turning DSR off);
//   - overlay: a NodePort packet from outside the node that the load balancer
//     sends to a backend on another node ("NodePort Services on overlay",
//     avoided by externalTrafficPolicy Local, which keeps it on the node).
func (n *node) osBugDrop(lb *loadBalancer, o origin, ep *endpoint) string {
	bugs := n.HNS.OSBugs
	switch {
	case !n.overlay && o == originPod && lb.isDSR() && slices.Contains(bugs, hnslb.BugL2BridgeDSRPodToService):
		return fmt.Sprintf("known OS bug %s (Windows Server 2022 with KB5005619 or later): pod traffic through DSR load balancer %s on l2bridge is lost",
			hnslb.BugL2BridgeDSRPodToService, lb.ID)
	case n.overlay && o == originWire && lb.nodePort() && ep.IsRemote() && slices.Contains(bugs, hnslb.BugOverlayNodePortRemote):
		return fmt.Sprintf("known OS bug %s (Windows Server 2022 overlay): NodePort load balancer %s forwards to a backend on another node, and the packet is lost",
			hnslb.BugOverlayNodePortRemote, lb.ID)
	}
	return ""
}
