package sim

import (
	"cmp"
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// store keeps one kind of object by case-insensitive ID, listed in creation order.
type store[T any] struct {
	byID map[string]entry[T]
	seq  uint64
}

type entry[T any] struct {
	seq uint64 // creation order
	obj *T
}

func newStore[T any]() store[T] { return store[T]{byID: map[string]entry[T]{}} }

func key(id string) string { return strings.ToLower(id) }

func (s *store[T]) get(id string) (*T, bool) {
	e, ok := s.byID[key(id)]
	return e.obj, ok
}

// put adds or replaces; a replaced object keeps its place in the order.
func (s *store[T]) put(id string, o *T) {
	k := key(id)
	e, ok := s.byID[k]
	if !ok {
		s.seq++
		e.seq = s.seq
	}
	e.obj = o
	s.byID[k] = e
}

func (s *store[T]) del(id string) { delete(s.byID, key(id)) }

func (s *store[T]) len() int { return len(s.byID) }

// all yields the stored objects in no order.
func (s *store[T]) all() iter.Seq[*T] {
	return func(yield func(*T) bool) {
		for _, e := range s.byID {
			if !yield(e.obj) {
				return
			}
		}
	}
}

// ids yields the stored objects' IDs (lower case) in no order.
func (s *store[T]) ids() iter.Seq[string] { return maps.Keys(s.byID) }

// each visits objects in creation order.
func (s *store[T]) each(fn func(*T)) { s.eachKeyed(func(_ string, o *T) { fn(o) }) }

// eachKeyed visits objects in creation order, each with its ID in lower
// case.
func (s *store[T]) eachKeyed(fn func(id string, o *T)) {
	type keyed struct {
		id string
		entry[T]
	}
	entries := make([]keyed, 0, len(s.byID))
	for id, e := range s.byID {
		entries = append(entries, keyed{id, e})
	}
	slices.SortFunc(entries, func(a, b keyed) int { return cmp.Compare(a.seq, b.seq) })
	for _, e := range entries {
		fn(e.id, e.obj)
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

	// Indexes for the rules that would otherwise scan every object.
	frontends   map[string]string   // frontendKey -> load balancer ID
	endpointIPs map[string][]string // network ID|IP -> endpoint IDs
	// usedBy: endpoint ID -> IDs of the load balancers with it as a backend,
	// so that deleting an endpoint does not walk every load balancer.
	usedBy map[string]map[string]struct{}
	// partialHolds: load balancer ID -> the frontend keys a load balancer
	// a failed create left without port mappings holds unseen
	// (Faults.PartialHoldsFrontend).
	partialHolds map[string][]string
	// log records every change to load balancers and endpoints
	// (writelog.go).
	log writeLog
}

func newState(seed uint64) state {
	return state{
		networks:      newStore[hnslb.Network](),
		endpoints:     newStore[hnslb.Endpoint](),
		namespaces:    newStore[hnslb.Namespace](),
		loadBalancers: newStore[hnslb.LoadBalancer](),
		ids:           idSource{Seed: seed},
		frontends:     map[string]string{},
		endpointIPs:   map[string][]string{},
		usedBy:        map[string]map[string]struct{}{},
		partialHolds:  map[string][]string{},
		// Compartment 1 is the host's default compartment.
		namespaceSeq: 1,
	}
}

// frontendKeys are what the conflict rule compares: VIP, protocol and
// external port; a load balancer without VIPs holds the node's port for its
// address family.
func frontendKeys(lb *hnslb.LoadBalancer) []string {
	if len(lb.PortMappings) == 0 {
		return nil
	}
	pm := lb.PortMappings[0]
	if len(lb.FrontendVIPs) == 0 {
		return []string{fmt.Sprintf("node/v6=%v/%d/%d", lb.Flags&hnslb.LoadBalancerFlagsIPv6 != 0, pm.Protocol, pm.ExternalPort)}
	}
	keys := make([]string, 0, len(lb.FrontendVIPs))
	for _, v := range lb.FrontendVIPs {
		if a, ok := parseIP(v); ok {
			keys = append(keys, fmt.Sprintf("%s/%d/%d", a, pm.Protocol, pm.ExternalPort))
		}
	}
	return keys
}

func (s *state) putLoadBalancer(lb *hnslb.LoadBalancer) {
	s.log.lb("stored", lb)
	s.dropIndexes(lb.ID)
	s.loadBalancers.put(lb.ID, lb)
	for _, k := range frontendKeys(lb) {
		s.frontends[k] = key(lb.ID)
	}
	for _, ep := range lb.HostComputeEndpoints {
		users := s.usedBy[key(ep)]
		if users == nil {
			users = map[string]struct{}{}
			s.usedBy[key(ep)] = users
		}
		users[key(lb.ID)] = struct{}{}
	}
}

// putPartialLoadBalancer stores a load balancer a failed create left,
// holding the frontend keys holds although its document shows no port.
func (s *state) putPartialLoadBalancer(lb *hnslb.LoadBalancer, holds []string) {
	s.log.printf("a failed create leaves load balancer %s without port mappings, holding %v", lb.ID, holds)
	s.putLoadBalancer(lb)
	s.holdPartial(lb.ID, holds)
}

// holdPartial has load balancer id hold the frontend keys holds unseen.
func (s *state) holdPartial(id string, holds []string) {
	for _, k := range holds {
		s.frontends[k] = key(id)
	}
	if len(holds) > 0 {
		s.partialHolds[key(id)] = holds
	}
}

func (s *state) deleteLoadBalancer(id string) {
	s.log.printf("dropped load balancer %s", id)
	s.dropIndexes(id)
	s.loadBalancers.del(id)
}

// dropIndexes removes load balancer id from the frontend and backend indexes.
func (s *state) dropIndexes(id string) {
	old, ok := s.loadBalancers.get(id)
	if !ok {
		return
	}
	for _, k := range append(frontendKeys(old), s.partialHolds[key(id)]...) {
		if s.frontends[k] == key(id) {
			delete(s.frontends, k)
		}
	}
	delete(s.partialHolds, key(id))
	for _, ep := range old.HostComputeEndpoints {
		s.dropUser(ep, id)
	}
}

func (s *state) dropUser(endpointID, lbID string) {
	if users := s.usedBy[key(endpointID)]; users != nil {
		delete(users, key(lbID))
		if len(users) == 0 {
			delete(s.usedBy, key(endpointID))
		}
	}
}

// users are the load balancers with endpoint id as a backend.
func (s *state) users(id string) []*hnslb.LoadBalancer {
	var out []*hnslb.LoadBalancer
	for lbID := range s.usedBy[key(id)] {
		if lb, ok := s.loadBalancers.get(lbID); ok {
			out = append(out, lb)
		}
	}
	return out
}

func endpointIPKeys(e *hnslb.Endpoint) []string {
	keys := make([]string, 0, len(e.IpConfigurations))
	for _, c := range e.IpConfigurations {
		if a, ok := parseIP(c.IpAddress); ok {
			keys = append(keys, key(e.HostComputeNetwork)+"|"+a.String())
		}
	}
	return keys
}

func (s *state) putEndpoint(e *hnslb.Endpoint) {
	s.log.endpoint("stored", e)
	s.endpoints.put(e.ID, e)
	for _, k := range endpointIPKeys(e) {
		s.endpointIPs[k] = append(s.endpointIPs[k], key(e.ID))
	}
}

func (s *state) deleteEndpoint(id string) {
	e, ok := s.endpoints.get(id)
	if !ok {
		return
	}
	s.log.printf("dropped endpoint %s", id)
	for _, k := range endpointIPKeys(e) {
		ids := slices.DeleteFunc(s.endpointIPs[k], func(x string) bool { return x == key(id) })
		if len(ids) == 0 {
			delete(s.endpointIPs, k)
		} else {
			s.endpointIPs[k] = ids
		}
	}
	s.endpoints.del(id)
}

// endpointsWithIP returns the endpoints of a network that hold an address.
func (s *state) endpointsWithIP(networkID string, a netip.Addr) []*hnslb.Endpoint {
	var out []*hnslb.Endpoint
	for _, id := range s.endpointIPs[key(networkID)+"|"+a.String()] {
		if e, ok := s.endpoints.get(id); ok {
			out = append(out, e)
		}
	}
	return out
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
