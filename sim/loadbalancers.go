package sim

import (
	"context"
	"slices"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// CreateLoadBalancer stores a load balancer under a new ID after HNS's checks:
// one port mapping, the frontend conflict rule, the backend cap, existing
// backends, address families, and the profile's features.
func (h *HNS) CreateLoadBalancer(ctx context.Context, lb *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	const op = OpCreateLoadBalancer
	var out *hnslb.LoadBalancer
	applied := false
	err := h.call(ctx, op, func() error {
		if err := h.checkLoadBalancer(op, lb, ""); err != nil {
			return err
		}
		stored := copyLoadBalancer(lb)
		storedGUIDs(stored)
		stored.ID = h.state.ids.guid()
		stored.SchemaVersion = hnslb.V2
		h.state.putLoadBalancer(stored)
		applied = true
		out = h.answerLB(stored)
		return nil
	})
	if err != nil && !applied { // an applied create failed after it stored the whole document
		h.leavePartial(lb, err)
	}
	return result(out, err)
}

// UpdateLoadBalancer is HNS ModifyLoadBalancer: E_NOTIMPL before 15.4; on
// 15.4 it reports success and applies everything but the backends
// (kubernetes/kubernetes#131466); from 15.5 it replaces the load balancer in
// place, keeping its ID. The checks of Create apply, the conflict rule
// ignoring the load balancer itself.
func (h *HNS) UpdateLoadBalancer(ctx context.Context, id string, lb *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	const op = OpUpdateLoadBalancer
	var out *hnslb.LoadBalancer
	err := h.call(ctx, op, func() error {
		mode := h.modify
		if mode == modifyUnsupported {
			return hnsError(op, hnslb.CodeNotImplemented, "ModifyLoadBalancer needs HNS 15.5 or later (this is %s)", h.profile.Version)
		}
		old, err := find(op, kindLoadBalancer, &h.state.loadBalancers, id, h.notFound(kindLoadBalancer))
		if err != nil {
			return err
		}
		if err := h.checkLoadBalancer(op, lb, old.ID); err != nil {
			return err
		}
		stored := copyLoadBalancer(lb)
		if h.modifyBackendsOnly {
			stored = copyLoadBalancer(old)
			stored.HostComputeEndpoints = slices.Clone(lb.HostComputeEndpoints)
		}
		storedGUIDs(stored)
		stored.ID = old.ID
		stored.SchemaVersion = hnslb.V2
		if mode == modifyIgnoresBackends {
			stored.HostComputeEndpoints = old.HostComputeEndpoints
		}
		h.state.putLoadBalancer(stored)
		out = h.answerLB(stored)
		return nil
	})
	return result(out, err)
}

// GetLoadBalancerByID returns a load balancer, or the missing load
// balancer code (ErrorVariants).
func (h *HNS) GetLoadBalancerByID(ctx context.Context, id string) (*hnslb.LoadBalancer, error) {
	return getByID(ctx, h, OpGetLoadBalancer, kindLoadBalancer, &h.state.loadBalancers, id, h.answerLB)
}

// ListLoadBalancers returns every load balancer.
func (h *HNS) ListLoadBalancers(ctx context.Context) ([]hnslb.LoadBalancer, error) {
	return list(ctx, h, OpListLoadBalancers, &h.state.loadBalancers, nil, h.answerLB)
}

// DeleteLoadBalancer deletes a load balancer, or fails with the missing
// load balancer code (ErrorVariants).
func (h *HNS) DeleteLoadBalancer(ctx context.Context, id string) error {
	return deleteByID(ctx, h, OpDeleteLoadBalancer, kindLoadBalancer, &h.state.loadBalancers, id, func(lb *hnslb.LoadBalancer) {
		if !h.keptOnDelete(kindLoadBalancer, lb.ID) {
			h.state.deleteLoadBalancer(lb.ID)
		}
	})
}

// checkLoadBalancer applies HNS's rules to a load balancer document; self is
// the ID of the load balancer being modified ("" on create).
func (h *HNS) checkLoadBalancer(op Op, lb *hnslb.LoadBalancer, self string) error {
	if lb == nil {
		return hnsError(op, hnslb.CodeInvalidParameter, "no load balancer document")
	}
	if len(lb.PortMappings) != 1 {
		return hnsError(op, hnslb.CodeInvalidParameter, "a load balancer takes exactly one port mapping, got %d", len(lb.PortMappings))
	}
	pm := lb.PortMappings[0]
	if err := h.checkPortMapping(op, pm); err != nil {
		return err
	}
	ipv6, err := h.checkLoadBalancerFlags(op, lb.Flags)
	if err != nil {
		return err
	}
	if err := checkFamily(op, ipv6, lb); err != nil {
		return err
	}
	if err := h.checkBackends(op, ipv6, lb.HostComputeEndpoints); err != nil {
		return err
	}
	return h.checkFrontendFree(op, self, lb)
}

func (h *HNS) checkPortMapping(op Op, pm hnslb.PortMapping) error {
	if pm.Protocol != hnslb.ProtocolTCP && pm.Protocol != hnslb.ProtocolUDP {
		return hnsError(op, hnslb.CodeInvalidParameter, "protocol %d (HNS load balances TCP 6 and UDP 17)", pm.Protocol)
	}
	if pm.ExternalPort == 0 || pm.InternalPort == 0 {
		return hnsError(op, hnslb.CodeInvalidParameter, "port mapping needs external and internal ports (%d -> %d)", pm.ExternalPort, pm.InternalPort)
	}
	switch pm.DistributionType {
	case hnslb.DistributionNone, hnslb.DistributionSourceIPProtocol:
	case hnslb.DistributionSourceIP:
		if !h.features.SessionAffinity {
			return hnsError(op, hnslb.CodeRequestUnsupported, "SourceIP distribution (session affinity) needs HNS 12.0 (this is %s)", h.profile.Version)
		}
	default:
		return hnsError(op, hnslb.CodeInvalidParameter, "distribution type %d", pm.DistributionType)
	}
	const known = hnslb.PortMappingFlagsILB | hnslb.PortMappingFlagsLocalRoutedVIP | hnslb.PortMappingFlagsUseMux |
		hnslb.PortMappingFlagsPreserveDIP | hnslb.PortMappingFlagsVipExternalIP
	if pm.Flags&^known != 0 {
		return hnsError(op, hnslb.CodeInvalidParameter, "unknown port mapping flags 0x%x", uint32(pm.Flags&^known))
	}
	return nil
}

// checkLoadBalancerFlags returns whether the load balancer is IPv6.
func (h *HNS) checkLoadBalancerFlags(op Op, flags hnslb.LoadBalancerFlags) (bool, error) {
	if unknown := flags &^ (hnslb.LoadBalancerFlagsDSR | hnslb.LoadBalancerFlagsIPv6); unknown != 0 {
		return false, hnsError(op, hnslb.CodeInvalidParameter, "unknown load balancer flags 0x%x", uint32(unknown))
	}
	f := h.features
	if flags&hnslb.LoadBalancerFlagsDSR != 0 && !f.DSR {
		return false, hnsError(op, hnslb.CodeRequestUnsupported, "DSR needs HNS 9.3 to 9.x or 10.2 and later (this is %s)", h.profile.Version)
	}
	ipv6 := flags&hnslb.LoadBalancerFlagsIPv6 != 0
	if ipv6 && !f.IPv6DualStack {
		return false, hnsError(op, hnslb.CodeRequestUnsupported, "IPv6 load balancers need HNS 11.10 (this is %s)", h.profile.Version)
	}
	return ipv6, nil
}

// checkFamily checks that the frontend VIPs and the source VIP are of the
// family the IPv6 flag says.
func checkFamily(op Op, ipv6 bool, lb *hnslb.LoadBalancer) error {
	for _, s := range lb.FrontendVIPs {
		a, ok := parseIP(s)
		if !ok {
			return hnsError(op, hnslb.CodeInvalidParameter, "frontend VIP %q", s)
		}
		if a.Is6() != ipv6 {
			return hnsError(op, hnslb.CodeInvalidParameter, "frontend VIP %s does not match the IPv6 flag (%v)", a, ipv6)
		}
	}
	if lb.SourceVIP != "" {
		a, ok := parseIP(lb.SourceVIP)
		if !ok {
			return hnsError(op, hnslb.CodeInvalidParameter, "source VIP %q", lb.SourceVIP)
		}
		if a.Is6() != ipv6 {
			return hnsError(op, hnslb.CodeInvalidParameter, "source VIP %s does not match the IPv6 flag (%v)", a, ipv6)
		}
	}
	return nil
}

// checkBackends enforces 1..cap backends, existing endpoints, no repeats, and that
// every backend has an address of the load balancer's family.
func (h *HNS) checkBackends(op Op, ipv6 bool, ids []string) error {
	// HNS refuses a load balancer without backends (kubernetes/kubernetes#106936)
	// as it refuses one with too many (#98680).
	if max := h.features.MaxBackends; len(ids) == 0 || len(ids) > max {
		return hnsError(op, hnslb.CodeInvalidParameter, "Unable to initialize VFP LB rule: invalid number of destinations. (%d, need 1 to %d)", len(ids), max)
	}
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if seen[key(id)] {
			return hnsError(op, hnslb.CodeInvalidParameter, "endpoint %s is listed twice", id)
		}
		seen[key(id)] = true
		if err := checkID(op, "endpoint", id); err != nil {
			return err
		}
		e, ok := h.state.endpoints.get(id)
		if !ok {
			return hnsError(op, h.variants.MissingBackend, "backend endpoint %s", id)
		}
		if !hasFamily(e, ipv6) {
			return hnsError(op, hnslb.CodeInvalidParameter, "backend endpoint %s has no address matching the IPv6 flag (%v)", id, ipv6)
		}
	}
	return nil
}

func hasFamily(e *hnslb.Endpoint, ipv6 bool) bool {
	for _, c := range e.IpConfigurations {
		if a, ok := parseIP(c.IpAddress); ok && a.Is6() == ipv6 {
			return true
		}
	}
	return false
}

// checkFrontendFree is the conflict rule: no two load balancers share a
// frontend VIP, protocol and external port. Load balancers without a VIP
// (NodePort) apply to the node's addresses and conflict among themselves,
// per address family. A document identical to the load balancer holding the
// frontend is "already exists" (0xb7), not a port conflict: that is what
// kube-proxy met re-creating load balancers HNS had kept across a restart
// (kubernetes/kubernetes#139519).
func (h *HNS) checkFrontendFree(op Op, self string, lb *hnslb.LoadBalancer) error {
	if pm := lb.PortMappings[0]; self == "" && slices.Contains(h.faults.TakenPorts, TakenPort{pm.Protocol, pm.ExternalPort}) {
		return hnsError(op, hnslb.CodePortAlreadyExists, "(port %d protocol %d is taken on the host; no load balancer holds it)", pm.ExternalPort, pm.Protocol)
	}
	for _, k := range frontendKeys(lb) {
		owner, taken := h.state.frontends[k]
		if !taken || owner == key(self) {
			continue
		}
		if other, ok := h.state.loadBalancers.get(owner); ok && sameLoadBalancer(other, lb) {
			return hnsError(op, hnslb.CodeAlreadyExists, "(identical to load balancer %s)", other.ID)
		}
		pm := lb.PortMappings[0]
		return hnsError(op, hnslb.CodePortAlreadyExists, "(frontend %v port %d protocol %d is used by load balancer %s)",
			lb.FrontendVIPs, pm.ExternalPort, pm.Protocol, owner)
	}
	return nil
}

// sameLoadBalancer compares what defines a load balancer, ignoring ID,
// order and spelling of addresses and IDs.
func sameLoadBalancer(a, b *hnslb.LoadBalancer) bool {
	return a.Flags == b.Flags && slices.Equal(a.PortMappings, b.PortMappings) &&
		normalIP(a.SourceVIP) == normalIP(b.SourceVIP) &&
		sameSet(a.FrontendVIPs, b.FrontendVIPs, normalIP) &&
		sameSet(a.HostComputeEndpoints, b.HostComputeEndpoints, key)
}

func normalIP(s string) string {
	if a, ok := parseIP(s); ok {
		return a.String()
	}
	return s
}

func sameSet(a, b []string, norm func(string) string) bool {
	if len(a) != len(b) {
		return false
	}
	na, nb := make([]string, len(a)), make([]string, len(b))
	for i := range a {
		na[i], nb[i] = norm(a[i]), norm(b[i])
	}
	slices.Sort(na)
	slices.Sort(nb)
	return slices.Equal(na, nb)
}
