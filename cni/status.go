package cni

import (
	"context"
	"errors"
	"fmt"

	"github.com/containernetworking/cni/pkg/invoke"
	"github.com/containernetworking/cni/pkg/types"
)

// cmdStatus reports whether ADD can work: HNS answers, the network exists
// with the configured type (or ADD would create it), and IPAM is ready.
func cmdStatus(ctx context.Context, s *session) error {
	if _, err := s.hns.Version(ctx); err != nil {
		return types.NewError(types.ErrPluginNotAvailable, "HNS is not reachable", err.Error())
	}
	network, err := s.network(ctx)
	if te, ok := err.(*types.Error); ok && te.Code == types.ErrInvalidNetworkConfig {
		return err // a network of another type
	}
	if err != nil {
		return types.NewError(types.ErrPluginNotAvailable, "HNS network lookup failed", err.Error())
	}
	if network == nil {
		// Ready all the same where ADD creates the network.
		if err := s.cannotCreateNetwork(); err != nil {
			return types.NewError(types.ErrPluginNotAvailable, "HNS network "+s.conf.Network+" does not exist", err.Error())
		}
	}
	if s.conf.hnsIPAM() {
		return nil
	}
	err = s.ipamExec(ctx, invoke.DelegateStatus)
	var te *types.Error
	switch {
	case err == nil || incompatible(err):
		// An IPAM that predates STATUS says nothing against ADD.
		return nil
	case errors.As(err, &te) && te.Code == types.ErrTryAgainLater:
		// An IPAM that did not answer in time (ipamError).
		return types.NewError(types.ErrPluginNotAvailable, te.Msg, te.Details)
	case errors.As(err, &te) && (te.Code == types.ErrPluginNotAvailable || te.Code == types.ErrLimitedConnectivity):
		return err
	}
	// Whatever else keeps IPAM from answering (a plugin not installed yet,
	// one whose own STATUS fails with its code) keeps ADD from working:
	// STATUS's code for that is 50, with IPAM's error as the details.
	return types.NewError(types.ErrPluginNotAvailable, fmt.Sprintf("IPAM plugin %q is not ready", s.conf.IPAM.Type), err.Error())
}
