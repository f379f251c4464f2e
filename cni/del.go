package cni

import (
	"context"
	"github.com/containernetworking/plugins/pkg/ipam"
)

// cmdDel removes the attachment's endpoint, then releases its address.
// Whatever is already gone counts as removed. The address is released only
// once the endpoint is surely gone, so it is never handed out twice.
func cmdDel(ctx context.Context, s *session) error {
	if _, err := s.hns.removeEndpoint(ctx, endpointName(s.args.ContainerID, s.args.IfName)); err != nil {
		return err
	}
	return ipam.ExecDel(s.conf.IPAM.Type, s.args.StdinData)
}
