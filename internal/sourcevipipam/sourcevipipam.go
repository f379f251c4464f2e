// Package sourcevipipam owns the IPAM attachments under which an overlay
// node's source VIP is reserved: hnsproxy's own (cmd/hnsproxy/app/sourcevip),
// and the one kube-proxy's start scripts use. The reservation lives in the
// IPAM store the node's pods use, so hnscni's GC, which hands the runtime's
// list of still-valid attachments on to that IPAM, adds both: no runtime
// lists them, and an IPAM with a GC of its own (host-local from
// containernetworking/plugins v1.10.0) would release them and hand the VIP
// to a pod.
package sourcevipipam

import "github.com/containernetworking/cni/pkg/types"

// hnsproxy's attachment, as CNI_CONTAINERID and CNI_IFNAME: a container ID
// no runtime gives a pod.
const (
	ContainerID = "hnsproxy-source-vip"
	IfName      = "sourcevip"
)

// Attachments are every attachment a source VIP is reserved under:
// hnsproxy's, and "dummy" for both, under which the start scripts that
// run kube-proxy on overlay reserve its --source-vip by running host-local
// by hand (kubernetes-sigs/sig-windows-tools' kube-proxy and Flannel
// scripts, microsoft/SDN's). A node moved from kube-proxy keeps that
// reservation, whether or not an endpoint holds its address at the time.
func Attachments() []types.GCAttachment {
	return []types.GCAttachment{
		{ContainerID: ContainerID, IfName: IfName},
		{ContainerID: "dummy", IfName: "dummy"},
	}
}
