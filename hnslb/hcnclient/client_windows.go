//go:build windows

package hcnclient

import (
	"context"
	"fmt"

	"github.com/Microsoft/hcsshim/hcn"
	"golang.org/x/sys/windows"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// Client is hnslb.Client over hcn. It keeps no state: HNS holds it all.
type Client struct{}

var _ hnslb.Client = (*Client)(nil)

// hcnDLL exports the Hcn* functions hcn calls for every object operation.
const hcnDLL = "computenetwork.dll"

// New returns the real HNS client, or an error if this Windows has no HNS API
// (no Containers feature, or Wine).
func New() (hnslb.Client, error) {
	if err := requireSystemDLL(hcnDLL); err != nil {
		return nil, err
	}
	return &Client{}, nil
}

func requireSystemDLL(name string) error {
	if err := windows.NewLazySystemDLL(name).Load(); err != nil {
		return fmt.Errorf("HNS API unavailable: cannot load %s (is the Windows Containers feature installed?): %w", name, err)
	}
	return nil
}

// Version reports HNS's version. It asks HNS each time rather than using
// hcn.GetCachedSupportedFeatures, which caches a failure forever (an HNS
// restart during start-up would stick).
func (c *Client) Version(ctx context.Context) (hnslb.Version, error) {
	var v hnslb.Version
	err := call(ctx, "GetVersion", func() error {
		g, err := hcn.GetGlobals()
		if err != nil {
			return err
		}
		v = hnslb.Version{Major: g.Version.Major, Minor: g.Version.Minor}
		return nil
	})
	return v, err
}

func (c *Client) ListNetworks(ctx context.Context) ([]hnslb.Network, error) {
	return list[hnslb.Network](ctx, "ListNetworks", listNetworks)
}

func (c *Client) GetNetworkByID(ctx context.Context, id string) (*hnslb.Network, error) {
	return get(ctx, "GetNetworkByID", func() (*hcn.HostComputeNetwork, error) { return getNetworkByID(id) }, convertTo[hcn.HostComputeNetwork, hnslb.Network])
}

func (c *Client) GetNetworkByName(ctx context.Context, name string) (*hnslb.Network, error) {
	return get(ctx, "GetNetworkByName", func() (*hcn.HostComputeNetwork, error) { return getNetworkByName(name) }, convertTo[hcn.HostComputeNetwork, hnslb.Network])
}

func (c *Client) CreateNetwork(ctx context.Context, n *hnslb.Network) (*hnslb.Network, error) {
	return send[hnslb.Network](ctx, "CreateNetwork", n, (*hcn.HostComputeNetwork).Create)
}

func (c *Client) DeleteNetwork(ctx context.Context, id string) error {
	return refused(call(ctx, "DeleteNetwork", (&hcn.HostComputeNetwork{Id: id}).Delete), badID(id))
}

func (c *Client) CreateEndpoint(ctx context.Context, networkID string, e *hnslb.Endpoint) (*hnslb.Endpoint, error) {
	out, err := send[hnslb.Endpoint](ctx, "CreateEndpoint", e, func(h *hcn.HostComputeEndpoint) (*hcn.HostComputeEndpoint, error) {
		// The endpoint is created on the network its HostComputeNetwork
		// names, as hcn's Create does (handles_windows.go: closing handles).
		h.HostComputeNetwork = networkID
		return createEndpoint(h)
	})
	return out, refused(err, badEndpointCreate(networkID, e))
}

func (c *Client) GetEndpointByID(ctx context.Context, id string) (*hnslb.Endpoint, error) {
	return get(ctx, "GetEndpointByID", func() (*hcn.HostComputeEndpoint, error) { return getEndpointByID(id) }, convertTo[hcn.HostComputeEndpoint, hnslb.Endpoint])
}

func (c *Client) GetEndpointByName(ctx context.Context, name string) (*hnslb.Endpoint, error) {
	return get(ctx, "GetEndpointByName", func() (*hcn.HostComputeEndpoint, error) { return getEndpointByName(name) }, convertTo[hcn.HostComputeEndpoint, hnslb.Endpoint])
}

func (c *Client) ListEndpoints(ctx context.Context) ([]hnslb.Endpoint, error) {
	return list[hnslb.Endpoint](ctx, "ListEndpoints", listEndpoints)
}

func (c *Client) ListEndpointsOfNetwork(ctx context.Context, networkID string) ([]hnslb.Endpoint, error) {
	return list[hnslb.Endpoint](ctx, "ListEndpointsOfNetwork", func() ([]hcn.HostComputeEndpoint, error) {
		return listEndpointsOfNetwork(networkID)
	})
}

func (c *Client) DeleteEndpoint(ctx context.Context, id string) error {
	return refused(call(ctx, "DeleteEndpoint", (&hcn.HostComputeEndpoint{Id: id}).Delete), badID(id))
}

func (c *Client) CreateNamespace(ctx context.Context, ns *hnslb.Namespace) (*hnslb.Namespace, error) {
	return send[hnslb.Namespace](ctx, "CreateNamespace", ns, (*hcn.HostComputeNamespace).Create)
}

func (c *Client) GetNamespaceByID(ctx context.Context, id string) (*hnslb.Namespace, error) {
	return get(ctx, "GetNamespaceByID", func() (*hcn.HostComputeNamespace, error) { return getNamespaceByID(id) }, convertTo[hcn.HostComputeNamespace, hnslb.Namespace])
}

func (c *Client) ListNamespaces(ctx context.Context) ([]hnslb.Namespace, error) {
	return list[hnslb.Namespace](ctx, "ListNamespaces", listNamespaces)
}

func (c *Client) DeleteNamespace(ctx context.Context, id string) error {
	return refused(call(ctx, "DeleteNamespace", (&hcn.HostComputeNamespace{Id: id}).Delete), badID(id))
}

// AddNamespaceEndpoint is hcn's AddNamespaceEndpoint, made as
// handles_windows.go says.
func (c *Client) AddNamespaceEndpoint(ctx context.Context, namespaceID, endpointID string) error {
	return c.modifyNamespaceEndpoint(ctx, "AddNamespaceEndpoint", hcn.RequestTypeAdd, namespaceID, endpointID)
}

// RemoveNamespaceEndpoint is hcn's RemoveNamespaceEndpoint, made as
// handles_windows.go says.
func (c *Client) RemoveNamespaceEndpoint(ctx context.Context, namespaceID, endpointID string) error {
	return c.modifyNamespaceEndpoint(ctx, "RemoveNamespaceEndpoint", hcn.RequestTypeRemove, namespaceID, endpointID)
}

func (c *Client) modifyNamespaceEndpoint(ctx context.Context, op string, requestType hcn.RequestType, namespaceID, endpointID string) error {
	return refused(call(ctx, op, func() error {
		request, err := namespaceEndpointRequest(requestType, endpointID)
		if err != nil {
			return err
		}
		return modifyNamespace(namespaceID, request)
	}), badID(namespaceID))
}

func (c *Client) CreateLoadBalancer(ctx context.Context, lb *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	return sendConverted(ctx, "CreateLoadBalancer", lb, toHcnLoadBalancer, createLoadBalancer, fromHcnLoadBalancer)
}

// UpdateLoadBalancer is HNS ModifyLoadBalancer (hcn's Update, made as
// handles_windows.go says). The caller checks Features.ModifyLoadBalancer:
// HNS 15.4 reports success but keeps the old backends.
func (c *Client) UpdateLoadBalancer(ctx context.Context, id string, lb *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	out, err := sendConverted(ctx, "UpdateLoadBalancer", lb, toHcnLoadBalancer, func(h *hcn.HostComputeLoadBalancer) (*hcn.HostComputeLoadBalancer, error) {
		return updateLoadBalancer(id, h)
	}, fromHcnLoadBalancer)
	return out, refused(err, badID(id))
}

func (c *Client) GetLoadBalancerByID(ctx context.Context, id string) (*hnslb.LoadBalancer, error) {
	return get(ctx, "GetLoadBalancerByID", func() (*hcn.HostComputeLoadBalancer, error) {
		return getLoadBalancerByID(id)
	}, fromHcnLoadBalancer)
}

func (c *Client) ListLoadBalancers(ctx context.Context) ([]hnslb.LoadBalancer, error) {
	return list[hnslb.LoadBalancer](ctx, "ListLoadBalancers", listLoadBalancers)
}

func (c *Client) DeleteLoadBalancer(ctx context.Context, id string) error {
	return refused(call(ctx, "DeleteLoadBalancer", (&hcn.HostComputeLoadBalancer{Id: id}).Delete), badID(id))
}
