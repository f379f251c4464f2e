package reconciler

import (
	"context"
	"slices"
	"sync"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// codesMet records the HNS code of every load balancer call, endpoint
// create and listing of a network's endpoints that failed, so
// a test run under an error variant can tell that it met the variant's code
// at all: had the simulator answered another one, the test would have
// passed without testing hnsproxy under it.
type codesMet struct {
	hnslb.Client
	mu    sync.Mutex
	codes []hnslb.ErrorCode
}

func (c *codesMet) note(err error) {
	if code, ok := hnslb.CodeOf(err); ok {
		c.mu.Lock()
		c.codes = append(c.codes, code)
		c.mu.Unlock()
	}
}

func (c *codesMet) met(code hnslb.ErrorCode) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Contains(c.codes, code)
}

func (c *codesMet) CreateLoadBalancer(ctx context.Context, l *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	out, err := c.Client.CreateLoadBalancer(ctx, l)
	c.note(err)
	return out, err
}

func (c *codesMet) UpdateLoadBalancer(ctx context.Context, id string, l *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	out, err := c.Client.UpdateLoadBalancer(ctx, id, l)
	c.note(err)
	return out, err
}

func (c *codesMet) GetLoadBalancerByID(ctx context.Context, id string) (*hnslb.LoadBalancer, error) {
	out, err := c.Client.GetLoadBalancerByID(ctx, id)
	c.note(err)
	return out, err
}

func (c *codesMet) DeleteLoadBalancer(ctx context.Context, id string) error {
	err := c.Client.DeleteLoadBalancer(ctx, id)
	c.note(err)
	return err
}

func (c *codesMet) CreateEndpoint(ctx context.Context, network string, ep *hnslb.Endpoint) (*hnslb.Endpoint, error) {
	out, err := c.Client.CreateEndpoint(ctx, network, ep)
	c.note(err)
	return out, err
}

func (c *codesMet) ListEndpointsOfNetwork(ctx context.Context, network string) ([]hnslb.Endpoint, error) {
	out, err := c.Client.ListEndpointsOfNetwork(ctx, network)
	c.note(err)
	return out, err
}
