package metrics

import (
	"context"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// The walks count as the listings they are (same operation names), timed
// until the last document was handed over.

var _ hnslb.Walker = instrumented{}

func (i instrumented) WalkLoadBalancers(ctx context.Context, fn func(*hnslb.LoadBalancer) error) error {
	return timeCall(hnslb.OpListLoadBalancers, func() error { return hnslb.WalkLoadBalancers(ctx, i.c, fn) })
}

func (i instrumented) WalkEndpointsOfNetwork(ctx context.Context, networkID string, fn func(*hnslb.Endpoint) error) error {
	return timeCall(hnslb.OpListEndpointsOfNetwork, func() error { return hnslb.WalkEndpointsOfNetwork(ctx, i.c, networkID, fn) })
}
