package vfp

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

// ErrNoIngress: a packet from outside the cluster whose destination no node
// holds needs Options.Ingress, the node it enters at. A tool tells its
// user which of its own flags that is.
var ErrNoIngress = errors.New("comes from outside the cluster and no node owns its destination")

// Trace follows p through the cluster and says what happens to it. Errors
// are for questions the model cannot answer (an invalid packet, an unknown
// Options.Ingress node, an external packet with no ingress node); every
// dataplane outcome, drops included, is a Verdict.
func (c *Cluster) Trace(p Packet, opt Options) (Verdict, error) {
	p, err := p.normalize()
	if err != nil {
		return Verdict{}, err
	}
	var ingress *node
	if opt.Ingress != "" {
		if ingress = c.nodeByName(opt.Ingress); ingress == nil {
			return Verdict{}, fmt.Errorf("vfp: ingress node %q is not in the cluster", opt.Ingress)
		}
	}
	t := &tracer{c: c, p: p, opt: opt, src: p.Src, dst: p.Dst, route: p.Dst.Addr()}
	if n, ep := c.podNode(p.Src.Addr()); n != nil {
		t.srcPod = ep
		t.hop(n, ActionFromPod, "endpoint "+ep.ID)
		t.fromInside(n, originPod)
	} else if n := c.nodeWithIP(p.Src.Addr()); n != nil {
		t.hop(n, ActionFromHost, "")
		t.fromInside(n, originHost)
	} else {
		if ingress == nil {
			if ingress = c.nodeWithIP(p.Dst.Addr()); ingress == nil {
				ingress, _ = c.podNode(p.Dst.Addr())
			}
		}
		if ingress == nil {
			return Verdict{}, fmt.Errorf("vfp: packet %s %w: set Options.Ingress", p, ErrNoIngress)
		}
		t.hop(ingress, ActionIngress, "")
		t.arrive(ingress)
	}
	if t.v.Outcome != Dropped {
		t.v.SeenSrc, t.v.SeenDst = t.src, t.dst
		t.v.ClientIPPreserved = t.src.Addr() == p.Src.Addr()
	}
	return t.v, nil
}

// tracer carries one packet's state through the trace.
type tracer struct {
	c   *Cluster
	p   Packet // as sent (the load balancer hashes src, dst as it sees them)
	opt Options

	src, dst netip.AddrPort // the header now
	// route is the address the packet is forwarded to: dst's address, except
	// under PreserveDIP where dst keeps the VIP and route is the backend pod.
	route netip.Addr
	// srcPod is the sending local endpoint while the packet still carries
	// its address (its OutBoundNAT policy applies when it leaves the node).
	srcPod     *endpoint
	lbDone     bool
	nearMisses []string
	v          Verdict
}

func (t *tracer) hop(n *node, a Action, detail string) {
	t.v.Hops = append(t.v.Hops, Hop{Node: n.Name, Action: a, Detail: detail, Src: t.src, Dst: t.dst})
}

func (t *tracer) drop(n *node, format string, args ...any) {
	t.v.Outcome = Dropped
	t.v.DropReason = fmt.Sprintf(format, args...)
	t.hop(n, ActionDrop, t.v.DropReason)
}

// fromInside handles a packet sent by a pod or the host of n: VFP applies
// the load balancers at the sender's vSwitch port, then forwards.
func (t *tracer) fromInside(n *node, o origin) {
	if t.applyLB(n, o) {
		return
	}
	t.forward(n)
}

// arrive handles a packet reaching n from outside the node, unencapsulated:
// from an external client or another node's underlay.
func (t *tracer) arrive(n *node) {
	if !t.lbDone && t.applyLB(n, originWire) {
		return
	}
	if ep := n.local[t.route]; ep != nil {
		t.deliverPod(n, ep)
		return
	}
	if n.hasIP(t.route) {
		t.deliverHost(n)
		return
	}
	t.drop(n, "no load balancer matched and node %s has no pod or node address %s%s", n.Name, t.route, t.missNote())
}

// applyLB runs n's load balancers on the packet. It reports false when none
// matched; otherwise it has finished the trace (delivered or dropped).
func (t *tracer) applyLB(n *node, o origin) bool {
	lb, misses := n.matchLB(t.dst, t.p.Protocol, o)
	if lb == nil {
		t.nearMisses = append(t.nearMisses, misses...)
		return false
	}
	t.lbDone = true
	v := &t.v
	v.LoadBalancerID, v.LBNode, v.Frontend, v.NodePort, v.DSR = lb.ID, n.Name, t.dst, lb.nodePort(), lb.isDSR()
	if o == originHost && lb.nodePort() {
		t.drop(n, "load balancer %s: local NodePort access from the node itself is not supported on Windows", lb.ID)
		return true
	}
	ids := lb.HostComputeEndpoints
	if len(ids) == 0 {
		t.drop(n, "load balancer %s has no backends", lb.ID)
		return true
	}
	id := ids[pickBackend(lb.pm.DistributionType, Packet{Src: t.src, Dst: t.dst, Protocol: t.p.Protocol}, len(ids))]
	ep := n.byID[strings.ToLower(id)]
	if ep == nil {
		t.drop(n, "load balancer %s chose backend endpoint %s, which does not exist on node %s", lb.ID, id, n.Name)
		return true
	}
	backend, ok := ep.addrOfFamily(t.dst.Addr())
	if !ok {
		t.drop(n, "load balancer %s chose backend endpoint %s, which has no %s address", lb.ID, id, intent.FamilyOf(t.dst.Addr()))
		return true
	}
	if why := n.osBugDrop(lb, o, ep); why != "" {
		t.drop(n, "%s", why)
		return true
	}
	preserveDIP := lb.portFlag(hnslb.PortMappingFlagsPreserveDIP)
	if preserveDIP && ep.IsRemote() {
		t.drop(n, "load balancer %s chose remote backend %s: PreserveDIP disables node-to-node forwarding", lb.ID, backend)
		return true
	}
	if lb.isDSR() && o == originWire && ep.IsRemote() {
		t.drop(n, "DSR load balancer %s chose remote backend %s for traffic from outside the node: the reply would bypass the node that translated it", lb.ID, backend)
		return true
	}
	detail := fmt.Sprintf("load balancer %s, backend endpoint %s", lb.ID, id)
	t.route = backend
	t.dst = netip.AddrPortFrom(backend, lb.internalPort())
	if preserveDIP {
		t.dst = netip.AddrPortFrom(v.Frontend.Addr(), lb.internalPort())
		detail += ", PreserveDIP keeps the destination address"
	}
	t.hop(n, ActionDNAT, detail)
	if !lb.isDSR() && !t.snat(n, lb) {
		return true
	}
	if lb.isDSR() && t.srcPod != nil && backend == t.p.Src.Addr() && !t.loopbackDSR(n, lb) {
		return true
	}
	t.forward(n)
	return true
}

// loopbackDSR handles a pod reaching itself through a DSR load balancer
// (hairpin): VFP drops it unless the CNI gave the endpoint a loopback DSR
// policy, an OutBoundNAT policy listing the pod's own address in
// Destinations, which translates the source. It reports false if it
// dropped the packet.
func (t *tracer) loopbackDSR(n *node, lb *loadBalancer) bool {
	for _, nat := range t.srcPod.outboundNAT {
		if prefixesContain(nat.destinations, t.route) {
			return t.outboundNAT(n, t.route)
		}
	}
	t.drop(n, "DSR load balancer %s sent pod %s to itself, and its endpoint has no loopback DSR policy (OutBoundNAT with its own address in Destinations)", lb.ID, t.route)
	return false
}

// snat rewrites the source of non-DSR load-balanced traffic to the load
// balancer's source VIP, or the node's address when it has none.
func (t *tracer) snat(n *node, lb *loadBalancer) bool {
	to, how := lb.sourceVIP, "source VIP"
	if !to.IsValid() || to.Is4() != t.src.Addr().Is4() {
		var ok bool
		if to, ok = n.ipOfFamily(t.src.Addr()); !ok {
			t.drop(n, "load balancer %s has no source VIP and node %s has no %s address to SNAT to", lb.ID, n.Name, intent.FamilyOf(t.src.Addr()))
			return false
		}
		how = "node address"
	}
	t.src = netip.AddrPortFrom(to, t.src.Port())
	t.srcPod = nil
	t.hop(n, ActionSNAT, how)
	return true
}

// forward moves a packet that is in n's vSwitch (sent by a pod or the host,
// or load balanced) towards t.route.
func (t *tracer) forward(n *node) {
	ip := t.route
	if ep := n.local[ip]; ep != nil {
		t.deliverPod(n, ep)
		return
	}
	if n.hasIP(ip) {
		t.deliverHost(n)
		return
	}
	if m := t.c.nodeWithIP(ip); m != nil {
		if t.outboundNAT(n, ip) && t.underlaySource(n) {
			t.hop(n, ActionUnderlay, "to node "+m.Name)
			t.arrive(m)
		}
		return
	}
	if other, ok := t.opt.OtherNodes[ip]; ok {
		if t.outboundNAT(n, ip) && t.underlaySource(n) {
			t.hop(n, ActionUnderlay, "to node "+other)
			t.handOff(other)
		}
		return
	}
	if n.overlay {
		if pa, vni, via, ok := n.overlayNextHop(ip); ok {
			t.encap(n, pa, vni, via)
			return
		}
	} else if m := t.c.l2bridgeNextHop(n, ip); m != nil {
		if t.outboundNAT(n, ip) {
			t.hop(n, ActionRoute, "to node "+m.Name)
			t.arrive(m)
		}
		return
	} else if other, ok := t.opt.OtherPods[ip]; ok {
		if t.outboundNAT(n, ip) {
			t.hop(n, ActionRoute, "to node "+other)
			t.handOff(other)
		}
		return
	}
	t.leave(n)
}

// handOff ends the trace at a node outside the cluster (Options.OtherNodes,
// Options.OtherPods): the packet left n for it as it now is.
func (t *tracer) handOff(node string) {
	t.v.Outcome = HandedOff
	t.v.BackendNode = node
	t.v.Backend = netip.AddrPortFrom(t.route, t.dst.Port())
}

// overlayNextHop finds the provider address of the node hosting ip: a
// remote endpoint's ProviderAddress policy, else the longest matching
// RemoteSubnetRoute. A remote endpoint whose provider address is its own
// address (a node) or this node's (winkernel's "public IP") is no pod: it
// is reached on the underlay, not over VXLAN.
func (n *node) overlayNextHop(ip netip.Addr) (pa netip.Addr, vni uint32, via string, ok bool) {
	if ep := n.remote[ip]; ep != nil && ep.pa.IsValid() {
		if ep.pa == ip || n.hasIP(ep.pa) {
			return netip.Addr{}, 0, "", false
		}
		return ep.pa, n.vni, "remote endpoint " + ep.ID, true
	}
	best := -1
	for i, r := range n.routes {
		if r.prefix.Contains(ip) && (best < 0 || r.prefix.Bits() > n.routes[best].prefix.Bits()) {
			best = i
		}
	}
	if best < 0 {
		return netip.Addr{}, 0, "", false
	}
	r := n.routes[best]
	vni = r.vni
	if vni == 0 {
		vni = n.vni
	}
	return r.pa, vni, "RemoteSubnetRoute " + r.prefix.String(), true
}

// l2bridgeNextHop finds the node hosting ip on an l2bridge network: the
// node with the remote endpoint's provider address, else the node with a
// local endpoint holding ip (the underlay routes are assumed in place).
func (c *Cluster) l2bridgeNextHop(n *node, ip netip.Addr) *node {
	if ep := n.remote[ip]; ep != nil && ep.pa.IsValid() {
		if m := c.nodeWithIP(ep.pa); m != nil && m != n {
			return m
		}
	}
	if m, _ := c.podNode(ip); m != nil && m != n {
		return m
	}
	return nil
}

// encap sends the packet over VXLAN to the node with provider address pa,
// which delivers it to its local endpoint.
func (t *tracer) encap(n *node, pa netip.Addr, vni uint32, via string) {
	if t.c.nodeWithIP(t.src.Addr()) != nil {
		t.drop(n, "overlay: source %s is a node address, which cannot be encapsulated to remote pod %s (node traffic reaches remote pods only through a load balancer that SNATs to the source VIP)", t.src.Addr(), t.route)
		return
	}
	m := t.c.nodeWithIP(pa)
	other, elsewhere := t.opt.OtherNodes[pa]
	if m == nil && !elsewhere {
		t.drop(n, "overlay: no node has provider address %s (%s)", pa, via)
		return
	}
	t.hop(n, ActionEncap, fmt.Sprintf("vni=%d port=%d pa=%s via %s", vni, n.port, pa, via))
	if m == nil {
		t.handOff(other)
		return
	}
	if !m.overlay {
		t.drop(m, "node %s's network %q is not an overlay network", m.Name, m.network.Name)
		return
	}
	if m.vni != vni {
		t.drop(m, "overlay: VNI %d does not match node %s's VNI %d", vni, m.Name, m.vni)
		return
	}
	if m.port != n.port {
		t.drop(m, "overlay: VXLAN port %d does not match node %s's port %d", n.port, m.Name, m.port)
		return
	}
	t.hop(m, ActionDecap, fmt.Sprintf("vni=%d port=%d", vni, m.port))
	if ep := m.local[t.route]; ep != nil {
		t.deliverPod(m, ep)
		return
	}
	t.drop(m, "node %s has no local endpoint with address %s", m.Name, t.route)
}

// leave handles a packet whose destination is no pod or node of the cluster.
func (t *tracer) leave(n *node) {
	ip := t.route
	if !t.lbDone && len(t.nearMisses) > 0 {
		t.drop(n, "no load balancer matched %s/%s%s", t.dst, protoName(t.p.Protocol), t.missNote())
		return
	}
	if prefixesContain(n.subnets, ip) {
		t.drop(n, "no endpoint has address %s in node %s's pod subnet", ip, n.Name)
		return
	}
	if t.srcPod != nil && t.srcPod.natExempt(ip) {
		if n.overlay {
			t.drop(n, "overlay: no remote endpoint or RemoteSubnetRoute covers %s, an in-cluster address (OutBoundNAT exception)", ip)
		} else {
			t.drop(n, "no load balancer, pod or node has %s, an in-cluster address (OutBoundNAT exception)", ip)
		}
		return
	}
	if !t.outboundNAT(n, ip) || !t.underlaySource(n) {
		return
	}
	t.hop(n, ActionEgress, "")
	t.v.Outcome = LeftCluster
	t.v.Backend = t.dst
}

// outboundNAT applies the sending pod's OutBoundNAT policy to a packet
// leaving node n for ip without encapsulation. It reports false if it
// dropped the packet.
func (t *tracer) outboundNAT(n *node, ip netip.Addr) bool {
	if t.srcPod == nil {
		return true
	}
	for _, nat := range t.srcPod.outboundNAT {
		if nat.ipv6 != ip.Is6() || len(nat.destinations) > 0 && !prefixesContain(nat.destinations, ip) || prefixesContain(nat.exceptions, ip) {
			continue
		}
		to := nat.vip
		if !to.IsValid() || to.Is4() != ip.Is4() {
			var ok bool
			if to, ok = n.ipOfFamily(ip); !ok {
				t.drop(n, "OutBoundNAT: node %s has no %s address", n.Name, intent.FamilyOf(ip))
				return false
			}
		}
		if t.p.isICMP() {
			t.drop(n, "VFP does not translate ICMP, so OutBoundNAT to %s cannot carry it", to)
			return false
		}
		t.src = netip.AddrPortFrom(to, t.src.Port())
		t.srcPod = nil
		t.hop(n, ActionOutboundNAT, "")
		return true
	}
	return true
}

// underlaySource drops a packet about to leave overlay node n unencapsulated
// with a source in the node's pod subnet (the source VIP, or a pod without
// OutBoundNAT): the underlay does not route it back, which is why winkernel
// gives load balancers with node or public IP backends the node address as
// source VIP (kubernetes/kubernetes#79359, #91886). It reports false if it dropped.
func (t *tracer) underlaySource(n *node) bool {
	if n.overlay && prefixesContain(n.subnets, t.src.Addr()) {
		t.drop(n, "overlay: source %s (source VIP or pod address) leaves node %s unencapsulated for %s, and the underlay does not route it back", t.src.Addr(), n.Name, t.route)
		return false
	}
	return true
}

// natExempt reports whether one of the endpoint's OutBoundNAT policies
// exempts ip, which marks ip as in-cluster.
func (e *endpoint) natExempt(ip netip.Addr) bool {
	for _, nat := range e.outboundNAT {
		if prefixesContain(nat.exceptions, ip) {
			return true
		}
	}
	return false
}

func (t *tracer) deliverPod(n *node, ep *endpoint) {
	t.hop(n, ActionDeliver, "endpoint "+ep.ID)
	t.v.Outcome = DeliveredToPod
	t.v.BackendNode, t.v.BackendEndpointID = n.Name, ep.ID
	t.v.Backend = netip.AddrPortFrom(t.route, t.dst.Port())
}

func (t *tracer) deliverHost(n *node) {
	t.hop(n, ActionDeliver, "host")
	t.v.Outcome = DeliveredToHost
	t.v.BackendNode = n.Name
	t.v.Backend = netip.AddrPortFrom(t.route, t.dst.Port())
}

func (t *tracer) missNote() string {
	if len(t.nearMisses) == 0 {
		return ""
	}
	return " (" + strings.Join(t.nearMisses, "; ") + ")"
}
