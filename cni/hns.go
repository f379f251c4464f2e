package cni

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/containernetworking/cni/pkg/types"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/hnslb/hcnclient"
)

// EnvHNSEndpoint selects HNS when the configuration has no hnsEndpoint.
const EnvHNSEndpoint = "HNS_ENDPOINT"

// connect returns the HNS client the configuration selects.
func connect(n *NetConf) (hnslb.Client, error) {
	ep := n.HNSEndpoint
	if ep == "" {
		ep = os.Getenv(EnvHNSEndpoint)
	}
	if ep == "" {
		// The real HNS: only on Windows (hcnclient.ErrNotWindows elsewhere).
		c, err := hcnclient.New()
		if err != nil {
			return nil, types.NewError(types.ErrPluginNotAvailable, "no HNS to talk to: set hnsEndpoint or "+EnvHNSEndpoint, err.Error())
		}
		return c, nil
	}
	c, err := dialSimulator(ep)
	if err != nil {
		return nil, invalidConfig("hnsEndpoint: %v", err)
	}
	return c, nil
}

// hnsError turns an HNS failure into a CNI error: an unreachable or
// restarting HNS is worth retrying, anything else is the plugin's failure.
func hnsError(what string, err error) error {
	var te *types.Error
	if errors.As(err, &te) {
		return te
	}
	code := types.ErrInternal
	if hnslb.IsUnavailable(err) || errors.Is(err, context.DeadlineExceeded) {
		code = types.ErrTryAgainLater
	}
	return types.NewError(code, what, err.Error())
}

// internal is a CNI error for a failure of the plugin's own making.
func internal(format string, args ...any) *types.Error {
	return types.NewError(types.ErrInternal, fmt.Sprintf(format, args...), "")
}
