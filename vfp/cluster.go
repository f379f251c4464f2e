package vfp

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// DefaultVNI is the VXLAN network identifier of an overlay network that
// declares none (Flannel and win-overlay use 4096).
const DefaultVNI uint32 = 4096

// DefaultVXLANPort is the UDP port VXLAN uses without a VxlanPort policy (IANA's).
const DefaultVXLANPort uint16 = 4789

// Node is one Windows node: its name, its own addresses (the host's IPs on
// the node network, which are also the overlay provider addresses), its HNS
// state and the HNS network its pods are on.
type Node struct {
	Name string
	IPs  []netip.Addr
	HNS  *hnslb.Snapshot
	// NetworkName is the pods' HNS network; "" picks the snapshot's only network.
	NetworkName string
	// ExternalVIPs are addresses the caller knows to be external or ingress
	// IPs, external VIPs (frontendMatch) beside those HNS marks with
	// VipExternalIP. No public capture shows HNS echoing that flag (hcn does
	// not declare it; docs/simulator.md), so a listing of a real node may
	// lack it, and a caller that knows the Services (hnsproxy-diag) names them.
	ExternalVIPs []netip.Addr
}

// Cluster is a set of nodes whose HNS state packets are traced through.
// NewCluster indexes the snapshots once; build a new Cluster after the
// state changes. Trace only reads the index, so concurrent traces are safe.
type Cluster struct {
	nodes []*node
}

// node is a Node with its snapshot indexed for lookups.
type node struct {
	Node
	network *hnslb.Network
	overlay bool
	vni     uint32
	port    uint16         // VXLAN UDP port (VxlanPort network policy, else 4789)
	subnets []netip.Prefix // the network's IPAM subnets (the local pod range)
	routes  []subnetRoute  // overlay RemoteSubnetRoute policies
	local   map[netip.Addr]*endpoint
	remote  map[netip.Addr]*endpoint
	byID    map[string]*endpoint // by ID in lower case
	lbs     []*loadBalancer
	// externalVIPs are the frontend VIPs some load balancer of the node
	// carries with VipExternalIP (external and ingress IPs), and the
	// Node's ExternalVIPs: traffic from the wire meets every load balancer
	// on them (frontendMatch).
	externalVIPs map[netip.Addr]bool
}

type subnetRoute struct {
	prefix netip.Prefix
	pa     netip.Addr
	vni    uint32 // 0: the network's
}

// endpoint is an HNS endpoint with its addresses parsed.
type endpoint struct {
	*hnslb.Endpoint
	ips         []netip.Addr
	pa          netip.Addr // ProviderAddress policy, if any
	outboundNAT []outboundNAT
}

type outboundNAT struct {
	ipv6         bool // NatFlagsIPv6: the policy translates IPv6, else IPv4
	vip          netip.Addr
	exceptions   []netip.Prefix
	destinations []netip.Prefix
}

// NewCluster validates and indexes nodes. It fails on state the model cannot
// interpret: a missing snapshot or network, a network type other than
// L2Bridge or Overlay, or addresses that do not parse.
func NewCluster(nodes ...Node) (*Cluster, error) {
	c := &Cluster{}
	seen := map[string]bool{}
	for i := range nodes {
		if nodes[i].Name == "" {
			return nil, fmt.Errorf("vfp: node %d has no name", i)
		}
		if seen[nodes[i].Name] {
			return nil, fmt.Errorf("vfp: node %q given twice", nodes[i].Name)
		}
		seen[nodes[i].Name] = true
		n, err := indexNode(nodes[i])
		if err != nil {
			return nil, fmt.Errorf("vfp: node %q: %w", nodes[i].Name, err)
		}
		c.nodes = append(c.nodes, n)
	}
	return c, nil
}

func indexNode(in Node) (*node, error) {
	if in.HNS == nil {
		return nil, fmt.Errorf("no HNS snapshot")
	}
	n := &node{Node: in, local: map[netip.Addr]*endpoint{}, remote: map[netip.Addr]*endpoint{}, byID: map[string]*endpoint{}}
	n.IPs = make([]netip.Addr, len(in.IPs))
	for i, ip := range in.IPs {
		if !ip.IsValid() {
			return nil, fmt.Errorf("node address %d is not valid", i)
		}
		n.IPs[i] = ip.Unmap()
	}
	if err := n.findNetwork(); err != nil {
		return nil, err
	}
	for i := range in.HNS.Endpoints {
		if err := n.addEndpoint(&in.HNS.Endpoints[i]); err != nil {
			return nil, err
		}
	}
	for i := range in.HNS.LoadBalancers {
		rules, err := parseLoadBalancer(&in.HNS.LoadBalancers[i])
		if err != nil {
			return nil, err
		}
		for _, lb := range rules {
			n.lbs = append(n.lbs, lb)
			if lb.portFlag(hnslb.PortMappingFlagsVipExternalIP) {
				n.markExternal(lb.vips)
			}
		}
	}
	n.markExternal(in.ExternalVIPs)
	return n, nil
}

// markExternal adds vips to the node's external VIPs.
func (n *node) markExternal(vips []netip.Addr) {
	for _, v := range vips {
		if n.externalVIPs == nil {
			n.externalVIPs = map[netip.Addr]bool{}
		}
		n.externalVIPs[v.Unmap()] = true
	}
}

func (n *node) findNetwork() error {
	nets := n.HNS.Networks
	for i := range nets {
		if nets[i].Name == n.NetworkName || (n.NetworkName == "" && len(nets) == 1) {
			n.network = &nets[i]
			break
		}
	}
	if n.network == nil {
		return fmt.Errorf("HNS network %q not found among %d networks", n.NetworkName, len(nets))
	}
	switch n.network.Type {
	case hnslb.NetworkTypeL2Bridge:
	case hnslb.NetworkTypeOverlay:
		n.overlay = true
	default:
		return fmt.Errorf("network %q has type %q; the model knows L2Bridge and Overlay", n.network.Name, n.network.Type)
	}
	n.vni = DefaultVNI
	n.port = vxlanPort(n.network.Policies)
	for _, ipam := range n.network.Ipams {
		for _, s := range ipam.Subnets {
			if s.IpAddressPrefix != "" {
				p, err := netip.ParsePrefix(s.IpAddressPrefix)
				if err != nil {
					return fmt.Errorf("network subnet: %w", err)
				}
				n.subnets = append(n.subnets, p.Masked())
			}
			if vsid := subnetVSID(s.Policies); vsid != 0 {
				n.vni = vsid
			}
		}
	}
	for _, r := range n.network.RemoteSubnetRoutes() {
		p, err := netip.ParsePrefix(r.DestinationPrefix)
		if err != nil {
			return fmt.Errorf("RemoteSubnetRoute: %w", err)
		}
		pa, err := netip.ParseAddr(r.ProviderAddress)
		if err != nil {
			return fmt.Errorf("RemoteSubnetRoute %s: provider address: %w", p, err)
		}
		n.routes = append(n.routes, subnetRoute{prefix: p.Masked(), pa: pa.Unmap(), vni: uint32(r.IsolationId)})
	}
	return nil
}

// vxlanPort reads an overlay network's VxlanPort policy, else DefaultVXLANPort.
func vxlanPort(policies []hnslb.NetworkPolicy) uint16 {
	for _, p := range policies {
		var s hnslb.VxlanPortPolicySetting
		if p.Type == hnslb.NetworkPolicyVxlanPort && hnslb.DecodeSettings(p.Settings, &s) == nil && s.Port != 0 {
			return s.Port
		}
	}
	return DefaultVXLANPort
}

// subnetVSID reads the VSID (VXLAN id) subnet policy HNS overlay networks
// carry: {"Type":"VSID","Settings":{"IsolationId":4096}}.
func subnetVSID(policies []json.RawMessage) uint32 {
	for _, raw := range policies {
		var p struct {
			Type     string
			Settings hnslb.VsidPolicySetting
		}
		if json.Unmarshal(raw, &p) == nil && p.Type == hnslb.SubnetPolicyVSID {
			return p.Settings.IsolationId
		}
	}
	return 0
}

func (n *node) addEndpoint(e *hnslb.Endpoint) error {
	// GUIDs compare without regard to case: HNS may answer them in upper
	// case (its v1 API does; docs/simulator.md, echo upper-guids), in one
	// field and not another.
	if e.HostComputeNetwork != "" && !strings.EqualFold(e.HostComputeNetwork, n.network.ID) {
		return nil // another network's endpoint: not on this vSwitch path
	}
	ep := &endpoint{Endpoint: e}
	for _, c := range e.IpConfigurations {
		ip, err := netip.ParseAddr(c.IpAddress)
		if err != nil {
			return fmt.Errorf("endpoint %s: %w", e.ID, err)
		}
		ep.ips = append(ep.ips, ip.Unmap())
	}
	if pa := e.ProviderAddress(); pa != "" {
		ip, err := netip.ParseAddr(pa)
		if err != nil {
			return fmt.Errorf("endpoint %s: provider address: %w", e.ID, err)
		}
		ep.pa = ip.Unmap()
	}
	nats, err := parseOutboundNAT(e)
	if err != nil {
		return err
	}
	ep.outboundNAT = nats
	n.byID[strings.ToLower(e.ID)] = ep
	into := n.local
	if e.IsRemote() {
		into = n.remote
	}
	for _, ip := range ep.ips {
		into[ip] = ep
	}
	return nil
}

func parseOutboundNAT(e *hnslb.Endpoint) ([]outboundNAT, error) {
	var out []outboundNAT
	for _, p := range e.Policies {
		if p.Type != hnslb.EndpointPolicyOutBoundNAT {
			continue
		}
		var s hnslb.OutboundNatPolicySetting
		if err := hnslb.DecodeSettings(p.Settings, &s); err != nil {
			return nil, fmt.Errorf("endpoint %s: OutBoundNAT: %w", e.ID, err)
		}
		nat := outboundNAT{ipv6: s.Flags&hnslb.NatFlagsIPv6 != 0}
		var err error
		if s.VirtualIP != "" {
			if nat.vip, err = netip.ParseAddr(s.VirtualIP); err != nil {
				return nil, fmt.Errorf("endpoint %s: OutBoundNAT VirtualIP: %w", e.ID, err)
			}
			nat.vip = nat.vip.Unmap()
		}
		if nat.exceptions, err = parsePrefixes(s.Exceptions); err != nil {
			return nil, fmt.Errorf("endpoint %s: OutBoundNAT exceptions: %w", e.ID, err)
		}
		if nat.destinations, err = parsePrefixes(s.Destinations); err != nil {
			return nil, fmt.Errorf("endpoint %s: OutBoundNAT destinations: %w", e.ID, err)
		}
		out = append(out, nat)
	}
	return out, nil
}

// parsePrefixes accepts CIDRs and single addresses, as HNS does in
// OutBoundNAT exception lists.
func parsePrefixes(ss []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range ss {
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		ip, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("%q is neither a prefix nor an address", s)
		}
		ip = ip.Unmap()
		out = append(out, netip.PrefixFrom(ip, ip.BitLen()))
	}
	return out, nil
}

func prefixesContain(ps []netip.Prefix, ip netip.Addr) bool {
	for _, p := range ps {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// hasIP reports whether ip is one of the node's own addresses.
func (n *node) hasIP(ip netip.Addr) bool {
	for _, a := range n.IPs {
		if a == ip {
			return true
		}
	}
	return false
}

// ipOfFamily returns the node's first address of ip's family.
func (n *node) ipOfFamily(ip netip.Addr) (netip.Addr, bool) {
	for _, a := range n.IPs {
		if a.Is4() == ip.Is4() {
			return a, true
		}
	}
	return netip.Addr{}, false
}

// addrOfFamily returns the endpoint's address of want's family.
func (e *endpoint) addrOfFamily(want netip.Addr) (netip.Addr, bool) {
	for _, ip := range e.ips {
		if ip.Is4() == want.Is4() {
			return ip, true
		}
	}
	return netip.Addr{}, false
}

func (c *Cluster) nodeByName(name string) *node {
	for _, n := range c.nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// nodeWithIP returns the node that has ip as one of its own addresses.
func (c *Cluster) nodeWithIP(ip netip.Addr) *node {
	for _, n := range c.nodes {
		if n.hasIP(ip) {
			return n
		}
	}
	return nil
}

// podNode returns the node with a local endpoint holding ip.
func (c *Cluster) podNode(ip netip.Addr) (*node, *endpoint) {
	for _, n := range c.nodes {
		if ep := n.local[ip]; ep != nil {
			return n, ep
		}
	}
	return nil, nil
}
