package cni

import (
	"github.com/containernetworking/cni/pkg/skel"
	"github.com/containernetworking/plugins/pkg/ipam"
)

// cmdDel removes the attachment's endpoint, then releases its address.
// Whatever is already gone counts as removed. The address is released only
// once the endpoint is surely gone, so it is never handed out twice.
func cmdDel(args *skel.CmdArgs) error {
	ctx, cancel := withTimeout()
	defer cancel()
	s, err := newSession(args)
	if err != nil {
		return err
	}
	if err := s.hns.removeEndpoint(ctx, endpointName(args.ContainerID, args.IfName)); err != nil {
		return err
	}
	return ipam.ExecDel(s.conf.IPAM.Type, args.StdinData)
}
