package sim

import (
	"context"
	"net/netip"
	"slices"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// CreateEndpoint stores a local or (flag RemoteEndpoint) remote endpoint on
// an existing network. Its addresses must be unique on the network.
func (h *HNS) CreateEndpoint(ctx context.Context, networkID string, e *hnslb.Endpoint) (*hnslb.Endpoint, error) {
	const op = OpCreateEndpoint
	var out *hnslb.Endpoint
	err := h.call(ctx, op, func() error {
		if err := checkID(op, "network", networkID); err != nil {
			return err
		}
		if e != nil && e.HostComputeNamespace != "" {
			// hcn refuses it before it calls HNS (HostComputeEndpoint.Create).
			return hnsError(op, hnslb.CodeInvalidParameter, "HostComputeNamespace is read only: attach with AddNamespaceEndpoint")
		}
		n, ok := h.state.networks.get(networkID)
		if !ok {
			return hnsError(op, h.variants.MissingNetwork, "network %s", networkID)
		}
		if e != nil && len(e.IpConfigurations) == 0 && !e.IsRemote() {
			// HNS assigns a local endpoint without an address one from the
			// network's subnet (the reference CNI plugins' "no IPAM" mode).
			assigned, err := h.assignAddress(op, n, e)
			if err != nil {
				return err
			}
			e = assigned
		}
		ips, err := checkEndpoint(op, e)
		if err != nil {
			return err
		}
		if err := h.checkEndpointIPsFree(op, n.ID, e.IsRemote(), ips); err != nil {
			return err
		}
		stored := copyEndpoint(e)
		stored.ID = h.state.ids.guid()
		stored.HostComputeNetwork = n.ID
		stored.SchemaVersion = hnslb.V2
		stored.Health = hnslb.Health{}
		if stored.MacAddress == "" {
			stored.MacAddress = h.state.ids.mac()
		}
		h.state.putEndpoint(stored)
		out = h.answerEndpoint(stored)
		return nil
	})
	return result(out, err)
}

// checkEndpoint validates the document and returns its addresses.
func checkEndpoint(op Op, e *hnslb.Endpoint) ([]netip.Addr, error) {
	if e == nil {
		return nil, hnsError(op, hnslb.CodeInvalidParameter, "no endpoint document")
	}
	if len(e.IpConfigurations) == 0 {
		// Only a remote endpoint gets here without one (see assignAddress).
		return nil, hnsError(op, hnslb.CodeInvalidParameter, "remote endpoint has no IP configuration")
	}
	if len(e.IpConfigurations) > 2 {
		return nil, hnsError(op, hnslb.CodeInvalidParameter, "endpoint has %d IP configurations, at most one per family", len(e.IpConfigurations))
	}
	var ips []netip.Addr
	for _, c := range e.IpConfigurations {
		a, ok := parseIP(c.IpAddress)
		if !ok {
			return nil, hnsError(op, hnslb.CodeInvalidIP, "%q", c.IpAddress)
		}
		if int(c.PrefixLength) > a.BitLen() {
			return nil, hnsError(op, hnslb.CodeInvalidParameter, "prefix length %d for %s", c.PrefixLength, a)
		}
		if len(ips) == 1 && ips[0].Is4() == a.Is4() {
			return nil, hnsError(op, hnslb.CodeInvalidParameter, "two addresses of one family (%s, %s)", ips[0], a)
		}
		ips = append(ips, a)
	}
	// A policy HNS cannot read is HCN_E_INVALID_POLICY on an endpoint
	// create (projectcalico/calico#8465).
	for _, p := range e.Policies {
		if p.Type == "" {
			return nil, hnsError(op, hnslb.CodeInvalidPolicy, "endpoint policy without a type")
		}
		if err := checkSettings(op, hnslb.CodeInvalidPolicy, string(p.Type), p.Settings); err != nil {
			return nil, err
		}
		if p.Type == hnslb.EndpointPolicyProviderAddress {
			var s hnslb.ProviderAddressEndpointPolicySetting
			if err := hnslb.DecodeSettings(p.Settings, &s); err != nil {
				return nil, hnsError(op, hnslb.CodeInvalidPolicy, "ProviderAddress settings: %v", err)
			}
			if _, ok := parseIP(s.ProviderAddress); !ok {
				return nil, hnsError(op, hnslb.CodeInvalidIP, "provider address %q", s.ProviderAddress)
			}
		}
	}
	return ips, nil
}

// checkEndpointIPsFree enforces one endpoint per address on a network. On
// profiles with LocalRemoteIPOverlap a local and a remote endpoint may share
// an address (the Windows Server 2019/2022 bug).
func (h *HNS) checkEndpointIPsFree(op Op, networkID string, remote bool, ips []netip.Addr) error {
	for _, a := range ips {
		if slices.Contains(h.faults.ReservedAddresses, a) {
			return hnsError(op, hnslb.CodeAddrInvalidOrReserved, "address %s is reserved (Faults.ReservedAddresses)", a)
		}
		for _, other := range h.state.endpointsWithIP(networkID, a) {
			if h.profile.LocalRemoteIPOverlap && other.IsRemote() != remote {
				continue
			}
			return hnsError(op, h.variants.AddressTaken, "address %s is held by endpoint %s", a, other.ID)
		}
	}
	return nil
}

// GetEndpointByID returns an endpoint, or CodeNotFound.
func (h *HNS) GetEndpointByID(ctx context.Context, id string) (*hnslb.Endpoint, error) {
	return getByID(ctx, h, OpGetEndpoint, "endpoint", &h.state.endpoints, id, h.answerEndpoint)
}

// GetEndpointByName returns the first endpoint with the name, or CodeEndpointNotFound.
func (h *HNS) GetEndpointByName(ctx context.Context, name string) (*hnslb.Endpoint, error) {
	const op = OpGetEndpoint
	var out *hnslb.Endpoint
	err := h.call(ctx, op, func() error {
		h.state.endpoints.each(func(e *hnslb.Endpoint) {
			if out == nil && e.Name == name && !h.leftOutOfGet(e.ID) {
				out = h.answerEndpoint(e)
			}
		})
		if out == nil {
			return hnsError(op, hnslb.CodeEndpointNotFound, "endpoint name %q", name)
		}
		h.chargeList(1)
		return nil
	})
	return result(out, err)
}

// ListEndpoints returns every endpoint.
func (h *HNS) ListEndpoints(ctx context.Context) ([]hnslb.Endpoint, error) {
	return list(ctx, h, OpListEndpoints, &h.state.endpoints, nil, h.answerEndpoint)
}

// ListEndpointsOfNetwork returns the endpoints of one network. For an
// unknown network it answers as ErrorVariants.MissingNetworkListing says:
// none, as hcn's filtered query does, or an error.
func (h *HNS) ListEndpointsOfNetwork(ctx context.Context, networkID string) ([]hnslb.Endpoint, error) {
	onNetwork := func(e *hnslb.Endpoint) bool { return key(e.HostComputeNetwork) == key(networkID) }
	networkKnown := func() error {
		if _, ok := h.state.networks.get(networkID); !ok && h.variants.MissingNetworkListing != 0 {
			return hnsError(OpListEndpoints, h.variants.MissingNetworkListing, "network %s", networkID)
		}
		return nil
	}
	return listChecked(ctx, h, OpListEndpoints, &h.state.endpoints, networkKnown, onNetwork, h.answerEndpoint)
}

// DeleteEndpoint deletes an endpoint even while load balancers use it: on
// Windows the CNI deletes a pod's endpoint before the proxy has seen the pod
// go. Load balancers lose it as a backend; its namespace loses it.
func (h *HNS) DeleteEndpoint(ctx context.Context, id string) error {
	return deleteByID(ctx, h, OpDeleteEndpoint, "endpoint", &h.state.endpoints, id, func(e *hnslb.Endpoint) {
		if !h.keptOnDelete("endpoint", e.ID) {
			h.removeEndpoint(e.ID)
		}
	})
}

// removeEndpoint deletes an endpoint and every reference to it.
func (h *HNS) removeEndpoint(id string) {
	e, ok := h.state.endpoints.get(id)
	if !ok {
		return
	}
	if e.HostComputeNamespace != "" {
		if ns, ok := h.state.namespaces.get(e.HostComputeNamespace); ok {
			detach(ns, e.ID)
		}
	}
	// Only the load balancers using it (an index): walking all of them made
	// an endpoint's delete cost 10 to 100 ms among 10,000.
	for _, lb := range h.state.users(id) {
		lb.HostComputeEndpoints = slices.DeleteFunc(lb.HostComputeEndpoints, func(b string) bool { return key(b) == key(id) })
		h.state.dropUser(id, lb.ID)
	}
	h.state.deleteEndpoint(id)
}
