package vfp

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"net/netip"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

// loadBalancer is one port mapping of an HNS load balancer, with its
// addresses parsed.
type loadBalancer struct {
	*hnslb.LoadBalancer
	vips      []netip.Addr // empty: NodePort, applies to the node's own addresses
	sourceVIP netip.Addr   // zero when unset
	pm        hnslb.PortMapping
}

// parseLoadBalancer is a rule for each of l's port mappings. hnsproxy and
// kube-proxy make one; a failed create can leave a load balancer with none
// (kubernetes/kubernetes#141488), which matches no packet; another agent's
// with several is taken as one rule per mapping.
func parseLoadBalancer(l *hnslb.LoadBalancer) ([]*loadBalancer, error) {
	lb := &loadBalancer{LoadBalancer: l}
	for _, s := range l.FrontendVIPs {
		ip, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("load balancer %s: frontend VIP: %w", l.ID, err)
		}
		lb.vips = append(lb.vips, ip.Unmap())
	}
	if l.SourceVIP != "" {
		ip, err := netip.ParseAddr(l.SourceVIP)
		if err != nil {
			return nil, fmt.Errorf("load balancer %s: source VIP: %w", l.ID, err)
		}
		lb.sourceVIP = ip.Unmap()
	}
	rules := make([]*loadBalancer, len(l.PortMappings))
	for i, pm := range l.PortMappings {
		rule := *lb
		rule.pm = pm
		rules[i] = &rule
	}
	return rules, nil
}

func (lb *loadBalancer) isDSR() bool { return lb.Flags&hnslb.LoadBalancerFlagsDSR != 0 }
func (lb *loadBalancer) nodePort() bool {
	return len(lb.vips) == 0
}
func (lb *loadBalancer) portFlag(f hnslb.PortMappingFlags) bool { return lb.pm.Flags&f != 0 }

// internalPort is the backend port; HNS treats an unset internal port as the external one.
func (lb *loadBalancer) internalPort() uint16 {
	if lb.pm.InternalPort == 0 {
		return lb.pm.ExternalPort
	}
	return lb.pm.InternalPort
}

// origin is where a packet meets a node's load balancers.
type origin uint8

const (
	originPod  origin = iota // at the source pod's vSwitch port
	originHost               // at the host vNIC, sent by the node itself
	originWire               // arriving from outside the node (external client or another node)
)

// frontendMatch reports whether dst addresses lb's frontend on node n.
// From outside the node (external clients, other nodes) a VIP frontend is
// reachable only when it is one of the node's external VIPs, those some
// load balancer carries with VipExternalIP (externalIPs, ingress IPs); then
// every load balancer on it matches, with that flag or without: winkernel's
// health-check load balancer on an ingress IP (--forward-healthcheck-vip)
// has no VipExternalIP and serves the cloud's probes, which arrive from the
// wire (kubernetes/kubernetes#99287), and the flag itself asks HNS to keep
// connections on their backend (kubernetes/kubernetes#113742), not to
// admit outside traffic. A ClusterIP frontend, on no external load
// balancer, is only reachable from inside the node.
func (lb *loadBalancer) frontendMatch(n *node, dst netip.Addr, o origin) bool {
	if lb.nodePort() {
		return n.hasIP(dst)
	}
	if o == originWire && !n.externalVIPs[dst] {
		return false
	}
	for _, v := range lb.vips {
		if v == dst {
			return true
		}
	}
	return false
}

// matchLB finds the load balancer on n for dst. VIP load balancers win
// over NodePort ones (an externalIP equal to a node address is more
// specific). When none matches, nearMisses explains load balancers whose
// frontend address matched but whose family, protocol or port did not.
func (n *node) matchLB(dst netip.AddrPort, proto uint32, o origin) (match *loadBalancer, nearMisses []string) {
	var nodePort *loadBalancer
	for _, lb := range n.lbs {
		if !lb.frontendMatch(n, dst.Addr(), o) {
			continue
		}
		switch {
		case lb.pm.ExternalPort != dst.Port():
			if !lb.nodePort() { // NodePort load balancers on other ports are no near miss
				nearMisses = append(nearMisses, fmt.Sprintf("load balancer %s listens on port %d, not %d", lb.ID, lb.pm.ExternalPort, dst.Port()))
			}
		case lb.IsIPv6() != dst.Addr().Is6():
			nearMisses = append(nearMisses, fmt.Sprintf("load balancer %s has the IPv6 flag %v but the packet is %s", lb.ID, lb.IsIPv6(), intent.FamilyOf(dst.Addr())))
		case lb.pm.Protocol != proto:
			nearMisses = append(nearMisses, fmt.Sprintf("load balancer %s is for %s, not %s", lb.ID, protoName(lb.pm.Protocol), protoName(proto)))
		case lb.nodePort():
			if nodePort == nil {
				nodePort = lb
			}
		default:
			return lb, nil
		}
	}
	if nodePort != nil {
		return nodePort, nil
	}
	return nil, nearMisses
}

// pickBackend returns the index of the backend for the packet among n
// backends. DistributionNone hashes the 5-tuple (one connection sticks to
// one backend); SourceIPProtocol hashes source IP and protocol; SourceIP
// hashes the source IP only, so one client always gets the same backend.
func pickBackend(d hnslb.Distribution, p Packet, n int) int {
	h := fnv.New64a()
	src := p.Src.Addr().As16()
	h.Write(src[:])
	switch d {
	case hnslb.DistributionSourceIP:
	case hnslb.DistributionSourceIPProtocol:
		h.Write(binary.BigEndian.AppendUint32(nil, p.Protocol))
	default:
		dst := p.Dst.Addr().As16()
		h.Write(dst[:])
		var b []byte
		b = binary.BigEndian.AppendUint16(b, p.Src.Port())
		b = binary.BigEndian.AppendUint16(b, p.Dst.Port())
		b = binary.BigEndian.AppendUint32(b, p.Protocol)
		h.Write(b)
	}
	return int(h.Sum64() % uint64(n))
}

func protoName(p uint32) string {
	switch p {
	case hnslb.ProtocolTCP:
		return "TCP"
	case hnslb.ProtocolUDP:
		return "UDP"
	case ProtocolICMP:
		return "ICMP"
	case ProtocolICMPv6:
		return "ICMPv6"
	}
	return fmt.Sprintf("protocol %d", p)
}
