// Package sourcevipipam owns the IPAM attachment under which hnsproxy
// reserves an overlay node's source VIP (cmd/hnsproxy/app/sourcevip): a
// container ID no runtime gives a pod, as kube-proxy's start scripts use
// "dummy". The reservation lives in the IPAM store the node's pods use, so
// hnscni's GC, which hands the runtime's list of still-valid attachments on
// to that IPAM, adds this one: no runtime lists it, and an IPAM with a GC
// of its own would release it and hand the VIP to a pod.
package sourcevipipam

// The attachment, as CNI_CONTAINERID and CNI_IFNAME.
const (
	ContainerID = "hnsproxy-source-vip"
	IfName      = "sourcevip"
)
