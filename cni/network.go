package cni

import (
	"context"
	"encoding/json"
	"net/netip"
	"strings"

	current "github.com/containernetworking/cni/pkg/types/100"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// network is the configured HNS network, or nil if there is none, looked
// up once per command. It settles a mode the configuration left open from
// the network's type, and refuses a network of another type, except for a
// release (anyNetworkType).
func (s *session) network(ctx context.Context) (*hnslb.Network, error) {
	if s.net != nil {
		return s.net, nil
	}
	network, err := s.hns.network(ctx, s.conf.Network)
	if err != nil || network == nil {
		return nil, err
	}
	if s.conf.anyNetworkType {
		s.net = network
		return network, nil
	}
	if s.conf.Mode == "" {
		if s.conf.Mode = modeOfType(network.Type); s.conf.Mode == "" {
			return nil, invalidConfig("HNS network %q is of type %s; hnscni wires pods into L2Bridge (or L2Tunnel) and Overlay networks", network.Name, network.Type)
		}
	}
	if err := checkNetworkType(network, s.conf.Mode); err != nil {
		return nil, err
	}
	s.net = network
	return network, nil
}

// subnetOf is the network subnet holding a, if any.
func subnetOf(network *hnslb.Network, a netip.Addr) netip.Prefix {
	for _, p := range networkSubnets(network) {
		if p.Contains(a) {
			return p
		}
	}
	return netip.Prefix{}
}

// firstSubnet is the network's first IPv4 subnet: the node's pod subnet.
func firstSubnet(network *hnslb.Network) netip.Prefix {
	for _, p := range networkSubnets(network) {
		if p.Addr().Is4() {
			return p
		}
	}
	return netip.Prefix{}
}

func networkSubnets(network *hnslb.Network) []netip.Prefix {
	var out []netip.Prefix
	for _, ipam := range network.Ipams {
		for _, s := range ipam.Subnets {
			if p, err := netip.ParsePrefix(s.IpAddressPrefix); err == nil {
				out = append(out, p.Masked())
			}
		}
	}
	return out
}

// ipamGateway is IPAM's gateway, else the subnet's first address.
func ipamGateway(ipc *current.IPConfig, subnet netip.Prefix) netip.Addr {
	if gw, ok := ipamGatewayIn(ipc, subnet); ok {
		return gw
	}
	return subnet.Addr().Next()
}

// ipamGatewayIn is the gateway IPAM gave for an address, if it has one in
// the address's subnet.
func ipamGatewayIn(ipc *current.IPConfig, subnet netip.Prefix) (netip.Addr, bool) {
	if ipc == nil {
		return netip.Addr{}, false
	}
	gw, ok := netip.AddrFromSlice(ipc.Gateway)
	return gw.Unmap(), ok && subnet.Contains(gw.Unmap())
}

// gateway is the pod's next hop. On l2bridge, win-bridge (a configuration
// of type win-bridge) always uses the subnet's second address (Flannel's
// host-gw puts its bridge endpoint there), as sdnbridge does for IPv4
// under forceBridgeGateway. Otherwise sdnbridge and sdnoverlay take IPAM's
// gateway, and additionalRoutes' under gatewayFromAdditionalRoutes only
// where IPAM gave none (common/core/network.go allocateIpam sets IPAM's,
// forces IPv4's, and addEndpointGatewaysFromConfig fills what is unset).
// Otherwise: the network subnet's default route (set by whoever
// provisioned the node), else IPAM's gateway, else the subnet's first
// address.
func (n *NetConf) gateway(network *hnslb.Network, ipc *current.IPConfig, subnet netip.Prefix) netip.Addr {
	forced := strings.EqualFold(n.Type, "win-bridge") || n.OptionalFlags.ForceBridgeGateway && subnet.Addr().Is4()
	if !n.overlay() && forced {
		return subnet.Addr().Next().Next()
	}
	if gw, ok := ipamGatewayIn(ipc, subnet); ok && n.family == familySDN {
		return gw
	}
	if n.OptionalFlags.GatewayFromAdditionalRoutes {
		for _, r := range n.AdditionalRoutes {
			ones, _ := r.Dst.Mask.Size()
			gw, ok := netip.AddrFromSlice(r.GW)
			if ok && ones == 0 && gw.Unmap().Is4() == subnet.Addr().Is4() {
				return gw.Unmap()
			}
		}
	}
	for _, ipam := range network.Ipams {
		for _, s := range ipam.Subnets {
			p, err := netip.ParsePrefix(s.IpAddressPrefix)
			if err != nil || p.Masked() != subnet {
				continue
			}
			for _, r := range s.Routes {
				if gw, err := netip.ParseAddr(r.NextHop); err == nil && subnet.Contains(gw) {
					return gw
				}
			}
		}
	}
	return ipamGateway(ipc, subnet)
}

// providerAddress is the node's overlay PA: the network's, else the configured one.
func providerAddress(network *hnslb.Network, n *NetConf) (netip.Addr, error) {
	if pa := network.ProviderAddress(); pa != "" {
		a, err := netip.ParseAddr(pa)
		if err != nil {
			return netip.Addr{}, internal("HNS network %q has a bad ProviderAddress %q", network.Name, pa)
		}
		return a, nil
	}
	if n.providerAddress.IsValid() {
		return n.providerAddress, nil
	}
	return netip.Addr{}, invalidConfig("overlay network %q has no ProviderAddress policy and the configuration no providerAddress", network.Name)
}

// cannotCreateNetwork is why ADD cannot create the configured network the
// node lacks (code 7), or nil. A network created without a mode, without
// IPAM (HNS assigns from the network's subnet) or, on overlay, without a
// provider address would stay broken for every later pod, and "usePodCidr"
// takes the subnet from the network itself. STATUS asks the same.
func (s *session) cannotCreateNetwork() error {
	n := s.conf
	switch {
	case n.Mode == "":
		return invalidConfig("HNS network %q does not exist; creating it needs \"mode\" (or a plugin type that names one)", n.Network)
	case n.hnsIPAM():
		return invalidConfig("HNS network %q does not exist; without \"ipam\" HNS assigns addresses from the network's subnet, so the network must exist first", n.Network)
	case n.overlay() && !n.providerAddress.IsValid():
		return invalidConfig("HNS network %q does not exist, and creating an overlay network needs providerAddress", n.Network)
	}
	_, _, podCIDR, err := podCIDRConfig(s.args.StdinData)
	if err != nil {
		return err
	}
	if podCIDR {
		return invalidConfig("HNS network %q does not exist; ipam subnet %q takes the network's subnet, so the network must exist first", n.Network, podCIDRPlaceholder)
	}
	return nil
}

// createNetwork creates the configured network when the node has none, as
// a provisioning script would, from the subnets IPAM allocates from: on
// overlay with the configured VNI (VSID subnet policy) and, if not the
// default 4789, VXLAN port (VxlanPort network policy); with sdnbridge's
// AdditionalArgs NetworkPolicy entries.
func (c hnsClient) createNetwork(ctx context.Context, n *NetConf, ipcs []*current.IPConfig) (*hnslb.Network, error) {
	doc := &hnslb.Network{
		Name:          n.Network,
		Type:          hnslb.NetworkTypeL2Bridge,
		Ipams:         []hnslb.Ipam{{Type: "Static"}},
		SchemaVersion: hnslb.V2,
	}
	for _, ipc := range ipcs {
		_, subnet := prefixOf(ipc.Address)
		gw := ipamGateway(ipc, subnet)
		doc.Ipams[0].Subnets = append(doc.Ipams[0].Subnets, hnslb.Subnet{
			IpAddressPrefix: subnet.String(),
			Routes:          []hnslb.Route{{NextHop: gw.String(), DestinationPrefix: defaultRoute(gw).String()}},
		})
	}
	if n.overlay() {
		doc.Type = hnslb.NetworkTypeOverlay
		doc.Ipams[0].Subnets[0].Policies = []json.RawMessage{hnslb.NewVSIDSubnetPolicy(n.VXLANVNI)}
		if n.providerAddress.IsValid() {
			doc.Policies = append(doc.Policies, hnslb.NewNetworkPolicy(hnslb.NetworkPolicyProviderAddress,
				hnslb.ProviderAddressNetworkPolicySetting{ProviderAddress: n.providerAddress.String()}))
		}
		if n.VXLANPort != defaultVXLANPort {
			doc.Policies = append(doc.Policies, hnslb.NewNetworkPolicy(hnslb.NetworkPolicyVxlanPort,
				hnslb.VxlanPortPolicySetting{Port: n.VXLANPort}))
		}
	}
	extra, err := n.networkPolicyList()
	if err != nil {
		return nil, err
	}
	doc.Policies = append(doc.Policies, extra...)
	created, err := c.CreateNetwork(ctx, doc)
	if hnslb.IsAlreadyExists(err) {
		// Another ADD created it meanwhile.
		if created, err = c.GetNetworkByName(ctx, n.Network); err == nil {
			return created, checkNetworkType(created, n.Mode)
		}
	}
	if err != nil {
		return nil, hnsError("create HNS network "+n.Network, err)
	}
	return created, nil
}

// networkPolicyList decodes AdditionalArgs' NetworkPolicy values for a
// network hnscni creates.
func (n *NetConf) networkPolicyList() ([]hnslb.NetworkPolicy, error) {
	var out []hnslb.NetworkPolicy
	for i, raw := range n.networkPolicies {
		var p hnslb.NetworkPolicy
		if err := json.Unmarshal(raw, &p); err != nil || p.Type == "" {
			return nil, invalidConfig("AdditionalArgs NetworkPolicy %d: want {\"Type\", \"Settings\"}", i)
		}
		out = append(out, p)
	}
	return out, nil
}
