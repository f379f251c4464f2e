package remote

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

var _ hnslb.Walker = (*Client)(nil)

// WalkLoadBalancers is ListLoadBalancers decoded one document at a time,
// as the reply arrives: neither the reply nor the whole listing is held.
func (c *Client) WalkLoadBalancers(ctx context.Context, fn func(*hnslb.LoadBalancer) error) error {
	return walk(ctx, c, "ListLoadBalancers", pathLoadBalancers, fn)
}

// WalkEndpointsOfNetwork is ListEndpointsOfNetwork one document at a time.
func (c *Client) WalkEndpointsOfNetwork(ctx context.Context, networkID string, fn func(*hnslb.Endpoint) error) error {
	return walk(ctx, c, "ListEndpointsOfNetwork", idPath(pathNetworks, networkID)+pathEndpoints, fn)
}

// walk reads a reply that is a JSON array (or null) and hands each element
// to fn as it is decoded.
func walk[T any](ctx context.Context, c *Client, op, path string, fn func(*T) error) error {
	resp, err := c.send(ctx, op, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	fail := func(err error) error {
		var syntax *json.SyntaxError
		var typ *json.UnmarshalTypeError
		if errors.As(err, &syntax) || errors.As(err, &typ) {
			return hnslb.NewError(op, codeFail, "decode reply: %v", err)
		}
		return c.readError(ctx, op, err)
	}
	start, err := dec.Token()
	if err != nil {
		return fail(err)
	}
	if start == nil { // an empty listing may come as null
		return nil
	}
	if start != json.Delim('[') {
		return hnslb.NewError(op, codeFail, "decode reply: want a JSON array, got %v", start)
	}
	for dec.More() {
		doc := new(T)
		if err := dec.Decode(doc); err != nil {
			return fail(err)
		}
		if err := fn(doc); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // the closing ]
		return fail(err)
	}
	return nil
}
