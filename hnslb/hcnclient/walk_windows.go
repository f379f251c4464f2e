//go:build windows

package hcnclient

import (
	"context"

	"github.com/Microsoft/hcsshim/hcn"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// hcn hands a listing over whole; the walks convert and hand on one object
// at a time, letting go of each hcn object once converted, so the listing is
// held once (as hcn's objects) rather than three times at its peak (hcn's
// objects, their JSON and hnslb's).

var _ hnslb.Walker = (*Client)(nil)

func (c *Client) WalkLoadBalancers(ctx context.Context, fn func(*hnslb.LoadBalancer) error) error {
	return walk(ctx, "ListLoadBalancers", listLoadBalancers, fromHcnLoadBalancer, fn)
}

func (c *Client) WalkEndpointsOfNetwork(ctx context.Context, networkID string, fn func(*hnslb.Endpoint) error) error {
	return walk(ctx, "ListEndpointsOfNetwork", func() ([]hcn.HostComputeEndpoint, error) {
		return listEndpointsOfNetwork(networkID)
	}, convertTo[hcn.HostComputeEndpoint, hnslb.Endpoint], fn)
}

// walk runs an hcn listing and hands each object, converted to T with
// from, to fn.
func walk[T, H any](ctx context.Context, op string, list func() ([]H, error), from func(*H) (*T, error), fn func(*T) error) error {
	var hs []H
	if err := call(ctx, op, func() (err error) { hs, err = list(); return err }); err != nil {
		return err
	}
	for i := range hs {
		var doc *T
		err := call(ctx, op, func() (err error) { doc, err = from(&hs[i]); return err })
		var zero H
		hs[i] = zero
		if err != nil {
			return err
		}
		if err := fn(doc); err != nil {
			return err
		}
	}
	return nil
}
