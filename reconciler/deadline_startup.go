package reconciler

import (
	"context"

	"k8s.io/klog/v2"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// StartupCalls are the HNS calls hnsproxy makes before its reconciler
// exists: finding the network, reading HNS's version and the Windows build,
// and the root endpoint. Each has the call deadline, so a hung HNS at start
// costs a deadline per call, not the process. Given to New through
// Options.StartupCalls, they and the reconciler's calls share one bound on
// abandoned calls: a call that hung at start-up still counts once syncs run.
type StartupCalls struct{ d *deadlines }

// NewStartupCalls bounds c's start-up calls with o's CallTimeout,
// MaxAbandonedCalls, CallTimedOut, Clock and Logger.
func NewStartupCalls(c hnslb.Client, o Options) *StartupCalls {
	log := o.Logger
	if log.GetSink() == nil {
		log = klog.Background()
	}
	return &StartupCalls{d: newDeadlines(c, o, log)}
}

// GetNetworkByName reads the network hnsproxy programs.
func (s *StartupCalls) GetNetworkByName(ctx context.Context, name string) (*hnslb.Network, error) {
	return s.d.GetNetworkByName(ctx, name)
}

// Version reads HNS's version.
func (s *StartupCalls) Version(ctx context.Context) (hnslb.Version, error) {
	return guard(s.d, ctx, hnslb.OpVersion, s.d.call, s.d.c.Version)
}

// OSBuild reads the Windows build (a registry read on Windows; over
// hnssim's socket, a call like any other).
func (s *StartupCalls) OSBuild(ctx context.Context) (hnslb.OSBuild, error) {
	return guard(s.d, ctx, hnslb.OpOSBuild, s.d.call, s.d.c.OSBuild)
}

// GetEndpointByName reads an endpoint by name (the root endpoint that
// health checks are forwarded to).
func (s *StartupCalls) GetEndpointByName(ctx context.Context, name string) (*hnslb.Endpoint, error) {
	return hnslb.GetLooking(func() (*hnslb.Endpoint, error) {
		return guard(s.d, ctx, hnslb.OpGetEndpointByName, s.d.call, func(ctx context.Context) (*hnslb.Endpoint, error) {
			ep, err := s.d.c.GetEndpointByName(ctx, name)
			canonicalEndpoint(ep)
			return ep, err
		})
	})
}
