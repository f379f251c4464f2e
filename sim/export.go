package sim

import (
	"encoding/json"
	"fmt"
	"maps"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// exported is the persisted form of an HNS: every object in creation order
// and the generators' positions, so IDs continue where they stopped.
type exported struct {
	Profile       string               `json:"profile"`
	Version       hnslb.Version        `json:"version"`
	IDs           idSource             `json:"ids"`
	NamespaceSeq  uint32               `json:"namespaceSeq"`
	Networks      []hnslb.Network      `json:"networks"`
	Endpoints     []hnslb.Endpoint     `json:"endpoints"`
	LoadBalancers []hnslb.LoadBalancer `json:"loadBalancers"`
	Namespaces    []hnslb.Namespace    `json:"namespaces"`
	// PartialHolds are the frontends load balancers a failed create left
	// hold unseen (Faults.PartialHoldsFrontend), by load balancer ID: an
	// HNS restart keeps them held as it keeps the load balancers.
	PartialHolds map[string][]string `json:"partialHolds,omitempty"`
}

// Export returns the full state as JSON (not counted as calls).
func (h *HNS) Export() ([]byte, error) {
	h.mu.Lock()
	snap := h.state.snapshot(h.profile.Version)
	x := exported{
		Profile: h.profile.Name, Version: h.profile.Version,
		IDs: h.state.ids, NamespaceSeq: h.state.namespaceSeq,
		Networks: snap.Networks, Endpoints: snap.Endpoints,
		LoadBalancers: snap.LoadBalancers, Namespaces: snap.Namespaces,
	}
	if len(h.state.partialHolds) > 0 {
		x.PartialHolds = maps.Clone(h.state.partialHolds)
	}
	h.mu.Unlock()
	return json.Marshal(x)
}

// Import replaces the state with one Export produced. The profile stays the
// one this HNS was created with; counters, faults and latency are untouched.
func (h *HNS) Import(data []byte) error {
	var x exported
	if err := json.Unmarshal(data, &x); err != nil {
		return fmt.Errorf("sim: import: %w", err)
	}
	s := newState(x.IDs.Seed)
	s.ids = x.IDs
	s.namespaceSeq = x.NamespaceSeq
	if err := importAll(&s.networks, "network", x.Networks, netID, func(o *hnslb.Network) { s.networks.put(o.ID, o) }); err != nil {
		return err
	}
	if err := importAll(&s.endpoints, "endpoint", x.Endpoints, epID, s.putEndpoint); err != nil {
		return err
	}
	for i := range x.LoadBalancers {
		for _, k := range frontendKeys(&x.LoadBalancers[i]) {
			if owner, taken := s.frontends[k]; taken {
				return fmt.Errorf("sim: import: load balancer %s conflicts with %s on %s", x.LoadBalancers[i].ID, owner, k)
			}
		}
		if err := importAll(&s.loadBalancers, "load balancer", x.LoadBalancers[i:i+1], lbID, s.putLoadBalancer); err != nil {
			return err
		}
	}
	if err := importAll(&s.namespaces, "namespace", x.Namespaces, nsID, func(o *hnslb.Namespace) { s.namespaces.put(o.ID, o) }); err != nil {
		return err
	}
	if err := s.importPartialHolds(x.PartialHolds); err != nil {
		return fmt.Errorf("sim: import: %w", err)
	}
	if err := s.checkReferences(); err != nil {
		return fmt.Errorf("sim: import: %w", err)
	}
	h.mu.Lock()
	s.log = h.state.log
	h.state = s
	h.mu.Unlock()
	return nil
}

// importPartialHolds makes the frontends in holds held again by their
// load balancers, which must be listed without port mappings and the
// frontends free.
func (s *state) importPartialHolds(holds map[string][]string) error {
	for id, keys := range holds {
		lb, ok := s.loadBalancers.get(id)
		if !ok || len(lb.PortMappings) != 0 {
			return fmt.Errorf("frontends %v held by %s, which is no load balancer without port mappings", keys, id)
		}
		for _, k := range keys {
			if owner, taken := s.frontends[k]; taken {
				return fmt.Errorf("frontend %s held by %s and %s", k, id, owner)
			}
		}
		s.holdPartial(lb.ID, keys)
	}
	return nil
}

// checkReferences verifies that every ID an object refers to exists.
func (s *state) checkReferences() error {
	var err error
	s.endpoints.each(func(e *hnslb.Endpoint) {
		if _, ok := s.networks.get(e.HostComputeNetwork); !ok && err == nil {
			err = fmt.Errorf("endpoint %s is on unknown network %q", e.ID, e.HostComputeNetwork)
		}
		if _, ok := s.namespaces.get(e.HostComputeNamespace); e.HostComputeNamespace != "" && !ok && err == nil {
			err = fmt.Errorf("endpoint %s is in unknown namespace %q", e.ID, e.HostComputeNamespace)
		}
	})
	s.loadBalancers.each(func(lb *hnslb.LoadBalancer) {
		for _, id := range lb.HostComputeEndpoints {
			if _, ok := s.endpoints.get(id); !ok && err == nil {
				err = fmt.Errorf("load balancer %s has unknown backend %q", lb.ID, id)
			}
		}
	})
	return err
}

func netID(o *hnslb.Network) string     { return o.ID }
func epID(o *hnslb.Endpoint) string     { return o.ID }
func lbID(o *hnslb.LoadBalancer) string { return o.ID }
func nsID(o *hnslb.Namespace) string    { return o.ID }

// importAll adds objects through put after checking their IDs.
func importAll[T any](s *store[T], kind string, objs []T, id func(*T) string, put func(*T)) error {
	for i := range objs {
		o := &objs[i]
		if !hnslb.IsGUID(id(o)) {
			return fmt.Errorf("sim: import: %s has ID %q, not a GUID", kind, id(o))
		}
		if _, dup := s.get(id(o)); dup {
			return fmt.Errorf("sim: import: %s %s appears twice", kind, id(o))
		}
		put(o)
	}
	return nil
}
