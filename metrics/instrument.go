package metrics

import (
	"context"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// Result label values of HNSOperationsTotal.
const (
	ResultSuccess        = "success"
	ResultNotFound       = "not_found"
	ResultAlreadyExists  = "already_exists"
	ResultPortConflict   = "port_conflict"
	ResultInvalid        = "invalid_parameter"
	ResultNotImplemented = "not_implemented"
	ResultUnavailable    = "unavailable"
	ResultError          = "error"
)

// resultOf classifies an HNS error for the result label.
func resultOf(err error) string {
	switch {
	case err == nil:
		return ResultSuccess
	case hnslb.IsNotFound(err):
		return ResultNotFound
	case hnslb.IsPortAlreadyExists(err):
		return ResultPortConflict
	case hnslb.IsAlreadyExists(err):
		return ResultAlreadyExists
	case hnslb.IsInvalidParameter(err):
		return ResultInvalid
	case hnslb.IsNotImplemented(err):
		return ResultNotImplemented
	case hnslb.IsUnavailable(err):
		return ResultUnavailable
	default:
		return ResultError
	}
}

// InstrumentClient returns c with every call counted in HNSOperationsTotal
// and timed in HNSOperationDuration. The operation label is the method name
// in snake case (create_load_balancer, list_endpoints, ...).
func InstrumentClient(c hnslb.Client) hnslb.Client { return instrumented{c} }

type instrumented struct{ c hnslb.Client }

// observe records one call that started at start.
func observe(op string, start time.Time, err error) {
	HNSOperationDuration.WithLabelValues(op).Observe(time.Since(start).Seconds())
	HNSOperationsTotal.WithLabelValues(op, resultOf(err)).Inc()
}

// call1 and call0 time a call returning a value and an error, or only an error.
func call1[T any](op string, fn func() (T, error)) (T, error) {
	start := time.Now()
	v, err := fn()
	observe(op, start, err)
	return v, err
}

func call0(op string, fn func() error) error {
	start := time.Now()
	err := fn()
	observe(op, start, err)
	return err
}

func (i instrumented) Version(ctx context.Context) (hnslb.Version, error) {
	return call1("version", func() (hnslb.Version, error) { return i.c.Version(ctx) })
}

func (i instrumented) OSBuild(ctx context.Context) (hnslb.OSBuild, error) {
	return call1("os_build", func() (hnslb.OSBuild, error) { return i.c.OSBuild(ctx) })
}

// ServiceInstance is not an HNS call (the service control manager on
// Windows): not timed as one.
func (i instrumented) ServiceInstance(ctx context.Context) (string, error) {
	return i.c.ServiceInstance(ctx)
}

func (i instrumented) ListNetworks(ctx context.Context) ([]hnslb.Network, error) {
	return call1("list_networks", func() ([]hnslb.Network, error) { return i.c.ListNetworks(ctx) })
}

func (i instrumented) GetNetworkByID(ctx context.Context, id string) (*hnslb.Network, error) {
	return call1("get_network", func() (*hnslb.Network, error) { return i.c.GetNetworkByID(ctx, id) })
}

func (i instrumented) GetNetworkByName(ctx context.Context, name string) (*hnslb.Network, error) {
	return call1("get_network_by_name", func() (*hnslb.Network, error) { return i.c.GetNetworkByName(ctx, name) })
}

func (i instrumented) CreateNetwork(ctx context.Context, n *hnslb.Network) (*hnslb.Network, error) {
	return call1("create_network", func() (*hnslb.Network, error) { return i.c.CreateNetwork(ctx, n) })
}

func (i instrumented) DeleteNetwork(ctx context.Context, id string) error {
	return call0("delete_network", func() error { return i.c.DeleteNetwork(ctx, id) })
}

func (i instrumented) CreateEndpoint(ctx context.Context, networkID string, e *hnslb.Endpoint) (*hnslb.Endpoint, error) {
	return call1("create_endpoint", func() (*hnslb.Endpoint, error) { return i.c.CreateEndpoint(ctx, networkID, e) })
}

func (i instrumented) GetEndpointByID(ctx context.Context, id string) (*hnslb.Endpoint, error) {
	return call1("get_endpoint", func() (*hnslb.Endpoint, error) { return i.c.GetEndpointByID(ctx, id) })
}

func (i instrumented) GetEndpointByName(ctx context.Context, name string) (*hnslb.Endpoint, error) {
	return call1("get_endpoint_by_name", func() (*hnslb.Endpoint, error) { return i.c.GetEndpointByName(ctx, name) })
}

func (i instrumented) ListEndpoints(ctx context.Context) ([]hnslb.Endpoint, error) {
	return call1("list_endpoints", func() ([]hnslb.Endpoint, error) { return i.c.ListEndpoints(ctx) })
}

func (i instrumented) ListEndpointsOfNetwork(ctx context.Context, networkID string) ([]hnslb.Endpoint, error) {
	return call1("list_endpoints_of_network", func() ([]hnslb.Endpoint, error) { return i.c.ListEndpointsOfNetwork(ctx, networkID) })
}

func (i instrumented) DeleteEndpoint(ctx context.Context, id string) error {
	return call0("delete_endpoint", func() error { return i.c.DeleteEndpoint(ctx, id) })
}

func (i instrumented) CreateNamespace(ctx context.Context, ns *hnslb.Namespace) (*hnslb.Namespace, error) {
	return call1("create_namespace", func() (*hnslb.Namespace, error) { return i.c.CreateNamespace(ctx, ns) })
}

func (i instrumented) GetNamespaceByID(ctx context.Context, id string) (*hnslb.Namespace, error) {
	return call1("get_namespace", func() (*hnslb.Namespace, error) { return i.c.GetNamespaceByID(ctx, id) })
}

func (i instrumented) ListNamespaces(ctx context.Context) ([]hnslb.Namespace, error) {
	return call1("list_namespaces", func() ([]hnslb.Namespace, error) { return i.c.ListNamespaces(ctx) })
}

func (i instrumented) DeleteNamespace(ctx context.Context, id string) error {
	return call0("delete_namespace", func() error { return i.c.DeleteNamespace(ctx, id) })
}

func (i instrumented) AddNamespaceEndpoint(ctx context.Context, namespaceID, endpointID string) error {
	return call0("add_namespace_endpoint", func() error { return i.c.AddNamespaceEndpoint(ctx, namespaceID, endpointID) })
}

func (i instrumented) RemoveNamespaceEndpoint(ctx context.Context, namespaceID, endpointID string) error {
	return call0("remove_namespace_endpoint", func() error { return i.c.RemoveNamespaceEndpoint(ctx, namespaceID, endpointID) })
}

func (i instrumented) CreateLoadBalancer(ctx context.Context, lb *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	return call1("create_load_balancer", func() (*hnslb.LoadBalancer, error) { return i.c.CreateLoadBalancer(ctx, lb) })
}

func (i instrumented) UpdateLoadBalancer(ctx context.Context, id string, lb *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	return call1("update_load_balancer", func() (*hnslb.LoadBalancer, error) { return i.c.UpdateLoadBalancer(ctx, id, lb) })
}

func (i instrumented) GetLoadBalancerByID(ctx context.Context, id string) (*hnslb.LoadBalancer, error) {
	return call1("get_load_balancer", func() (*hnslb.LoadBalancer, error) { return i.c.GetLoadBalancerByID(ctx, id) })
}

func (i instrumented) ListLoadBalancers(ctx context.Context) ([]hnslb.LoadBalancer, error) {
	return call1("list_load_balancers", func() ([]hnslb.LoadBalancer, error) { return i.c.ListLoadBalancers(ctx) })
}

func (i instrumented) DeleteLoadBalancer(ctx context.Context, id string) error {
	return call0("delete_load_balancer", func() error { return i.c.DeleteLoadBalancer(ctx, id) })
}
