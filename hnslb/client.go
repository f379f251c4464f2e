package hnslb

import "context"

// Client is HNS as hnsproxy, hnscni and hnssim use it. Implementations: the
// real HNS (hcnclient, Windows), the in-memory simulator (sim), and the
// simulator served over a unix socket (remote). Every method returns *Error
// for HNS failures so callers can use IsNotFound, IsUnavailable and friends.
type Client interface {
	Reader

	CreateNetwork(ctx context.Context, n *Network) (*Network, error)
	DeleteNetwork(ctx context.Context, id string) error

	// CreateEndpoint creates a local or (flag RemoteEndpoint) remote endpoint on a network.
	CreateEndpoint(ctx context.Context, networkID string, e *Endpoint) (*Endpoint, error)
	DeleteEndpoint(ctx context.Context, id string) error

	CreateNamespace(ctx context.Context, ns *Namespace) (*Namespace, error)
	DeleteNamespace(ctx context.Context, id string) error
	AddNamespaceEndpoint(ctx context.Context, namespaceID, endpointID string) error
	RemoveNamespaceEndpoint(ctx context.Context, namespaceID, endpointID string) error

	CreateLoadBalancer(ctx context.Context, lb *LoadBalancer) (*LoadBalancer, error)
	// UpdateLoadBalancer is HNS ModifyLoadBalancer; check Features.ModifyLoadBalancer first.
	UpdateLoadBalancer(ctx context.Context, id string, lb *LoadBalancer) (*LoadBalancer, error)
	DeleteLoadBalancer(ctx context.Context, id string) error
}

// Reader is the part of Client that only looks: what a tool that must never
// change HNS (hnsproxy-diag) holds, so that a write does not compile.
type Reader interface {
	// Version reports HNS's version; Features derive from it.
	Version(ctx context.Context) (Version, error)
	// OSBuild reports the Windows build of the node HNS runs on (the
	// registry's CurrentVersion keys on Windows, the profile in the
	// simulator); the backend cap and known OS bugs depend on it.
	OSBuild(ctx context.Context) (OSBuild, error)
	// ServiceInstance names the run of the HNS service that answers: it
	// changes when HNS restarts (the hns service's process ID on Windows,
	// the restart count in the simulator), so that a restart during which
	// nobody called HNS can still be told. Like OSBuild it is not an HNS
	// call. An error means it cannot be told now.
	ServiceInstance(ctx context.Context) (string, error)

	ListNetworks(ctx context.Context) ([]Network, error)
	GetNetworkByID(ctx context.Context, id string) (*Network, error)
	GetNetworkByName(ctx context.Context, name string) (*Network, error)

	GetEndpointByID(ctx context.Context, id string) (*Endpoint, error)
	GetEndpointByName(ctx context.Context, name string) (*Endpoint, error)
	ListEndpoints(ctx context.Context) ([]Endpoint, error)
	ListEndpointsOfNetwork(ctx context.Context, networkID string) ([]Endpoint, error)

	GetNamespaceByID(ctx context.Context, id string) (*Namespace, error)
	ListNamespaces(ctx context.Context) ([]Namespace, error)

	GetLoadBalancerByID(ctx context.Context, id string) (*LoadBalancer, error)
	ListLoadBalancers(ctx context.Context) ([]LoadBalancer, error)
}

// Snapshot is every object one node's HNS holds, for dumps and the packet model.
type Snapshot struct {
	Version Version `json:"version"`
	OSBuild OSBuild `json:"osBuild"`
	// OSBugs are the dataplane bugs the node has, for the packet model: the
	// simulator fills them from its profile; real HNS cannot say, and
	// TakeSnapshot leaves them empty.
	OSBugs        []OSBug        `json:"osBugs,omitempty"`
	Networks      []Network      `json:"networks"`
	Endpoints     []Endpoint     `json:"endpoints"`
	LoadBalancers []LoadBalancer `json:"loadBalancers"`
	Namespaces    []Namespace    `json:"namespaces"`
}

// TakeSnapshot lists everything through c.
func TakeSnapshot(ctx context.Context, c Reader) (*Snapshot, error) {
	v, err := c.Version(ctx)
	if err != nil {
		return nil, err
	}
	s := &Snapshot{Version: v}
	if s.OSBuild, err = c.OSBuild(ctx); err != nil {
		return nil, err
	}
	if s.Networks, err = c.ListNetworks(ctx); err != nil {
		return nil, err
	}
	if s.Endpoints, err = c.ListEndpoints(ctx); err != nil {
		return nil, err
	}
	if s.LoadBalancers, err = c.ListLoadBalancers(ctx); err != nil {
		return nil, err
	}
	if s.Namespaces, err = c.ListNamespaces(ctx); err != nil {
		return nil, err
	}
	return s, nil
}
