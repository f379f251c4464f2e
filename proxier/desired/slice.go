package desired

import (
	"unique"

	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/hnsproxy/hnsproxy/intent"
)

// EndpointSlice is what the mapping reads of a discovery/v1 EndpointSlice,
// nothing more. At 10,000 Services the slices are most of what a proxy
// caches, and the API type spends about 110 bytes per endpoint (an address
// list, and a pointer for each condition, node name and reference) where
// this one spends 40.
type EndpointSlice struct {
	// Name orders a Service's slices, so duplicate handling never depends
	// on the order the informer delivered them in.
	Name string
	// Family is the slice's address type; 0 for FQDN slices (and any type
	// this version does not know), whose addresses a proxy cannot use.
	Family    intent.IPFamily
	Ports     []discoveryv1.EndpointPort
	Endpoints []Endpoint
}

// Endpoint is one endpoint of an EndpointSlice.
type Endpoint struct {
	// Address is the endpoint's first address ("" when it has none): like
	// kube-proxy, only the first is used.
	Address string
	// Node is the endpoint's node name, interned: endpoints of one node
	// share one copy, locality is a pointer comparison, and holding the
	// handle keeps the name interned (a bare string from unique.Make let
	// the interning lapse at the next garbage collection; docs/benchmarks-history.md,
	// session 13). Zero when unset or empty: either way no node is named.
	Node  unique.Handle[string]
	Hints *discoveryv1.EndpointHints
	// The conditions with the API's meaning of an unset one applied: an
	// unset ready or serving means true, an unset terminating false.
	Ready, Serving, Terminating bool
}

// SliceOf returns what the mapping reads of s. It keeps nothing of s but
// strings, ports and hints, which it shares, so s may be dropped after.
func SliceOf(s *discoveryv1.EndpointSlice) EndpointSlice {
	out := EndpointSlice{Name: s.Name, Ports: s.Ports, Endpoints: make([]Endpoint, len(s.Endpoints))}
	switch s.AddressType {
	case discoveryv1.AddressTypeIPv4:
		out.Family = intent.IPv4
	case discoveryv1.AddressTypeIPv6:
		out.Family = intent.IPv6
	}
	for i := range s.Endpoints {
		e, o := &s.Endpoints[i], &out.Endpoints[i]
		if len(e.Addresses) > 0 {
			o.Address = e.Addresses[0]
		}
		if e.NodeName != nil && *e.NodeName != "" {
			o.Node = unique.Make(*e.NodeName)
		}
		o.Hints = e.Hints
		o.Ready = e.Conditions.Ready == nil || *e.Conditions.Ready
		o.Serving = e.Conditions.Serving == nil || *e.Conditions.Serving
		o.Terminating = e.Conditions.Terminating != nil && *e.Conditions.Terminating
	}
	return out
}
