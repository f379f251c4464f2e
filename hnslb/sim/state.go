package sim

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// store keeps one kind of object by case-insensitive ID, listed in creation order.
type store[T any] struct {
	byID map[string]*T
	ids  []string // creation order
}

func newStore[T any]() store[T] { return store[T]{byID: map[string]*T{}} }

func key(id string) string { return strings.ToLower(id) }

func (s *store[T]) get(id string) (*T, bool) {
	o, ok := s.byID[key(id)]
	return o, ok
}

func (s *store[T]) put(id string, o *T) {
	k := key(id)
	if _, ok := s.byID[k]; !ok {
		s.ids = append(s.ids, k)
	}
	s.byID[k] = o
}

func (s *store[T]) del(id string) {
	k := key(id)
	if _, ok := s.byID[k]; !ok {
		return
	}
	delete(s.byID, k)
	s.ids = slices.DeleteFunc(s.ids, func(x string) bool { return x == k })
}

func (s *store[T]) len() int { return len(s.byID) }

// each visits objects in creation order.
func (s *store[T]) each(fn func(*T)) {
	for _, k := range s.ids {
		fn(s.byID[k])
	}
}

// state is everything one HNS holds.
type state struct {
	networks      store[hnslb.Network]
	endpoints     store[hnslb.Endpoint]
	namespaces    store[hnslb.Namespace]
	loadBalancers store[hnslb.LoadBalancer]
	ids           idSource
	namespaceSeq  uint32 // NamespaceId (the compartment number) of the last namespace
}

func newState(seed uint64) state {
	return state{
		networks:      newStore[hnslb.Network](),
		endpoints:     newStore[hnslb.Endpoint](),
		namespaces:    newStore[hnslb.Namespace](),
		loadBalancers: newStore[hnslb.LoadBalancer](),
		ids:           idSource{Seed: seed},
		// Compartment 1 is the host's default compartment.
		namespaceSeq: 1,
	}
}

func (s *state) snapshot(v hnslb.Version) *hnslb.Snapshot {
	out := &hnslb.Snapshot{Version: v}
	s.networks.each(func(n *hnslb.Network) { out.Networks = append(out.Networks, *copyNetwork(n)) })
	s.endpoints.each(func(e *hnslb.Endpoint) { out.Endpoints = append(out.Endpoints, *copyEndpoint(e)) })
	s.loadBalancers.each(func(lb *hnslb.LoadBalancer) {
		out.LoadBalancers = append(out.LoadBalancers, *copyLoadBalancer(lb))
	})
	s.namespaces.each(func(ns *hnslb.Namespace) { out.Namespaces = append(out.Namespaces, *copyNamespace(ns)) })
	return out
}

// Deep copies: callers never share memory with stored objects.

func copyRaw(r json.RawMessage) json.RawMessage {
	if r == nil {
		return nil
	}
	return slices.Clone(r)
}

func copyDNS(d hnslb.DNS) hnslb.DNS {
	d.Search = slices.Clone(d.Search)
	d.ServerList = slices.Clone(d.ServerList)
	d.Options = slices.Clone(d.Options)
	return d
}

// copyHealth copies what HNS reports; Data is reported, never stored by the
// simulator, so it is dropped rather than shared.
func copyHealth(h hnslb.Health) hnslb.Health {
	h.Data = nil
	h.Extra.Resources = copyRaw(h.Extra.Resources)
	h.Extra.SharedContainers = copyRaw(h.Extra.SharedContainers)
	return h
}

func copyLoadBalancer(lb *hnslb.LoadBalancer) *hnslb.LoadBalancer {
	c := *lb
	c.HostComputeEndpoints = slices.Clone(lb.HostComputeEndpoints)
	c.FrontendVIPs = slices.Clone(lb.FrontendVIPs)
	c.PortMappings = slices.Clone(lb.PortMappings)
	return &c
}

func copyEndpoint(e *hnslb.Endpoint) *hnslb.Endpoint {
	c := *e
	c.Policies = make([]hnslb.EndpointPolicy, len(e.Policies))
	for i, p := range e.Policies {
		c.Policies[i] = hnslb.EndpointPolicy{Type: p.Type, Settings: copyRaw(p.Settings)}
	}
	if e.Policies == nil {
		c.Policies = nil
	}
	c.IpConfigurations = slices.Clone(e.IpConfigurations)
	c.Dns = copyDNS(e.Dns)
	c.Routes = slices.Clone(e.Routes)
	c.Health = copyHealth(e.Health)
	return &c
}

func copyNetworkPolicies(ps []hnslb.NetworkPolicy) []hnslb.NetworkPolicy {
	if ps == nil {
		return nil
	}
	out := make([]hnslb.NetworkPolicy, len(ps))
	for i, p := range ps {
		out[i] = hnslb.NetworkPolicy{Type: p.Type, Settings: copyRaw(p.Settings)}
	}
	return out
}

func copyNetwork(n *hnslb.Network) *hnslb.Network {
	c := *n
	c.Policies = copyNetworkPolicies(n.Policies)
	c.MacPool.Ranges = slices.Clone(n.MacPool.Ranges)
	c.Dns = copyDNS(n.Dns)
	c.Health = copyHealth(n.Health)
	if n.Ipams != nil {
		c.Ipams = make([]hnslb.Ipam, len(n.Ipams))
		for i, ipam := range n.Ipams {
			c.Ipams[i] = ipam
			if ipam.Subnets != nil {
				c.Ipams[i].Subnets = make([]hnslb.Subnet, len(ipam.Subnets))
				for j, sn := range ipam.Subnets {
					sn.Routes = slices.Clone(sn.Routes)
					if sn.Policies != nil {
						pols := make([]json.RawMessage, len(sn.Policies))
						for k, p := range sn.Policies {
							pols[k] = copyRaw(p)
						}
						sn.Policies = pols
					}
					c.Ipams[i].Subnets[j] = sn
				}
			}
		}
	}
	return &c
}

func copyNamespace(ns *hnslb.Namespace) *hnslb.Namespace {
	c := *ns
	if ns.Resources != nil {
		c.Resources = make([]hnslb.NamespaceResource, len(ns.Resources))
		for i, r := range ns.Resources {
			c.Resources[i] = hnslb.NamespaceResource{Type: r.Type, Data: copyRaw(r.Data)}
		}
	}
	return &c
}
