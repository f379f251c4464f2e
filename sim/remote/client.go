package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// Client is an hnslb.Client for an HNS served on a unix socket, plus the
// simulator's diagnostics. It is safe for concurrent use and reconnects as
// needed: the server, not the connection, holds the state. It speaks the
// frames wire (frames.go), one call at a time on each connection.
type Client struct {
	socket string
	conns  *connPool
}

var _ hnslb.Client = (*Client)(nil)

// NewClient returns a client for the server listening on socketPath. It does
// not connect until the first call.
func NewClient(socketPath string) *Client {
	return &Client{socket: socketPath, conns: &connPool{socket: socketPath, dialer: net.Dialer{Timeout: 5 * time.Second}}}
}

// Dial returns a client for a "unix:///path" endpoint (hnslb.ParseUnixEndpoint).
func Dial(endpoint string) (*Client, error) {
	path, err := hnslb.ParseUnixEndpoint(endpoint)
	if err != nil {
		return nil, err
	}
	return NewClient(path), nil
}

// Close drops idle connections.
func (c *Client) Close() { c.conns.closeIdle() }

// call sends in (if not nil) as JSON and decodes the reply into out (if not nil).
func (c *Client) call(ctx context.Context, op, method, path string, in, out any) error {
	resp, err := c.send(ctx, op, method, path, in)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return c.readError(ctx, op, err)
	}
	if out == nil || resp.StatusCode == http.StatusNoContent {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return hnslb.NewError(op, codeFail, "decode reply: %v", err)
	}
	return nil
}

// send sends in (if not nil) as JSON and returns a successful reply, whose
// body the caller reads and closes; a failed reply is an error.
func (c *Client) send(ctx context.Context, op, method, path string, in any) (*framesReply, error) {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return nil, hnslb.NewError(op, hnslb.CodeInvalidParameter, "encode request: %v", err)
		}
	}
	resp, err := c.conns.roundTrip(ctx, method, path, body)
	if err != nil {
		if err := contextError(ctx); err != nil {
			return nil, err
		}
		// An unreachable server is HNS being down, never "not found".
		return nil, hnslb.NewError(op, hnslb.CodeRPCServerUnavailable, "hns at %s unreachable: %v", c.socket, err)
	}
	if resp.StatusCode < 300 {
		return resp, nil
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, c.readError(ctx, op, err)
	}
	return nil, replyError(op, resp.StatusCode, data)
}

// readError is the error of a reply that broke off while being read.
func (c *Client) readError(ctx context.Context, op string, err error) error {
	if err := contextError(ctx); err != nil {
		return err
	}
	return hnslb.NewError(op, hnslb.CodeRPCServerUnavailable, "read reply from %s: %v", c.socket, err)
}

// replyError turns a failed reply into *hnslb.Error.
func replyError(op string, status int, data []byte) error {
	var we wireError
	if err := json.Unmarshal(data, &we); err == nil && we.Code != 0 {
		if we.Op == "" {
			we.Op = op
		}
		return &hnslb.Error{Op: we.Op, Code: we.Code, Message: we.Message}
	}
	// Not one of our replies (a proxy, a crashed handler): say what came back.
	code := codeFail
	if status >= 500 {
		code = hnslb.CodeRPCServerUnavailable
	}
	return hnslb.NewError(op, code, "HTTP %d: %.200s", status, bytes.TrimSpace(data))
}

func byName(path, name string) string {
	return path + "/byname?" + url.Values{"name": {name}}.Encode()
}

func idPath(path, id string) string { return path + "/" + idSegment(id) }

func (c *Client) Version(ctx context.Context) (hnslb.Version, error) {
	var v hnslb.Version
	err := c.call(ctx, "Version", http.MethodGet, pathVersion, nil, &v)
	return v, err
}

// OSBuild reports the served node's Windows build.
func (c *Client) OSBuild(ctx context.Context) (hnslb.OSBuild, error) {
	var b hnslb.OSBuild
	err := c.call(ctx, "OSBuild", http.MethodGet, pathOSBuild, nil, &b)
	return b, err
}

// ServiceInstance reports which run of the served HNS answers.
func (c *Client) ServiceInstance(ctx context.Context) (string, error) {
	var inst string
	err := c.call(ctx, "ServiceInstance", http.MethodGet, pathInstance, nil, &inst)
	return inst, err
}

func (c *Client) ListNetworks(ctx context.Context) ([]hnslb.Network, error) {
	var v []hnslb.Network
	return v, c.call(ctx, "ListNetworks", http.MethodGet, pathNetworks, nil, &v)
}

func (c *Client) GetNetworkByID(ctx context.Context, id string) (*hnslb.Network, error) {
	return getOne[hnslb.Network](ctx, c, "GetNetworkByID", idPath(pathNetworks, id))
}

func (c *Client) GetNetworkByName(ctx context.Context, name string) (*hnslb.Network, error) {
	return getOne[hnslb.Network](ctx, c, "GetNetworkByName", byName(pathNetworks, name))
}

func (c *Client) CreateNetwork(ctx context.Context, n *hnslb.Network) (*hnslb.Network, error) {
	return postOne(ctx, c, "CreateNetwork", http.MethodPost, pathNetworks, n)
}

func (c *Client) DeleteNetwork(ctx context.Context, id string) error {
	return c.call(ctx, "DeleteNetwork", http.MethodDelete, idPath(pathNetworks, id), nil, nil)
}

func (c *Client) CreateEndpoint(ctx context.Context, networkID string, e *hnslb.Endpoint) (*hnslb.Endpoint, error) {
	return postOne(ctx, c, "CreateEndpoint", http.MethodPost, idPath(pathNetworks, networkID)+pathEndpoints, e)
}

func (c *Client) GetEndpointByID(ctx context.Context, id string) (*hnslb.Endpoint, error) {
	return getOne[hnslb.Endpoint](ctx, c, "GetEndpointByID", idPath(pathEndpoints, id))
}

func (c *Client) GetEndpointByName(ctx context.Context, name string) (*hnslb.Endpoint, error) {
	return getOne[hnslb.Endpoint](ctx, c, "GetEndpointByName", byName(pathEndpoints, name))
}

func (c *Client) ListEndpoints(ctx context.Context) ([]hnslb.Endpoint, error) {
	var v []hnslb.Endpoint
	return v, c.call(ctx, "ListEndpoints", http.MethodGet, pathEndpoints, nil, &v)
}

func (c *Client) ListEndpointsOfNetwork(ctx context.Context, networkID string) ([]hnslb.Endpoint, error) {
	var v []hnslb.Endpoint
	return v, c.call(ctx, "ListEndpointsOfNetwork", http.MethodGet, idPath(pathNetworks, networkID)+pathEndpoints, nil, &v)
}

func (c *Client) DeleteEndpoint(ctx context.Context, id string) error {
	return c.call(ctx, "DeleteEndpoint", http.MethodDelete, idPath(pathEndpoints, id), nil, nil)
}

func (c *Client) CreateNamespace(ctx context.Context, ns *hnslb.Namespace) (*hnslb.Namespace, error) {
	return postOne(ctx, c, "CreateNamespace", http.MethodPost, pathNamespaces, ns)
}

func (c *Client) GetNamespaceByID(ctx context.Context, id string) (*hnslb.Namespace, error) {
	return getOne[hnslb.Namespace](ctx, c, "GetNamespaceByID", idPath(pathNamespaces, id))
}

func (c *Client) ListNamespaces(ctx context.Context) ([]hnslb.Namespace, error) {
	var v []hnslb.Namespace
	return v, c.call(ctx, "ListNamespaces", http.MethodGet, pathNamespaces, nil, &v)
}

func (c *Client) DeleteNamespace(ctx context.Context, id string) error {
	return c.call(ctx, "DeleteNamespace", http.MethodDelete, idPath(pathNamespaces, id), nil, nil)
}

func namespaceEndpointPath(namespaceID, endpointID string) string {
	return idPath(pathNamespaces, namespaceID) + idPath(pathEndpoints, endpointID)
}

func (c *Client) AddNamespaceEndpoint(ctx context.Context, namespaceID, endpointID string) error {
	return c.call(ctx, "AddNamespaceEndpoint", http.MethodPut, namespaceEndpointPath(namespaceID, endpointID), nil, nil)
}

func (c *Client) RemoveNamespaceEndpoint(ctx context.Context, namespaceID, endpointID string) error {
	return c.call(ctx, "RemoveNamespaceEndpoint", http.MethodDelete, namespaceEndpointPath(namespaceID, endpointID), nil, nil)
}

func (c *Client) CreateLoadBalancer(ctx context.Context, lb *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	return postOne(ctx, c, "CreateLoadBalancer", http.MethodPost, pathLoadBalancers, lb)
}

func (c *Client) UpdateLoadBalancer(ctx context.Context, id string, lb *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	return postOne(ctx, c, "UpdateLoadBalancer", http.MethodPut, idPath(pathLoadBalancers, id), lb)
}

func (c *Client) GetLoadBalancerByID(ctx context.Context, id string) (*hnslb.LoadBalancer, error) {
	return getOne[hnslb.LoadBalancer](ctx, c, "GetLoadBalancerByID", idPath(pathLoadBalancers, id))
}

func (c *Client) ListLoadBalancers(ctx context.Context) ([]hnslb.LoadBalancer, error) {
	var v []hnslb.LoadBalancer
	return v, c.call(ctx, "ListLoadBalancers", http.MethodGet, pathLoadBalancers, nil, &v)
}

func (c *Client) DeleteLoadBalancer(ctx context.Context, id string) error {
	return c.call(ctx, "DeleteLoadBalancer", http.MethodDelete, idPath(pathLoadBalancers, id), nil, nil)
}

// Dump returns every object the served HNS holds.
func (c *Client) Dump(ctx context.Context) (*hnslb.Snapshot, error) {
	return getOne[hnslb.Snapshot](ctx, c, "Dump", pathDump)
}

// LoadBalancersOn returns the load balancers the served HNS holds on
// frontend vip, uncounted like Dump.
func (c *Client) LoadBalancersOn(ctx context.Context, vip string) ([]hnslb.LoadBalancer, error) {
	snap, err := getOne[hnslb.Snapshot](ctx, c, "Dump", pathDump+"?frontend="+url.QueryEscape(vip))
	if err != nil {
		return nil, err
	}
	return snap.LoadBalancers, nil
}

// Stats returns the served simulator's operation counters as raw JSON.
func (c *Client) Stats(ctx context.Context) (json.RawMessage, error) {
	var v json.RawMessage
	return v, c.call(ctx, "Stats", http.MethodGet, pathStats, nil, &v)
}

// Node says which node the server plays.
func (c *Client) Node(ctx context.Context) (NodeInfo, error) {
	var v NodeInfo
	return v, c.call(ctx, "Node", http.MethodGet, pathNode, nil, &v)
}

// Peer returns the server's node and state, to ship with a trace to another server.
func (c *Client) Peer(ctx context.Context) (PeerNode, error) {
	info, err := c.Node(ctx)
	if err != nil {
		return PeerNode{}, err
	}
	snap, err := c.Dump(ctx)
	if err != nil {
		return PeerNode{}, err
	}
	return PeerNode{NodeInfo: info, HNS: snap}, nil
}

// Trace asks the server for the packet model's verdict, as raw JSON.
func (c *Client) Trace(ctx context.Context, req TraceRequest) (json.RawMessage, error) {
	var v json.RawMessage
	return v, c.call(ctx, "Trace", http.MethodPost, pathTrace, req, &v)
}

// SetFaults changes the served simulator's faults.
func (c *Client) SetFaults(ctx context.Context, req FaultsRequest) error {
	return c.call(ctx, "SetFaults", http.MethodPost, pathFaults, req, nil)
}

// SetRemoteSubnets replaces a network's RemoteSubnetRoute policies.
func (c *Client) SetRemoteSubnets(ctx context.Context, req RemoteSubnetsRequest) error {
	return c.call(ctx, "SetRemoteSubnets", http.MethodPost, pathRemoteSubnets, req, nil)
}

func getOne[T any](ctx context.Context, c *Client, op, path string) (*T, error) {
	var v T
	if err := c.call(ctx, op, http.MethodGet, path, nil, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

func postOne[T any](ctx context.Context, c *Client, op, method, path string, in *T) (*T, error) {
	if in == nil {
		return nil, hnslb.NewError(op, hnslb.CodeInvalidParameter, "nil document")
	}
	var v T
	if err := c.call(ctx, op, method, path, in, &v); err != nil {
		return nil, err
	}
	return &v, nil
}
