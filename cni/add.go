package cni

import (
	"context"
	"encoding/json"
	"net"
	"net/netip"

	"github.com/containernetworking/cni/pkg/types"
	current "github.com/containernetworking/cni/pkg/types/100"
	"github.com/containernetworking/plugins/pkg/ipam"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// defaultVNI is the VXLAN id of an overlay network hnscni creates (as Flannel's).
const defaultVNI = 4096

func cmdAdd(ctx context.Context, s *session) error {
	nsID, err := namespaceID(s.args.Netns)
	if err != nil {
		return err
	}
	var undo undoStack
	result, err := s.add(ctx, nsID, &undo)
	if err != nil {
		undo.run()
		return err
	}
	return types.PrintResult(result, s.conf.CNIVersion)
}

// undoStack runs compensations of a failed ADD in reverse order, each with
// its own deadline so an expired ADD still cleans up.
type undoStack []func(context.Context)

func (u *undoStack) push(f func(context.Context)) { *u = append(*u, f) }

func (u undoStack) run() {
	ctx, cancel := withTimeout()
	defer cancel()
	for i := len(u) - 1; i >= 0; i-- {
		u[i](ctx)
	}
}

func (s *session) add(ctx context.Context, nsID string, undo *undoStack) (*current.Result, error) {
	n, c := s.conf, s.hns
	if _, err := c.GetNamespaceByID(ctx, nsID); err != nil {
		if hnslb.IsNotFound(err) {
			return nil, types.NewError(types.ErrInvalidNetNS, "HNS namespace does not exist", nsID)
		}
		return nil, hnsError("get HNS namespace "+nsID, err)
	}
	network, err := c.network(ctx, n.Network)
	if err != nil {
		return nil, err
	}
	if network != nil {
		if err := checkNetworkType(network, n.Mode); err != nil {
			return nil, err
		}
	} else if n.overlay() && !n.providerAddress.IsValid() {
		// Refuse before creating anything: an overlay network without the
		// node's provider address would stay broken for every later pod.
		return nil, invalidConfig("HNS network %q does not exist, and creating an overlay network needs providerAddress", n.Network)
	}
	name := endpointName(s.args.ContainerID, s.args.IfName)
	// An endpoint left by an interrupted ADD of this attachment goes first,
	// with its address: IPAM refuses a second address for one attachment.
	stale, err := c.removeEndpoint(ctx, name)
	if err != nil {
		return nil, err
	}
	if stale {
		if err := ipam.ExecDel(n.IPAM.Type, s.args.StdinData); err != nil {
			return nil, err
		}
	}

	ipamResult, err := ipam.ExecAdd(n.IPAM.Type, s.args.StdinData)
	if err != nil {
		return nil, err
	}
	undo.push(func(context.Context) { _ = ipam.ExecDel(n.IPAM.Type, s.args.StdinData) })
	ipcs, err := podAddresses(ipamResult)
	if err != nil {
		return nil, err
	}
	if n.overlay() {
		for _, ipc := range ipcs {
			if ipc.Address.IP.To4() == nil {
				return nil, invalidConfig("IPAM gave %s, an IPv6 address: HNS overlay networks carry IPv4 only; use l2bridge for dual-stack pods", ipc.Address.IP)
			}
		}
	}

	if network == nil {
		if network, err = c.createNetwork(ctx, n, ipcs); err != nil {
			return nil, err
		}
	}
	spec := endpointSpec{name: name}
	for _, ipc := range ipcs {
		addr, subnet := prefixOf(ipc.Address)
		spec.addrs = append(spec.addrs, podAddr{addr: netip.PrefixFrom(addr, subnet.Bits()), gateway: gateway(network, ipc, subnet)})
	}
	if n.overlay() {
		if spec.providerAddress, err = providerAddress(network, n); err != nil {
			return nil, err
		}
	}
	if n.LoopbackDSR {
		v, err := c.Version(ctx)
		if err != nil {
			return nil, hnsError("get HNS version", err)
		}
		// Without DSR support HNS rejects the policy; the pod then merely
		// cannot reach itself through a service VIP.
		spec.loopbackDSR = hnslb.FeaturesFor(v).DSR
	}

	// Undo by name, re-read: a failed create or attach may still have
	// happened in HNS (a reply lost on the way back).
	undo.push(func(ctx context.Context) { _, _ = c.removeEndpoint(ctx, name) })
	ep, err := c.CreateEndpoint(ctx, network.ID, n.buildEndpoint(spec))
	if err != nil {
		return nil, hnsError("create HNS endpoint "+name, err)
	}
	if err := c.AddNamespaceEndpoint(ctx, nsID, ep.ID); err != nil {
		return nil, hnsError("attach HNS endpoint "+name+" to namespace "+nsID, err)
	}

	result := &current.Result{
		CNIVersion: current.ImplementedSpecVersion,
		Interfaces: []*current.Interface{{Name: s.args.IfName, Mac: cniMAC(ep.MacAddress), Sandbox: s.args.Netns}},
		DNS:        n.dns(),
	}
	for _, a := range spec.addrs {
		addr := a.addr.Addr()
		gwIP := net.IP(a.gateway.AsSlice())
		result.IPs = append(result.IPs, &current.IPConfig{
			Interface: current.Int(0),
			Address:   net.IPNet{IP: net.IP(addr.AsSlice()), Mask: net.CIDRMask(a.addr.Bits(), addr.BitLen())},
			Gateway:   gwIP,
		})
		dst := defaultRoute(addr)
		result.Routes = append(result.Routes, &types.Route{
			Dst: net.IPNet{IP: net.IP(dst.Addr().AsSlice()), Mask: net.CIDRMask(0, addr.BitLen())},
			GW:  gwIP,
		})
	}
	return result, nil
}

// podAddresses are the pod's addresses from the IPAM result, IPv4 first:
// one, or on a dual-stack cluster one per family (host-local with a range
// set per family gives that). One endpoint carries them all.
func podAddresses(r types.Result) ([]*current.IPConfig, error) {
	res, err := current.NewResultFromResult(r)
	if err != nil {
		return nil, internal("IPAM result: %v", err)
	}
	if len(res.IPs) == 0 {
		return nil, internal("IPAM plugin returned no address")
	}
	var v4, v6 []*current.IPConfig
	for _, ipc := range res.IPs {
		if ipc.Address.IP.To4() != nil {
			v4 = append(v4, ipc)
		} else {
			v6 = append(v6, ipc)
		}
	}
	if len(v4) > 1 || len(v6) > 1 {
		return nil, invalidConfig("IPAM gave %d IPv4 and %d IPv6 addresses: hnscni wires at most one of each family per pod (one range set per family)", len(v4), len(v6))
	}
	return append(v4, v6...), nil
}

// prefixOf splits an IPAM address into the pod address and its subnet.
func prefixOf(n net.IPNet) (netip.Addr, netip.Prefix) {
	a, _ := netip.AddrFromSlice(n.IP)
	a = a.Unmap()
	ones, _ := n.Mask.Size()
	return a, netip.PrefixFrom(a, ones).Masked()
}

func ipamGateway(ipc *current.IPConfig, subnet netip.Prefix) netip.Addr {
	if gw, ok := netip.AddrFromSlice(ipc.Gateway); ok && subnet.Contains(gw.Unmap()) {
		return gw.Unmap()
	}
	return subnet.Addr().Next()
}

// gateway is the pod's next hop: the network subnet's default route (set
// by whoever provisioned the node), else IPAM's gateway, else the subnet's
// first address.
func gateway(network *hnslb.Network, ipc *current.IPConfig, subnet netip.Prefix) netip.Addr {
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

// createNetwork creates the configured network when the node has none, as
// a provisioning script would, from the subnets IPAM allocates from.
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
		doc.Ipams[0].Subnets[0].Policies = []json.RawMessage{hnslb.NewVSIDSubnetPolicy(defaultVNI)}
		if n.providerAddress.IsValid() {
			doc.Policies = append(doc.Policies, hnslb.NewNetworkPolicy(hnslb.NetworkPolicyProviderAddress,
				hnslb.ProviderAddressNetworkPolicySetting{ProviderAddress: n.providerAddress.String()}))
		}
	}
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
