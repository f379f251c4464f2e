package cni

import (
	"context"
	"net"
	"net/netip"
	"strings"

	"github.com/containernetworking/cni/pkg/invoke"
	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"
	current "github.com/containernetworking/cni/pkg/types/100"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// cmdCheck verifies that the attachment is as ADD left it: the endpoint
// exists on the configured network, is attached to CNI_NETNS, and has the
// address and MAC of prevResult; then lets IPAM check its side. A
// prevResult a reference plugin wrote (the node switched to hnscni with the
// pod running) is checked for what it records (prevInterface).
func cmdCheck(ctx context.Context, s *session) error {
	args := s.args
	if s.conf.PrevResult == nil {
		return invalidConfig("CHECK needs prevResult")
	}
	prev, err := current.NewResultFromResult(s.conf.PrevResult)
	if err != nil {
		return types.NewError(types.ErrDecodingFailure, "prevResult", err.Error())
	}
	nsID, err := namespaceID(args.Netns)
	if err != nil {
		return err
	}
	ep, err := s.attachmentEndpoint(ctx, s.hns.GetEndpointByName)
	if err != nil {
		return err
	}
	if ep == nil {
		return types.NewError(types.ErrUnknownContainer, "HNS endpoint "+endpointName(args.ContainerID, s.conf.Network, args.IfName)+" does not exist", "")
	}
	name := ep.Name
	network, err := s.network(ctx)
	if err != nil {
		return err
	}
	if network == nil || !strings.EqualFold(network.ID, ep.HostComputeNetwork) {
		return internal("HNS endpoint %s is not on network %q", name, s.conf.Network)
	}
	if !strings.EqualFold(ep.HostComputeNamespace, nsID) {
		return internal("HNS endpoint %s is attached to namespace %q, not %s", name, ep.HostComputeNamespace, nsID)
	}
	ns, err := s.hns.GetNamespaceByID(ctx, nsID)
	if err != nil {
		return hnsError("get HNS namespace "+nsID, err)
	}
	if !namespaceHasEndpoint(ns, ep.ID) {
		return internal("HNS namespace %s does not list endpoint %s", nsID, name)
	}
	if err := matchPrevResult(prev, ep, args); err != nil {
		return err
	}
	if s.conf.hnsIPAM() {
		return nil
	}
	return s.ipamExec(ctx, invoke.DelegateCheck)
}

// matchPrevResult compares the endpoint with what ADD reported.
func matchPrevResult(prev *current.Result, ep *hnslb.Endpoint, args *skel.CmdArgs) error {
	idx, foreign := prevInterface(prev, ep, args)
	if idx < 0 {
		return internal("prevResult has no interface %s in %s (nor one a reference plugin names for endpoint %s)", args.IfName, args.Netns, ep.Name)
	}
	// sdn* write the MAC's raw bytes: a foreign MAC is compared only where
	// it reads as one.
	mac := prev.Interfaces[idx].Mac
	if _, err := net.ParseMAC(mac); (!foreign || err == nil) && !strings.EqualFold(cniMAC(mac), cniMAC(ep.MacAddress)) {
		return internal("HNS endpoint %s has MAC %s, prevResult says %s", ep.Name, ep.MacAddress, mac)
	}
	// Every address of the endpoint (two on a dual-stack pod) must be one
	// prevResult records for this interface.
	for _, c := range ep.IpConfigurations {
		if !recorded(prev, idx, net.ParseIP(c.IpAddress)) {
			return internal("HNS endpoint %s has address %s, which prevResult does not record", ep.Name, c.IpAddress)
		}
	}
	if len(ep.IpConfigurations) == 0 {
		return internal("HNS endpoint %s has no address", ep.Name)
	}
	// And every address prevResult records for it must be the endpoint's:
	// the spec has CHECK take the expected addresses from prevResult, and
	// a dual-stack pod whose endpoint was made again with one family only
	// passes the check above.
	for _, ipc := range prev.IPs {
		if ipc == nil || ipc.Interface != nil && *ipc.Interface != idx {
			continue
		}
		if a, ok := netip.AddrFromSlice(ipc.Address.IP); !ok || !ep.HasAddress(a) {
			return internal("prevResult records address %s for HNS endpoint %s, which does not have it", ipc.Address.IP, ep.Name)
		}
	}
	return nil
}

// prevInterface is the attachment's interface in prevResult: named
// CNI_IFNAME in CNI_NETNS, as hnscni's ADD reports it; else (foreign) one
// a reference plugin reported before the node switched to hnscni, with no
// sandbox, named after the endpoint (win-bridge, win-overlay) or CNI_IFNAME
// (sdnbridge, sdnoverlay). -1 if there is none.
func prevInterface(prev *current.Result, ep *hnslb.Endpoint, args *skel.CmdArgs) (idx int, foreign bool) {
	for i, itf := range prev.Interfaces {
		if itf != nil && itf.Name == args.IfName && itf.Sandbox == args.Netns {
			return i, false
		}
	}
	for i, itf := range prev.Interfaces {
		if itf != nil && itf.Sandbox == "" && (itf.Name == ep.Name || itf.Name == args.IfName) {
			return i, true
		}
	}
	return -1, false
}

// recorded reports whether prevResult lists ip on interface idx.
func recorded(prev *current.Result, idx int, ip net.IP) bool {
	for _, ipc := range prev.IPs {
		if ipc == nil || ipc.Interface != nil && *ipc.Interface != idx {
			continue
		}
		if ipc.Address.IP.Equal(ip) {
			return true
		}
	}
	return false
}
