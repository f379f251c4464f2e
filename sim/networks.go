package sim

import (
	"context"
	"net/netip"
	"strings"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

var networkTypes = map[hnslb.NetworkType]bool{
	hnslb.NetworkTypeNAT: true, hnslb.NetworkTypeTransparent: true, hnslb.NetworkTypeL2Bridge: true,
	hnslb.NetworkTypeL2Tunnel: true, hnslb.NetworkTypeICS: true, hnslb.NetworkTypePrivate: true,
	hnslb.NetworkTypeOverlay: true,
}

// CreateNetwork stores a network under a new ID. Names are unique.
func (h *HNS) CreateNetwork(ctx context.Context, n *hnslb.Network) (*hnslb.Network, error) {
	const op = OpCreateNetwork
	var out *hnslb.Network
	err := h.call(ctx, op, func() error {
		if err := h.checkNetwork(op, n); err != nil {
			return err
		}
		if _, taken := h.networkByName(n.Name); taken {
			return hnsError(op, hnslb.CodeNetworkAlreadyExists, "name %q", n.Name)
		}
		stored := copyNetwork(n)
		stored.ID = h.state.ids.guid()
		stored.SchemaVersion = hnslb.V2
		stored.Health = hnslb.Health{}
		h.state.networks.put(stored.ID, stored)
		out = copyNetwork(stored)
		return nil
	})
	return result(out, err)
}

func (h *HNS) checkNetwork(op Op, n *hnslb.Network) error {
	if n == nil {
		return hnsError(op, hnslb.CodeInvalidParameter, "no network document")
	}
	if n.Name == "" {
		return hnsError(op, hnslb.CodeInvalidParameter, "network has no name")
	}
	if !networkTypes[n.Type] {
		return hnsError(op, hnslb.CodeInvalidParameter, "unknown network type %q", n.Type)
	}
	for _, ipam := range n.Ipams {
		for _, sn := range ipam.Subnets {
			if _, err := netip.ParsePrefix(sn.IpAddressPrefix); err != nil {
				return hnsError(op, hnslb.CodeInvalidParameter, "subnet %q: %v", sn.IpAddressPrefix, err)
			}
		}
	}
	return checkNetworkPolicies(op, n.Policies)
}

func checkNetworkPolicies(op Op, pols []hnslb.NetworkPolicy) error {
	for _, p := range pols {
		if p.Type == "" {
			return hnsError(op, hnslb.CodeInvalidParameter, "network policy without a type")
		}
		if err := checkSettings(op, hnslb.CodeInvalidParameter, string(p.Type), p.Settings); err != nil {
			return err
		}
	}
	return nil
}

func (h *HNS) networkByName(name string) (*hnslb.Network, bool) {
	var found *hnslb.Network
	h.state.networks.each(func(n *hnslb.Network) {
		if found == nil && strings.EqualFold(n.Name, name) {
			found = n
		}
	})
	return found, found != nil
}

// GetNetworkByID returns a network, or CodeNotFound.
func (h *HNS) GetNetworkByID(ctx context.Context, id string) (*hnslb.Network, error) {
	return getByID(ctx, h, OpGetNetwork, "network", &h.state.networks, id, copyNetwork)
}

// GetNetworkByName returns a network, or CodeNetworkNotFound.
func (h *HNS) GetNetworkByName(ctx context.Context, name string) (*hnslb.Network, error) {
	const op = OpGetNetwork
	var out *hnslb.Network
	err := h.call(ctx, op, func() error {
		n, ok := h.networkByName(name)
		if !ok || h.leftOutOfGet(n.ID) {
			return hnsError(op, hnslb.CodeNetworkNotFound, "network name %q", name)
		}
		out = copyNetwork(n)
		h.chargeList(1)
		return nil
	})
	return result(out, err)
}

// ListNetworks returns every network.
func (h *HNS) ListNetworks(ctx context.Context) ([]hnslb.Network, error) {
	return list(ctx, h, OpListNetworks, &h.state.networks, nil, copyNetwork)
}

// DeleteNetwork deletes a network and, as HNS does when a network goes, its
// endpoints (detached from namespaces and load balancers).
func (h *HNS) DeleteNetwork(ctx context.Context, id string) error {
	return deleteByID(ctx, h, OpDeleteNetwork, "network", &h.state.networks, id, func(n *hnslb.Network) {
		var gone []string
		h.state.endpoints.each(func(e *hnslb.Endpoint) {
			if key(e.HostComputeNetwork) == key(n.ID) {
				gone = append(gone, e.ID)
			}
		})
		for _, epID := range gone {
			h.removeEndpoint(epID)
		}
		h.state.networks.del(n.ID)
	})
}

// ReplaceNetwork deletes the network id, with its endpoints, as a CNI that
// makes it again does, and with again makes one of its name, type and
// subnets, whose new ID it returns ("" without). The calls are counted as
// any.
func (h *HNS) ReplaceNetwork(ctx context.Context, id string, again bool) (string, error) {
	old, err := h.GetNetworkByID(ctx, id)
	if err != nil {
		return "", err
	}
	if err := h.DeleteNetwork(ctx, id); err != nil || !again {
		return "", err
	}
	made, err := h.CreateNetwork(ctx, &hnslb.Network{Name: old.Name, Type: old.Type, Ipams: old.Ipams})
	if err != nil {
		return "", err
	}
	return made.ID, nil
}
