package diag

import (
	"context"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// ReadOnly wraps an HNS client so that only hnslb.Reader's methods remain:
// what hnsproxy-diag holds of HNS. The client behind it is unexported, so
// no type assertion reaches its writes.
func ReadOnly(r hnslb.Reader) hnslb.Reader { return readOnly{r: r} }

type readOnly struct{ r hnslb.Reader }

func (h readOnly) Version(ctx context.Context) (hnslb.Version, error) { return h.r.Version(ctx) }
func (h readOnly) ListNetworks(ctx context.Context) ([]hnslb.Network, error) {
	return h.r.ListNetworks(ctx)
}
func (h readOnly) OSBuild(ctx context.Context) (hnslb.OSBuild, error) { return h.r.OSBuild(ctx) }
func (h readOnly) ServiceInstance(ctx context.Context) (string, error) {
	return h.r.ServiceInstance(ctx)
}
func (h readOnly) GetNetworkByID(ctx context.Context, id string) (*hnslb.Network, error) {
	return h.r.GetNetworkByID(ctx, id)
}
func (h readOnly) GetNetworkByName(ctx context.Context, name string) (*hnslb.Network, error) {
	return h.r.GetNetworkByName(ctx, name)
}
func (h readOnly) GetEndpointByID(ctx context.Context, id string) (*hnslb.Endpoint, error) {
	return h.r.GetEndpointByID(ctx, id)
}
func (h readOnly) GetEndpointByName(ctx context.Context, name string) (*hnslb.Endpoint, error) {
	return h.r.GetEndpointByName(ctx, name)
}
func (h readOnly) ListEndpoints(ctx context.Context) ([]hnslb.Endpoint, error) {
	return h.r.ListEndpoints(ctx)
}
func (h readOnly) ListEndpointsOfNetwork(ctx context.Context, networkID string) ([]hnslb.Endpoint, error) {
	return h.r.ListEndpointsOfNetwork(ctx, networkID)
}
func (h readOnly) GetNamespaceByID(ctx context.Context, id string) (*hnslb.Namespace, error) {
	return h.r.GetNamespaceByID(ctx, id)
}
func (h readOnly) ListNamespaces(ctx context.Context) ([]hnslb.Namespace, error) {
	return h.r.ListNamespaces(ctx)
}
func (h readOnly) GetLoadBalancerByID(ctx context.Context, id string) (*hnslb.LoadBalancer, error) {
	return h.r.GetLoadBalancerByID(ctx, id)
}
func (h readOnly) ListLoadBalancers(ctx context.Context) ([]hnslb.LoadBalancer, error) {
	return h.r.ListLoadBalancers(ctx)
}
