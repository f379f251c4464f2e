package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// bridgeKind is how the bridge serves one kind of HNS object: the logical
// hnslb.Client call behind each Hcn* function, and the object as HNS stores
// it for queries that follow a call (which are part of that call, so they
// are neither counted nor faulted again).
type bridgeKind struct {
	name, plural string
	list         func(context.Context) ([]json.RawMessage, error)
	// filters serve an enumerate whose query filters on one key (hcn's
	// Get*ByID filters on "ID", Get*ByName on "Name",
	// ListEndpointsOfNetwork on "VirtualNetwork").
	filters map[string]func(context.Context, string) ([]json.RawMessage, error)
	// create makes an object; parentID is the network an endpoint joins.
	create func(ctx context.Context, parentID string, doc []byte) (json.RawMessage, error)
	// modify changes an object and returns it, or nil to read it back from
	// stored; nil means HNS's modify of this kind is not served.
	modify func(ctx context.Context, id string, doc []byte) (json.RawMessage, error)
	remove func(context.Context, string) error
	stored func(*hnslb.Snapshot, string) (json.RawMessage, bool)
}

func bridgeKinds(c hnslb.Client) []*bridgeKind {
	return []*bridgeKind{
		{
			name: "Network", plural: "Networks",
			list: func(ctx context.Context) ([]json.RawMessage, error) { return docs(c.ListNetworks(ctx)) },
			filters: map[string]func(context.Context, string) ([]json.RawMessage, error){
				"ID":   func(ctx context.Context, id string) ([]json.RawMessage, error) { return one(c.GetNetworkByID(ctx, id)) },
				"Name": func(ctx context.Context, n string) ([]json.RawMessage, error) { return one(c.GetNetworkByName(ctx, n)) },
			},
			create: func(ctx context.Context, _ string, doc []byte) (json.RawMessage, error) {
				return withDoc(ctx, doc, c.CreateNetwork)
			},
			remove: c.DeleteNetwork,
			stored: func(s *hnslb.Snapshot, id string) (json.RawMessage, bool) {
				return find(s.Networks, id, func(o *hnslb.Network) string { return o.ID })
			},
		},
		{
			name: "Endpoint", plural: "Endpoints",
			list: func(ctx context.Context) ([]json.RawMessage, error) { return docs(c.ListEndpoints(ctx)) },
			filters: map[string]func(context.Context, string) ([]json.RawMessage, error){
				"ID": func(ctx context.Context, id string) ([]json.RawMessage, error) {
					return one(c.GetEndpointByID(ctx, id))
				},
				"Name": func(ctx context.Context, n string) ([]json.RawMessage, error) {
					return one(c.GetEndpointByName(ctx, n))
				},
				"VirtualNetwork": func(ctx context.Context, id string) ([]json.RawMessage, error) {
					return docs(c.ListEndpointsOfNetwork(ctx, id))
				},
			},
			create: func(ctx context.Context, networkID string, doc []byte) (json.RawMessage, error) {
				return withDoc(ctx, doc, func(ctx context.Context, e *hnslb.Endpoint) (*hnslb.Endpoint, error) {
					return c.CreateEndpoint(ctx, networkID, e)
				})
			},
			remove: c.DeleteEndpoint,
			stored: func(s *hnslb.Snapshot, id string) (json.RawMessage, bool) {
				return find(s.Endpoints, id, func(o *hnslb.Endpoint) string { return o.ID })
			},
		},
		{
			name: "Namespace", plural: "Namespaces",
			list: func(ctx context.Context) ([]json.RawMessage, error) { return docs(c.ListNamespaces(ctx)) },
			filters: map[string]func(context.Context, string) ([]json.RawMessage, error){
				"ID": func(ctx context.Context, id string) ([]json.RawMessage, error) {
					return one(c.GetNamespaceByID(ctx, id))
				},
			},
			create: func(ctx context.Context, _ string, doc []byte) (json.RawMessage, error) {
				return withDoc(ctx, doc, c.CreateNamespace)
			},
			modify: func(ctx context.Context, id string, doc []byte) (json.RawMessage, error) {
				return nil, modifyNamespace(ctx, c, id, doc)
			},
			remove: c.DeleteNamespace,
			stored: func(s *hnslb.Snapshot, id string) (json.RawMessage, bool) {
				return find(s.Namespaces, id, func(o *hnslb.Namespace) string { return o.ID })
			},
		},
		{
			name: "LoadBalancer", plural: "LoadBalancers",
			list: func(ctx context.Context) ([]json.RawMessage, error) { return docs(c.ListLoadBalancers(ctx)) },
			filters: map[string]func(context.Context, string) ([]json.RawMessage, error){
				"ID": func(ctx context.Context, id string) ([]json.RawMessage, error) {
					return one(c.GetLoadBalancerByID(ctx, id))
				},
			},
			create: func(ctx context.Context, _ string, doc []byte) (json.RawMessage, error) {
				return withDoc(ctx, doc, c.CreateLoadBalancer)
			},
			modify: func(ctx context.Context, id string, doc []byte) (json.RawMessage, error) {
				return withDoc(ctx, doc, func(ctx context.Context, lb *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
					return c.UpdateLoadBalancer(ctx, id, lb)
				})
			},
			remove: c.DeleteLoadBalancer,
			stored: func(s *hnslb.Snapshot, id string) (json.RawMessage, bool) {
				return find(s.LoadBalancers, id, func(o *hnslb.LoadBalancer) string { return o.ID })
			},
		},
	}
}

// namespaceRequest is hcn's ModifyNamespaceSettingRequest.
type namespaceRequest struct {
	ResourceType string
	RequestType  string
	Settings     struct{ EndpointId string } //nolint:revive // HNS's field name
}

// modifyNamespace serves the two namespace modifications hcn makes:
// attaching and detaching an endpoint.
func modifyNamespace(ctx context.Context, c hnslb.Client, id string, doc []byte) error {
	var req namespaceRequest
	if err := json.Unmarshal(doc, &req); err != nil {
		return hnslb.NewError("ModifyNamespace", hnslb.CodeInvalidParameter, "decode request: %v", err)
	}
	switch {
	case req.ResourceType != "Endpoint":
		return hnslb.NewError("ModifyNamespace", hnslb.CodeNotImplemented, "resource type %q is not served by the bridge", req.ResourceType)
	case req.RequestType == "Add":
		return c.AddNamespaceEndpoint(ctx, id, req.Settings.EndpointId)
	case req.RequestType == "Remove":
		return c.RemoveNamespaceEndpoint(ctx, id, req.Settings.EndpointId)
	}
	return hnslb.NewError("ModifyNamespace", hnslb.CodeInvalidParameter, "request type %q", req.RequestType)
}

// docs encodes listed objects.
func docs[T any](objs []T, err error) ([]json.RawMessage, error) {
	if err != nil {
		return nil, err
	}
	out := make([]json.RawMessage, 0, len(objs))
	for i := range objs {
		b, err := json.Marshal(&objs[i])
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// one is a lookup as an enumerate with a filter: nothing found is an empty
// list, not an error (hcn turns the empty list into its *NotFoundError).
func one[T any](obj *T, err error) ([]json.RawMessage, error) {
	if hnslb.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return docs([]T{*obj}, nil)
}

// withDoc decodes doc as T and hands it to fn; a bad document is HNS's
// invalid parameter.
func withDoc[T any](ctx context.Context, doc []byte, fn func(context.Context, *T) (*T, error)) (json.RawMessage, error) {
	obj := new(T)
	if err := json.Unmarshal(doc, obj); err != nil {
		return nil, hnslb.NewError("Decode", hnslb.CodeInvalidParameter, "decode %T: %v", obj, err)
	}
	out, err := fn(ctx, obj)
	if err != nil {
		return nil, err
	}
	return json.Marshal(out)
}

// find is the stored object with id, encoded.
func find[T any](objs []T, id string, idOf func(*T) string) (json.RawMessage, bool) {
	for i := range objs {
		if strings.EqualFold(idOf(&objs[i]), id) {
			b, err := json.Marshal(&objs[i])
			return b, err == nil
		}
	}
	return nil, false
}

// idOf reads an encoded object's ID.
func idOf(doc json.RawMessage) (string, error) {
	var o struct{ ID string }
	if err := json.Unmarshal(doc, &o); err != nil || o.ID == "" {
		return "", fmt.Errorf("object without an ID: %.80s", doc)
	}
	return o.ID, nil
}
