package cni

import (
	"context"
	"net"
	"net/netip"

	"github.com/containernetworking/cni/pkg/invoke"
	"github.com/containernetworking/cni/pkg/types"
	current "github.com/containernetworking/cni/pkg/types/100"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

func cmdAdd(ctx context.Context, s *session) error {
	if err := checkIfName(s.args.IfName); err != nil {
		return err
	}
	if err := s.conf.checkPortMappings(); err != nil {
		return err
	}
	nsID, err := namespaceID(s.args.Netns)
	if err != nil {
		return err
	}
	var undo undoStack
	result, err := s.add(ctx, nsID, &undo)
	var versioned types.Result
	if err == nil {
		// Converted before anything is printed, so a result the
		// configuration's version cannot express undoes the ADD too.
		if versioned, err = result.GetAsVersion(s.conf.CNIVersion); err != nil {
			err = internal("result in CNI version %q: %v", s.conf.CNIVersion, err)
		}
	}
	if err == nil && !s.answer.take() {
		// run answered "try again later" while this ADD waited on HNS: the
		// runtime takes the pod as not wired, so nothing may stay.
		err = errGaveUp
	}
	if err != nil {
		undo.run()
		return err
	}
	return versioned.Print()
}

// undoStack runs compensations of a failed ADD in reverse order, each with
// its own deadline so an expired ADD still cleans up.
type undoStack []func(context.Context)

func (u *undoStack) push(f func(context.Context)) { *u = append(*u, f) }

func (u undoStack) run() {
	ctx, cancel := context.WithTimeout(context.Background(), undoTimeout)
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
	network, err := s.network(ctx)
	if err != nil {
		return nil, err
	}
	if network == nil {
		// Refused before anything is made.
		if err := s.cannotCreateNetwork(); err != nil {
			return nil, err
		}
	}
	name := endpointName(s.args.ContainerID, n.Network, s.args.IfName)
	// An endpoint left by an interrupted ADD of this attachment (or one an
	// earlier release named its way) goes first, with its address: IPAM
	// refuses a second address for one attachment.
	stale, err := s.removeAttachment(ctx, true)
	if err != nil {
		return nil, err
	}
	if stale && !n.hnsIPAM() {
		if err := s.ipamDel(ctx); err != nil {
			return nil, err
		}
	}

	spec := endpointSpec{name: name, dns: n.dns(s.podNamespace()), loopbackDSR: n.LoopbackDSR}
	if !n.hnsIPAM() {
		if network, err = s.ipamAddresses(ctx, network, &spec, undo); err != nil {
			return nil, err
		}
	}
	spec.nodeSubnet = firstSubnet(network)
	if n.overlay() {
		if spec.providerAddress, err = providerAddress(network, n); err != nil {
			return nil, err
		}
	}
	if spec.loopbackDSR {
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
	if hnslb.IsAddressRefused(err) && len(spec.addrs) > 0 {
		// Its CNI errors pass through hnsError unchanged.
		ep, err = s.createOverLeftovers(ctx, network.ID, spec, err)
	}
	if err != nil {
		return nil, hnsError("create HNS endpoint "+name, err)
	}
	if n.hnsIPAM() {
		if spec.addrs, err = hnsAssigned(ep, network); err != nil {
			return nil, err
		}
	}
	if err := c.AddNamespaceEndpoint(ctx, nsID, ep.ID); err != nil {
		return nil, hnsError("attach HNS endpoint "+name+" to namespace "+nsID, err)
	}
	return s.result(ep, spec), nil
}

// ipamAddresses runs IPAM ADD, checks its addresses, creates the network
// if missing, and sets the pod's addresses and gateways.
func (s *session) ipamAddresses(ctx context.Context, network *hnslb.Network, spec *endpointSpec, undo *undoStack) (*hnslb.Network, error) {
	n := s.conf
	data, err := s.ipamStdin(ctx)
	if err != nil {
		return nil, err
	}
	ipamResult, err := invoke.DelegateAdd(ctx, n.IPAM.Type, data, nil)
	if err != nil {
		return nil, s.ipamError(ctx, err)
	}
	release := func(ctx context.Context) { _ = invoke.DelegateDel(ctx, n.IPAM.Type, data, nil) }
	undo.push(release)
	s.giveUp.set(release)
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
		if network, err = s.hns.createNetwork(ctx, n, ipcs); err != nil {
			return nil, err
		}
	}
	for _, ipc := range ipcs {
		addr, subnet := prefixOf(ipc.Address)
		spec.addrs = append(spec.addrs, podAddr{addr: netip.PrefixFrom(addr, subnet.Bits()), gateway: n.gateway(network, ipc, subnet)})
	}
	return network, nil
}

// hnsAssigned reads the address HNS gave an endpoint created without one.
func hnsAssigned(ep *hnslb.Endpoint, network *hnslb.Network) ([]podAddr, error) {
	var out []podAddr
	for _, c := range ep.IpConfigurations {
		a, err := netip.ParseAddr(c.IpAddress)
		if err != nil {
			return nil, internal("HNS gave endpoint %s the address %q", ep.Name, c.IpAddress)
		}
		bits := int(c.PrefixLength)
		if p := subnetOf(network, a); bits == 0 && p.IsValid() {
			bits = p.Bits()
		}
		gw := netip.PrefixFrom(a, bits).Masked().Addr().Next()
		for _, r := range ep.Routes {
			if g, err := netip.ParseAddr(r.NextHop); err == nil && g.Is4() == a.Is4() {
				gw = g
			}
		}
		out = append(out, podAddr{addr: netip.PrefixFrom(a, bits), gateway: gw})
	}
	if len(out) == 0 {
		return nil, internal("HNS assigned endpoint %s no address (network %q has no subnet to assign from?)", ep.Name, network.Name)
	}
	return out, nil
}

// result is the CNI result of an ADD: one interface (ifname, MAC, sandbox),
// one IP per address with its gateway, a default route per family, DNS.
func (s *session) result(ep *hnslb.Endpoint, spec endpointSpec) *current.Result {
	result := &current.Result{
		CNIVersion: current.ImplementedSpecVersion,
		Interfaces: []*current.Interface{{Name: s.args.IfName, Mac: cniMAC(ep.MacAddress), Sandbox: s.args.Netns}},
		DNS:        spec.dns,
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
	return result
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
