package sim

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

var namespaceTypes = map[hnslb.NamespaceType]bool{
	hnslb.NamespaceTypeHost: true, hnslb.NamespaceTypeHostDefault: true,
	hnslb.NamespaceTypeGuest: true, hnslb.NamespaceTypeGuestDefault: true,
}

// CreateNamespace stores a namespace (a network compartment) under a new ID
// and compartment number. Endpoints join it through AddNamespaceEndpoint.
func (h *HNS) CreateNamespace(ctx context.Context, ns *hnslb.Namespace) (*hnslb.Namespace, error) {
	const op = OpCreateNamespace
	var out *hnslb.Namespace
	err := h.call(ctx, op, func() error {
		stored := &hnslb.Namespace{Type: hnslb.NamespaceTypeHost}
		if ns != nil {
			if ns.Type != "" {
				if !namespaceTypes[ns.Type] {
					return hnsError(op, hnslb.CodeInvalidParameter, "unknown namespace type %q", ns.Type)
				}
				stored.Type = ns.Type
			}
			if len(ns.Resources) > 0 {
				return hnsError(op, hnslb.CodeInvalidParameter, "a new namespace has no resources; attach endpoints with AddNamespaceEndpoint")
			}
		}
		stored.ID = h.state.ids.guid()
		h.state.namespaceSeq++
		stored.NamespaceId = h.state.namespaceSeq
		stored.SchemaVersion = hnslb.V2
		h.state.namespaces.put(stored.ID, stored)
		out = copyNamespace(stored)
		return nil
	})
	return result(out, err)
}

// GetNamespaceByID returns a namespace, or CodeNotFound.
func (h *HNS) GetNamespaceByID(ctx context.Context, id string) (*hnslb.Namespace, error) {
	return getByID(ctx, h, OpGetNamespace, "namespace", &h.state.namespaces, id, copyNamespace)
}

// ListNamespaces returns every namespace.
func (h *HNS) ListNamespaces(ctx context.Context) ([]hnslb.Namespace, error) {
	return list(ctx, h, OpListNamespaces, &h.state.namespaces, nil, copyNamespace)
}

// DeleteNamespace deletes a namespace; its endpoints stay, detached.
func (h *HNS) DeleteNamespace(ctx context.Context, id string) error {
	return deleteByID(ctx, h, OpDeleteNamespace, "namespace", &h.state.namespaces, id, func(ns *hnslb.Namespace) {
		h.state.endpoints.each(func(e *hnslb.Endpoint) {
			if key(e.HostComputeNamespace) == key(ns.ID) {
				e.HostComputeNamespace = ""
			}
		})
		h.state.namespaces.del(ns.ID)
	})
}

// AddNamespaceEndpoint attaches a local endpoint to a namespace. An endpoint
// lives in one namespace at a time.
func (h *HNS) AddNamespaceEndpoint(ctx context.Context, namespaceID, endpointID string) error {
	const op = OpAddNamespaceEndpoint
	return h.call(ctx, op, func() error {
		ns, e, err := h.namespaceAndEndpoint(op, namespaceID, endpointID)
		if err != nil {
			return err
		}
		if e.IsRemote() {
			return hnsError(op, hnslb.CodeInvalidEndpoint, "endpoint %s is remote", e.ID)
		}
		if e.HostComputeNamespace != "" {
			return hnsError(op, hnslb.CodeEndpointAlreadyAttach, "endpoint %s is in namespace %s", e.ID, e.HostComputeNamespace)
		}
		data, err := json.Marshal(hnslb.NamespaceResourceEndpoint{ID: e.ID})
		if err != nil {
			return hnsError(op, hnslb.CodeInvalidParameter, "%v", err)
		}
		ns.Resources = append(ns.Resources, hnslb.NamespaceResource{Type: hnslb.NamespaceResourceTypeEndpoint, Data: data})
		e.HostComputeNamespace = ns.ID
		return nil
	})
}

// RemoveNamespaceEndpoint detaches an endpoint from its namespace.
func (h *HNS) RemoveNamespaceEndpoint(ctx context.Context, namespaceID, endpointID string) error {
	const op = OpRemoveNamespaceEndpoint
	return h.call(ctx, op, func() error {
		ns, e, err := h.namespaceAndEndpoint(op, namespaceID, endpointID)
		if err != nil {
			return err
		}
		if key(e.HostComputeNamespace) != key(ns.ID) {
			return hnsError(op, hnslb.CodeNotFound, "endpoint %s is not in namespace %s", e.ID, ns.ID)
		}
		detach(ns, e.ID)
		e.HostComputeNamespace = ""
		return nil
	})
}

func (h *HNS) namespaceAndEndpoint(op Op, namespaceID, endpointID string) (*hnslb.Namespace, *hnslb.Endpoint, error) {
	ns, err := find(op, "namespace", &h.state.namespaces, namespaceID, hnslb.CodeNotFound)
	if err != nil {
		return nil, nil, err
	}
	if err := checkID(op, "endpoint", endpointID); err != nil {
		return nil, nil, err
	}
	e, ok := h.state.endpoints.get(endpointID)
	if !ok {
		return nil, nil, hnsError(op, hnslb.CodeEndpointNotFound, "endpoint %s", endpointID)
	}
	return ns, e, nil
}

// detach drops an endpoint's resource from a namespace.
func detach(ns *hnslb.Namespace, endpointID string) {
	ns.Resources = slices.DeleteFunc(ns.Resources, func(r hnslb.NamespaceResource) bool {
		if r.Type != hnslb.NamespaceResourceTypeEndpoint {
			return false
		}
		var d hnslb.NamespaceResourceEndpoint
		return json.Unmarshal(r.Data, &d) == nil && key(d.ID) == key(endpointID)
	})
	if len(ns.Resources) == 0 {
		ns.Resources = nil
	}
}
