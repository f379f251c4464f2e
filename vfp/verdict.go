package vfp

import (
	"fmt"
	"net/netip"
	"strings"
)

// Outcome is where a traced packet ended up.
type Outcome uint8

const (
	// Dropped: see Verdict.DropReason.
	Dropped Outcome = iota
	// DeliveredToPod: handed to a local endpoint's vNIC (Verdict.BackendEndpointID).
	DeliveredToPod
	// DeliveredToHost: handed to a node's host network stack.
	DeliveredToHost
	// LeftCluster: sent out of a node towards an address no node or pod holds.
	LeftCluster
	// HandedOff: sent to a node outside the traced cluster (Options.OtherNodes,
	// Options.OtherPods), named by Verdict.BackendNode; what that node does
	// with it is not traced.
	HandedOff
)

func (o Outcome) String() string {
	switch o {
	case Dropped:
		return "dropped"
	case DeliveredToPod:
		return "delivered-to-pod"
	case DeliveredToHost:
		return "delivered-to-host"
	case LeftCluster:
		return "left-cluster"
	case HandedOff:
		return "handed-off"
	}
	return fmt.Sprintf("outcome(%d)", uint8(o))
}

// Action is one step a hop applied to the packet.
type Action string

const (
	ActionFromPod     Action = "from-pod"     // sent by a local endpoint (first hop)
	ActionFromHost    Action = "from-host"    // sent by a node's host stack (first hop)
	ActionIngress     Action = "ingress"      // arrived from outside the cluster (first hop)
	ActionDNAT        Action = "lb-dnat"      // a load balancer rewrote the destination
	ActionSNAT        Action = "lb-snat"      // a non-DSR load balancer rewrote the source
	ActionOutboundNAT Action = "outbound-nat" // the source pod's OutBoundNAT policy rewrote the source
	ActionEncap       Action = "encap-vxlan"  // overlay: VXLAN to a provider address
	ActionDecap       Action = "decap-vxlan"  // overlay: received from the tunnel
	ActionRoute       Action = "l2bridge-route"
	ActionUnderlay    Action = "underlay" // plain IP on the node network, to another node's address
	ActionDeliver     Action = "deliver"
	ActionEgress      Action = "egress"
	ActionDrop        Action = "drop"
)

// Hop is one step of a trace: on which node, what happened, and the
// packet's addresses after the step. Node is "" outside the cluster.
type Hop struct {
	Node   string
	Action Action
	Detail string
	Src    netip.AddrPort
	Dst    netip.AddrPort
}

func (h Hop) String() string {
	node := h.Node
	if node == "" {
		node = "-"
	}
	s := fmt.Sprintf("%s %s %s->%s", node, h.Action, h.Src, h.Dst)
	if h.Detail != "" {
		s += " (" + h.Detail + ")"
	}
	return s
}

// Verdict is what happened to a traced packet.
type Verdict struct {
	Outcome Outcome
	// DropReason says why, when Outcome is Dropped.
	DropReason string

	// The load balancer that matched; LoadBalancerID is "" when none did.
	LoadBalancerID string
	LBNode         string         // node whose HNS load balancer applied
	Frontend       netip.AddrPort // the frontend VIP or node address (NodePort) and external port
	NodePort       bool           // the load balancer has no frontend VIP

	// Where the packet went: the backend pod's IP and port (with
	// PreserveDIP this is the pod's IP while SeenDst keeps the VIP), or the
	// node address, or the external address.
	Backend           netip.AddrPort
	BackendNode       string // "" when the packet left the cluster or was dropped; the receiving node when HandedOff
	BackendEndpointID string // the local endpoint on BackendNode, for DeliveredToPod

	// Addresses as the receiver sees them.
	SeenSrc netip.AddrPort
	SeenDst netip.AddrPort

	// DSR: the load balancer did not translate the source; replies go
	// straight back to the client.
	DSR bool
	// ClientIPPreserved: the receiver sees the original source address.
	ClientIPPreserved bool

	Hops []Hop
}

// Delivered reports whether the packet reached a pod or a node host.
func (v Verdict) Delivered() bool {
	return v.Outcome == DeliveredToPod || v.Outcome == DeliveredToHost
}

// Actions lists the hops' actions, for compact assertions.
func (v Verdict) Actions() []Action {
	out := make([]Action, len(v.Hops))
	for i, h := range v.Hops {
		out[i] = h.Action
	}
	return out
}

func (v Verdict) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s", v.Outcome)
	if v.DropReason != "" {
		fmt.Fprintf(&b, ": %s", v.DropReason)
	}
	if v.LoadBalancerID != "" {
		fmt.Fprintf(&b, "; lb %s on %s frontend %s", v.LoadBalancerID, v.LBNode, v.Frontend)
	}
	if v.Outcome != Dropped {
		fmt.Fprintf(&b, "; at %s %s sees %s->%s", v.BackendNode, v.Backend, v.SeenSrc, v.SeenDst)
	}
	for _, h := range v.Hops {
		fmt.Fprintf(&b, "\n  %s", h)
	}
	return b.String()
}
