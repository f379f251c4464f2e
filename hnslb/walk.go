package hnslb

import "context"

// Walker is implemented by a client that can hand a listing over one
// document at a time, decoding each as it arrives: a caller that keeps
// little of each document (drift repair) then never holds the whole listing,
// nor its encoded form, at once. fn owns the document it is given; an error
// from fn stops the walk and is returned. Use WalkLoadBalancers and
// WalkEndpointsOfNetwork, which fall back to one listing for a client
// without it.
type Walker interface {
	WalkLoadBalancers(ctx context.Context, fn func(*LoadBalancer) error) error
	WalkEndpointsOfNetwork(ctx context.Context, networkID string, fn func(*Endpoint) error) error
}

// WalkLoadBalancers calls fn with each load balancer c lists.
func WalkLoadBalancers(ctx context.Context, c Reader, fn func(*LoadBalancer) error) error {
	if w, ok := c.(Walker); ok {
		return w.WalkLoadBalancers(ctx, fn)
	}
	lbs, err := c.ListLoadBalancers(ctx)
	if err != nil {
		return err
	}
	return each(ctx, lbs, fn)
}

// WalkEndpointsOfNetwork calls fn with each endpoint of a network c lists.
func WalkEndpointsOfNetwork(ctx context.Context, c Reader, networkID string, fn func(*Endpoint) error) error {
	if w, ok := c.(Walker); ok {
		return w.WalkEndpointsOfNetwork(ctx, networkID, fn)
	}
	eps, err := c.ListEndpointsOfNetwork(ctx, networkID)
	if err != nil {
		return err
	}
	return each(ctx, eps, fn)
}

// each hands docs to fn one by one, letting go of each, until ctx ends.
func each[T any](ctx context.Context, docs []T, fn func(*T) error) error {
	for i := range docs {
		if err := ctx.Err(); err != nil {
			return err
		}
		doc := docs[i]
		var zero T
		docs[i] = zero
		if err := fn(&doc); err != nil {
			return err
		}
	}
	return nil
}
