// Package vfp owns hnsproxy's packet model: given the HNS state of one or
// more Windows nodes (an hnslb.Snapshot each, from the simulator or a real
// node's dump), it traces the first packet of a flow the way the Hyper-V
// switch's filtering platform (VFP) would and says what happens: which load
// balancer matched, which backend was chosen, the addresses the receiver
// sees, the path across nodes, or why the packet was dropped.
//
// It depends only on the hnslb object model. Build a Cluster with
// NewCluster, then call Trace. docs/vfp.md lists where each rule comes from.
//
// # Where a packet starts
//
//   - Src is the address of a local endpoint (no RemoteEndpoint flag) on the
//     node's pod network: a pod; the packet starts at its vSwitch port.
//   - Src is one of a node's IPs: the node's host.
//   - Otherwise the packet comes from outside the cluster and enters at
//     Options.Ingress, by default the node that owns Dst (node or pod address).
//
// # Load balancers
//
// VFP applies load balancers where the packet enters the vSwitch: at the
// sending pod's or host's port, or at the node a packet from the wire
// arrives at (external clients, other nodes). A load balancer matches when
// its one port mapping has the packet's protocol and destination port as
// ExternalPort, its IPv6 flag equals the packet's family, and
//
//   - its FrontendVIPs hold Dst, where from the wire Dst must be one of the
//     node's external VIPs, those some load balancer of the node carries with
//     port flag VipExternalIP (externalIPs, ingress IPs); every load balancer
//     on such a VIP matches, the health-check one that has no VipExternalIP
//     included. A ClusterIP is reachable from pods and hosts of a node only; or
//   - it has no frontend VIP (NodePort) and Dst is an address of that node.
//     A VIP match wins over a NodePort match. The host reaching its own
//     NodePort is dropped ("local NodePort access from the node itself" is not
//     supported on Windows); pods of the node may use it.
//
// The backend is one of HostComputeEndpoints, resolved on the same node
// (local or remote endpoint), chosen by an FNV-1a hash: of the 5-tuple for
// DistributionNone, of the source IP and protocol for SourceIPProtocol, of
// the source IP alone for SourceIP (session affinity: one client, one
// backend). The hash runs over the packet as the load balancer sees it: a
// client behind another node's OutBoundNAT is that node's address. A load
// balancer without backends, or whose chosen ID is no endpoint on the node,
// drops.
//
// Address rewriting: the destination becomes backend IP:InternalPort (an
// unset InternalPort means ExternalPort). With port flag PreserveDIP the
// destination IP stays the frontend address and only the port changes; the
// packet is still forwarded to the chosen pod. Without the DSR flag the
// source is rewritten to the load balancer's SourceVIP (to the node's
// address of the family when SourceVIP is empty or of the other family),
// whatever the origin: pod, host or external client. With DSR the source is
// kept, so the backend sees the client's address and replies directly;
// the source port is never changed (port allocation is not modelled).
//
// A pod reaching itself through a DSR load balancer (hairpin) is dropped
// unless its endpoint carries a loopback DSR policy (an OutBoundNAT policy
// with the pod's own address in Destinations), which translates the source.
//
// Two more combinations are dropped because they cannot work on a real node:
// PreserveDIP with a remote backend ("also disables node-node forwarding"),
// and DSR for traffic from outside the node with a remote backend (the
// reply would bypass the node holding the translation); kube-proxy and
// hnsproxy give such load balancers local backends only.
//
// # Forwarding
//
// After the load balancer, or without one, the packet goes, in this order:
// to a local endpoint with the address (delivered to the pod); to the node's
// own host; to another node's address over the underlay (where that node's
// NodePort and external load balancers apply as for any arriving packet);
// on Overlay, VXLAN-encapsulated to the provider address of a remote endpoint
// with the address, else of the longest RemoteSubnetRoute covering it, with
// the VNI of the route, else of the network's VSID subnet policy, else 4096
// (the receiving node must be overlay with the same VNI and VXLAN UDP port,
// the network's VxlanPort policy else 4789, and hold the pod as a local
// endpoint), except that a remote endpoint whose provider address is its
// own address or this node's (a node or public IP backend) is reached on
// the underlay; on L2Bridge, routed to the node named by a remote
// endpoint's provider address, else the node holding the pod. Otherwise the
// packet leaves the cluster, except that an address inside the node's pod
// subnet, inside the sending pod's OutBoundNAT exceptions (in-cluster
// ranges), or on the frontend of a load balancer that missed on port,
// protocol or family is a drop with that reason.
//
// Nodes outside the cluster (Options.OtherNodes, Options.OtherPods, for a
// trace over one real node's HNS) take a packet sent to their node
// addresses over the underlay, to their provider address over VXLAN, or to
// their pods on L2Bridge: the trace ends there as HandedOff.
//
// On Overlay a packet whose source is a node address is never encapsulated:
// a host reaches remote pods only through a load balancer that SNATs to the
// source VIP (Flannel VXLAN: "node-pod connectivity is only possible for
// local pods"); that is why overlay load balancers need a source VIP.
// The reverse holds too: a packet leaving an overlay node unencapsulated
// with a source in the node's pod subnet (the source VIP) is dropped, as the
// underlay does not route it back; load balancers with node or public IP
// backends need the node address as source VIP.
//
// A pod's OutBoundNAT policy rewrites its address to the policy's VirtualIP
// or the node's address when the packet leaves the node unencapsulated for
// an address outside the exceptions (and inside Destinations if any). A
// policy translates one family: IPv6 with the NatFlagsIPv6 flag, IPv4
// without it (as the flag selects the family of a PortMapping), so a
// dual-stack pod's IPv6 traffic keeps its address under an IPv4 policy. VFP
// does not translate ICMP, so an ICMP packet that would be NATed is dropped;
// ICMP between pods and nodes works. No load balancer matches ICMP.
//
// Not modelled: replies and connection tracking, ACLs, host port mappings, the
// DrMacAddress and MAC rewriting, and networks other than L2Bridge and Overlay.
package vfp
