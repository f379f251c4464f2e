package main

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"

	"github.com/spf13/pflag"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// defaultVNI is the VXLAN id Flannel and the Windows overlay scripts use.
const defaultVNI = 4096

// networkOptions describe the node's pod network, which a provisioning
// script (Flannel, sig-windows-tools) creates on a real Windows node before
// any pod starts.
type networkOptions struct {
	name            string
	kind            string
	subnets         []string
	gateway         string
	remoteSubnets   []string
	providerAddress string
	vni             uint16
	vxlanPort       uint16
}

func (o *networkOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.name, "network-name", "", "create this HNS network at start (empty: none)")
	fs.StringVar(&o.kind, "network-type", "l2bridge", "l2bridge or overlay")
	fs.StringSliceVar(&o.subnets, "subnet", nil, "the node's pod subnet, e.g. 10.244.1.0/24; a dual-stack l2bridge node gives one per family (repeatable)")
	fs.StringVar(&o.gateway, "gateway", "", "the pods' gateway in the subnet of its family (default: each subnet's first address)")
	fs.StringSliceVar(&o.remoteSubnets, "remote-subnet", nil, "overlay: CIDR=PA of another node's pod subnet (repeatable)")
	fs.StringVar(&o.providerAddress, "provider-address", "", "overlay: this node's provider address (default: the first --node-ip)")
	fs.Uint16Var(&o.vni, "vni", defaultVNI, "overlay: VXLAN network id")
	fs.Uint16Var(&o.vxlanPort, "vxlan-port", 4789, "overlay: VXLAN UDP port (a VxlanPort network policy when not 4789)")
}

// document builds the HNS network from the flags. nodeIPs supply the
// default provider address.
func (o *networkOptions) document(nodeIPs []netip.Addr) (*hnslb.Network, netip.Addr, error) {
	var pa netip.Addr
	subnets, err := o.ipamSubnets()
	if err != nil {
		return nil, pa, err
	}
	n := &hnslb.Network{
		Name:          o.name,
		Ipams:         []hnslb.Ipam{{Type: "Static", Subnets: subnets}},
		SchemaVersion: hnslb.V2,
	}
	switch strings.ToLower(o.kind) {
	case "l2bridge":
		n.Type = hnslb.NetworkTypeL2Bridge
		if len(o.remoteSubnets) > 0 || o.providerAddress != "" {
			return nil, pa, fmt.Errorf("--remote-subnet and --provider-address are for overlay networks")
		}
		return n, pa, nil
	case "overlay":
		n.Type = hnslb.NetworkTypeOverlay
		if len(subnets) != 1 || !netip.MustParsePrefix(subnets[0].IpAddressPrefix).Addr().Is4() {
			return nil, pa, fmt.Errorf("--subnet: an overlay network has one IPv4 subnet (HNS overlay carries no IPv6)")
		}
	default:
		return nil, pa, fmt.Errorf("--network-type %q: want l2bridge or overlay", o.kind)
	}
	switch {
	case o.providerAddress != "":
		if pa, err = netip.ParseAddr(o.providerAddress); err != nil {
			return nil, pa, fmt.Errorf("--provider-address: %v", err)
		}
	case len(nodeIPs) > 0:
		pa = nodeIPs[0]
	default:
		return nil, pa, fmt.Errorf("an overlay network needs --provider-address or --node-ip")
	}
	n.Ipams[0].Subnets[0].Policies = []json.RawMessage{hnslb.NewVSIDSubnetPolicy(uint32(o.vni))}
	routes, err := parseRemoteSubnets(o.remoteSubnets, o.vni)
	if err != nil {
		return nil, pa, err
	}
	n.Policies = overlayPolicies(pa, routes)
	if o.vxlanPort != 0 && o.vxlanPort != 4789 {
		n.Policies = append(n.Policies, hnslb.NewNetworkPolicy(hnslb.NetworkPolicyVxlanPort, hnslb.VxlanPortPolicySetting{Port: o.vxlanPort}))
	}
	return n, pa, nil
}

// ipamSubnets are the --subnet flags as HNS subnets, at most one per family,
// each with a default route through its gateway.
func (o *networkOptions) ipamSubnets() ([]hnslb.Subnet, error) {
	if len(o.subnets) == 0 {
		return nil, fmt.Errorf("--subnet is required with --network-name")
	}
	var gateway netip.Addr
	if o.gateway != "" {
		var err error
		if gateway, err = netip.ParseAddr(o.gateway); err != nil {
			return nil, fmt.Errorf("--gateway %q: %v", o.gateway, err)
		}
	}
	var out []hnslb.Subnet
	seen := map[bool]bool{}
	usedGateway := !gateway.IsValid()
	for _, s := range o.subnets {
		subnet, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, fmt.Errorf("--subnet %q: %v", s, err)
		}
		subnet = subnet.Masked()
		if seen[subnet.Addr().Is4()] {
			return nil, fmt.Errorf("--subnet %q: a second subnet of one IP family", s)
		}
		seen[subnet.Addr().Is4()] = true
		gw, def := subnet.Addr().Next(), "0.0.0.0/0"
		if gateway.IsValid() && subnet.Contains(gateway) {
			gw, usedGateway = gateway, true
		}
		if gw.Is6() {
			def = "::/0"
		}
		out = append(out, hnslb.Subnet{
			IpAddressPrefix: subnet.String(),
			Routes:          []hnslb.Route{{NextHop: gw.String(), DestinationPrefix: def}},
		})
	}
	if !usedGateway {
		return nil, fmt.Errorf("--gateway %q: must be an address in a --subnet", o.gateway)
	}
	return out, nil
}

// overlayPolicies are an overlay network's own policies: its provider
// address, its distributed router MAC, and a route per remote pod subnet.
func overlayPolicies(pa netip.Addr, routes []hnslb.RemoteSubnetRoutePolicySetting) []hnslb.NetworkPolicy {
	ps := []hnslb.NetworkPolicy{
		hnslb.NewNetworkPolicy(hnslb.NetworkPolicyProviderAddress, hnslb.ProviderAddressNetworkPolicySetting{ProviderAddress: pa.String()}),
		hnslb.NewNetworkPolicy(hnslb.NetworkPolicyDrMacAddress, hnslb.DrMacAddressNetworkPolicySetting{Address: drMAC(pa)}),
	}
	for _, r := range routes {
		ps = append(ps, hnslb.NewNetworkPolicy(hnslb.NetworkPolicyRemoteSubnetRoute, r))
	}
	return ps
}

// drMAC is a node's distributed router MAC, derived from its provider
// address the way Flannel derives VTEP MACs (stable, unique per node).
func drMAC(pa netip.Addr) string {
	b := pa.As16()
	return fmt.Sprintf("0E-2A-%02X-%02X-%02X-%02X", b[12], b[13], b[14], b[15])
}

// parseRemoteSubnets reads CIDR=PA pairs.
func parseRemoteSubnets(specs []string, vni uint16) ([]hnslb.RemoteSubnetRoutePolicySetting, error) {
	var out []hnslb.RemoteSubnetRoutePolicySetting
	for _, s := range specs {
		cidr, paStr, ok := strings.Cut(s, "=")
		if !ok {
			return nil, fmt.Errorf("remote subnet %q: want CIDR=PROVIDER_ADDRESS", s)
		}
		p, err := netip.ParsePrefix(cidr)
		if err != nil {
			return nil, fmt.Errorf("remote subnet %q: %v", s, err)
		}
		pa, err := netip.ParseAddr(paStr)
		if err != nil {
			return nil, fmt.Errorf("remote subnet %q: provider address: %v", s, err)
		}
		out = append(out, hnslb.RemoteSubnetRoutePolicySetting{
			DestinationPrefix:           p.Masked().String(),
			IsolationId:                 vni,
			ProviderAddress:             pa.String(),
			DistributedRouterMacAddress: drMAC(pa),
		})
	}
	return out, nil
}

// withRemoteSubnets replaces a network's RemoteSubnetRoute policies.
func withRemoteSubnets(ps []hnslb.NetworkPolicy, routes []hnslb.RemoteSubnetRoutePolicySetting) []hnslb.NetworkPolicy {
	var out []hnslb.NetworkPolicy
	for _, p := range ps {
		if p.Type != hnslb.NetworkPolicyRemoteSubnetRoute {
			out = append(out, p)
		}
	}
	for _, r := range routes {
		out = append(out, hnslb.NewNetworkPolicy(hnslb.NetworkPolicyRemoteSubnetRoute, r))
	}
	return out
}
