package hnslb

import "context"

// Around returns c with every call, ServiceInstance's too, made through
// around: op names the call (get_load_balancer, create_endpoint, ...: the
// operation label values of hnsproxy's HNS metrics), call makes it on c and
// returns its error, and around returns what call returned. The one place
// a wrapper that measures every call (metrics, the scale harness's CPU
// meter) is written, so a method added to Client is measured everywhere.
//
// What Around returns is a Client and nothing more, not a Walker even where
// c is one: a wrapper that should walk adds the walks itself.
func Around(c Client, around func(op string, call func() error) error) Client {
	return aroundClient{c: c, around: around}
}

type aroundClient struct {
	c      Client
	around func(op string, call func() error) error
}

// aroundValue makes a call that returns a value through a.around.
func aroundValue[T any](a aroundClient, op string, fn func() (T, error)) (v T, err error) {
	err = a.around(op, func() error {
		var callErr error
		v, callErr = fn()
		return callErr
	})
	return v, err
}

func (a aroundClient) Version(ctx context.Context) (Version, error) {
	return aroundValue(a, OpVersion, func() (Version, error) { return a.c.Version(ctx) })
}

func (a aroundClient) OSBuild(ctx context.Context) (OSBuild, error) {
	return aroundValue(a, OpOSBuild, func() (OSBuild, error) { return a.c.OSBuild(ctx) })
}

func (a aroundClient) ServiceInstance(ctx context.Context) (string, error) {
	return aroundValue(a, OpServiceInstance, func() (string, error) { return a.c.ServiceInstance(ctx) })
}

func (a aroundClient) ListNetworks(ctx context.Context) ([]Network, error) {
	return aroundValue(a, OpListNetworks, func() ([]Network, error) { return a.c.ListNetworks(ctx) })
}

func (a aroundClient) GetNetworkByID(ctx context.Context, id string) (*Network, error) {
	return aroundValue(a, OpGetNetwork, func() (*Network, error) { return a.c.GetNetworkByID(ctx, id) })
}

func (a aroundClient) GetNetworkByName(ctx context.Context, name string) (*Network, error) {
	return aroundValue(a, OpGetNetworkByName, func() (*Network, error) { return a.c.GetNetworkByName(ctx, name) })
}

func (a aroundClient) CreateNetwork(ctx context.Context, n *Network) (*Network, error) {
	return aroundValue(a, OpCreateNetwork, func() (*Network, error) { return a.c.CreateNetwork(ctx, n) })
}

func (a aroundClient) DeleteNetwork(ctx context.Context, id string) error {
	return a.around(OpDeleteNetwork, func() error { return a.c.DeleteNetwork(ctx, id) })
}

func (a aroundClient) CreateEndpoint(ctx context.Context, networkID string, e *Endpoint) (*Endpoint, error) {
	return aroundValue(a, OpCreateEndpoint, func() (*Endpoint, error) { return a.c.CreateEndpoint(ctx, networkID, e) })
}

func (a aroundClient) GetEndpointByID(ctx context.Context, id string) (*Endpoint, error) {
	return aroundValue(a, OpGetEndpoint, func() (*Endpoint, error) { return a.c.GetEndpointByID(ctx, id) })
}

func (a aroundClient) GetEndpointByName(ctx context.Context, name string) (*Endpoint, error) {
	return aroundValue(a, OpGetEndpointByName, func() (*Endpoint, error) { return a.c.GetEndpointByName(ctx, name) })
}

func (a aroundClient) ListEndpoints(ctx context.Context) ([]Endpoint, error) {
	return aroundValue(a, OpListEndpoints, func() ([]Endpoint, error) { return a.c.ListEndpoints(ctx) })
}

func (a aroundClient) ListEndpointsOfNetwork(ctx context.Context, networkID string) ([]Endpoint, error) {
	return aroundValue(a, OpListEndpointsOfNetwork, func() ([]Endpoint, error) { return a.c.ListEndpointsOfNetwork(ctx, networkID) })
}

func (a aroundClient) DeleteEndpoint(ctx context.Context, id string) error {
	return a.around(OpDeleteEndpoint, func() error { return a.c.DeleteEndpoint(ctx, id) })
}

func (a aroundClient) CreateNamespace(ctx context.Context, ns *Namespace) (*Namespace, error) {
	return aroundValue(a, OpCreateNamespace, func() (*Namespace, error) { return a.c.CreateNamespace(ctx, ns) })
}

func (a aroundClient) GetNamespaceByID(ctx context.Context, id string) (*Namespace, error) {
	return aroundValue(a, OpGetNamespace, func() (*Namespace, error) { return a.c.GetNamespaceByID(ctx, id) })
}

func (a aroundClient) ListNamespaces(ctx context.Context) ([]Namespace, error) {
	return aroundValue(a, OpListNamespaces, func() ([]Namespace, error) { return a.c.ListNamespaces(ctx) })
}

func (a aroundClient) DeleteNamespace(ctx context.Context, id string) error {
	return a.around(OpDeleteNamespace, func() error { return a.c.DeleteNamespace(ctx, id) })
}

func (a aroundClient) AddNamespaceEndpoint(ctx context.Context, namespaceID, endpointID string) error {
	return a.around(OpAddNamespaceEndpoint, func() error { return a.c.AddNamespaceEndpoint(ctx, namespaceID, endpointID) })
}

func (a aroundClient) RemoveNamespaceEndpoint(ctx context.Context, namespaceID, endpointID string) error {
	return a.around(OpRemoveNamespaceEndpoint, func() error { return a.c.RemoveNamespaceEndpoint(ctx, namespaceID, endpointID) })
}

func (a aroundClient) CreateLoadBalancer(ctx context.Context, lb *LoadBalancer) (*LoadBalancer, error) {
	return aroundValue(a, OpCreateLoadBalancer, func() (*LoadBalancer, error) { return a.c.CreateLoadBalancer(ctx, lb) })
}

func (a aroundClient) UpdateLoadBalancer(ctx context.Context, id string, lb *LoadBalancer) (*LoadBalancer, error) {
	return aroundValue(a, OpUpdateLoadBalancer, func() (*LoadBalancer, error) { return a.c.UpdateLoadBalancer(ctx, id, lb) })
}

func (a aroundClient) GetLoadBalancerByID(ctx context.Context, id string) (*LoadBalancer, error) {
	return aroundValue(a, OpGetLoadBalancer, func() (*LoadBalancer, error) { return a.c.GetLoadBalancerByID(ctx, id) })
}

func (a aroundClient) ListLoadBalancers(ctx context.Context) ([]LoadBalancer, error) {
	return aroundValue(a, OpListLoadBalancers, func() ([]LoadBalancer, error) { return a.c.ListLoadBalancers(ctx) })
}

func (a aroundClient) DeleteLoadBalancer(ctx context.Context, id string) error {
	return a.around(OpDeleteLoadBalancer, func() error { return a.c.DeleteLoadBalancer(ctx, id) })
}
