package cni

import (
	"context"
	"net"
	"strings"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/cni/pkg/types"
	current "github.com/containernetworking/cni/pkg/types/100"
	"github.com/containernetworking/plugins/pkg/ipam"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// cmdCheck verifies that the attachment is as ADD left it: the endpoint
// exists on the configured network, is attached to CNI_NETNS, and has the
// address and MAC of prevResult; then lets IPAM check its side.
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
	ep, err := s.attachmentEndpoint(ctx)
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
	return s.ipamExec(ctx, ipam.ExecCheck)
}

// matchPrevResult compares the endpoint with what ADD reported.
func matchPrevResult(prev *current.Result, ep *hnslb.Endpoint, args *skel.CmdArgs) error {
	idx := -1
	for i, itf := range prev.Interfaces {
		if itf.Name == args.IfName && itf.Sandbox == args.Netns {
			idx = i
			if !strings.EqualFold(itf.Mac, cniMAC(ep.MacAddress)) {
				return internal("HNS endpoint %s has MAC %s, prevResult says %s", ep.Name, ep.MacAddress, itf.Mac)
			}
		}
	}
	if idx < 0 {
		return internal("prevResult has no interface %s in %s", args.IfName, args.Netns)
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
	return nil
}

// recorded reports whether prevResult lists ip on interface idx.
func recorded(prev *current.Result, idx int, ip net.IP) bool {
	for _, ipc := range prev.IPs {
		if ipc.Interface != nil && *ipc.Interface != idx {
			continue
		}
		if ipc.Address.IP.Equal(ip) {
			return true
		}
	}
	return false
}
