package sim

import (
	"maps"
	"strings"
)

// Op names one kind of HNS call, as counted and as targeted by faults.
type Op string

// Operations of hnslb.Client. Get covers lookups by ID and by name; List
// covers filtered lists (ListEndpointsOfNetwork) too.
const (
	OpCreateLoadBalancer Op = "CreateLoadBalancer"
	OpUpdateLoadBalancer Op = "UpdateLoadBalancer"
	OpDeleteLoadBalancer Op = "DeleteLoadBalancer"
	OpGetLoadBalancer    Op = "GetLoadBalancer"
	OpListLoadBalancers  Op = "ListLoadBalancers"

	OpCreateEndpoint Op = "CreateEndpoint"
	OpDeleteEndpoint Op = "DeleteEndpoint"
	OpGetEndpoint    Op = "GetEndpoint"
	OpListEndpoints  Op = "ListEndpoints"

	OpCreateNetwork Op = "CreateNetwork"
	OpDeleteNetwork Op = "DeleteNetwork"
	OpGetNetwork    Op = "GetNetwork"
	OpListNetworks  Op = "ListNetworks"

	OpCreateNamespace         Op = "CreateNamespace"
	OpDeleteNamespace         Op = "DeleteNamespace"
	OpGetNamespace            Op = "GetNamespace"
	OpListNamespaces          Op = "ListNamespaces"
	OpAddNamespaceEndpoint    Op = "AddNamespaceEndpoint"
	OpRemoveNamespaceEndpoint Op = "RemoveNamespaceEndpoint"

	OpVersion Op = "Version"
)

// Operations of other actors (test and e2e helpers). They bypass faults and
// are counted under their own names, never as Writes, Lists or HCNCalls, so
// that assertions about the code under test stay exact.
const (
	OpDeleteLoadBalancerOutOfBand Op = "DeleteLoadBalancerOutOfBand"
	OpPutLoadBalancerOutOfBand    Op = "PutLoadBalancerOutOfBand"
	OpSetNetworkPolicies          Op = "SetNetworkPolicies"
	// OpApplyEndpointPoliciesOutOfBand: a policy agent's in-place write (agentpolicy.go).
	OpApplyEndpointPoliciesOutOfBand Op = "ApplyEndpointPoliciesOutOfBand"
)

// ResultOK is the result name of a successful call.
const ResultOK = "ok"

// Counters are the calls HNS served, by operation and result. A result is
// ResultOK or the name of the error's hnslb code without "Code" (e.g.
// "NotFound", "PortAlreadyExists", "RPCServerUnavailable").
type Counters struct {
	Calls map[Op]map[string]int
	// HCNCalls is what the calls would cost in HNS calls through hcsshim's
	// hcn package (see hcnCost); a failed call counts one.
	HCNCalls int
	// KeptOnDelete counts deletes reported done that kept their object
	// (Faults.KeptOnDelete).
	KeptOnDelete int
	// PartialCreates counts failed load balancer creates that left a load
	// balancer without port mappings (Faults.PartialCreates).
	PartialCreates int
}

func (c *Counters) add(op Op, result string) {
	if c.Calls == nil {
		c.Calls = map[Op]map[string]int{}
	}
	m := c.Calls[op]
	if m == nil {
		m = map[string]int{}
		c.Calls[op] = m
	}
	m[result]++
}

func (c Counters) clone() Counters {
	out := Counters{Calls: make(map[Op]map[string]int, len(c.Calls)), HCNCalls: c.HCNCalls, KeptOnDelete: c.KeptOnDelete, PartialCreates: c.PartialCreates}
	for op, m := range c.Calls {
		out.Calls[op] = maps.Clone(m)
	}
	return out
}

// Count is the number of op calls, whatever their result.
func (c Counters) Count(op Op) int {
	n := 0
	for _, v := range c.Calls[op] {
		n += v
	}
	return n
}

// CountResult is the number of op calls that ended with result.
func (c Counters) CountResult(op Op, result string) int { return c.Calls[op][result] }

// Writes is the number of successful creates, updates, deletes, namespace
// attaches and detaches of the code under test.
func (c Counters) Writes() int {
	n := 0
	for op, m := range c.Calls {
		if op.isWrite() {
			n += m[ResultOK]
		}
	}
	return n
}

// Lists is the number of list calls, whatever their result.
func (c Counters) Lists() int {
	n := 0
	for op := range c.Calls {
		if op.isList() {
			n += c.Count(op)
		}
	}
	return n
}

// Total is the number of calls of the code under test.
func (c Counters) Total() int {
	n := 0
	for op := range c.Calls {
		if !op.outOfBand() {
			n += c.Count(op)
		}
	}
	return n
}

// hcnCost is what a successful call costs through hcn (hcsshim hcn/*.go):
// a create is create, query and close (an endpoint also opens and closes its
// network), a modify is open, modify, query and close, a delete is one call.
// Gets and lists are a (filtered) enumerate, one call, plus open, query and
// close per object returned, which chargeList adds.
var hcnCost = map[Op]int{
	OpCreateNetwork: 3, OpCreateNamespace: 3, OpCreateLoadBalancer: 3,
	OpCreateEndpoint:          5,
	OpUpdateLoadBalancer:      4,
	OpAddNamespaceEndpoint:    4,
	OpRemoveNamespaceEndpoint: 4,
}

func (op Op) hcnCost(err error) int {
	if c, ok := hcnCost[op]; ok && err == nil {
		return c
	}
	return 1
}

func (op Op) isList() bool { return strings.HasPrefix(string(op), "List") }

func (op Op) outOfBand() bool {
	return op == OpDeleteLoadBalancerOutOfBand || op == OpPutLoadBalancerOutOfBand || op == OpSetNetworkPolicies ||
		op == OpApplyEndpointPoliciesOutOfBand
}

func (op Op) isWrite() bool {
	if op.outOfBand() {
		return false
	}
	for _, p := range []string{"Create", "Update", "Delete", "AddNamespace", "RemoveNamespace"} {
		if strings.HasPrefix(string(op), p) {
			return true
		}
	}
	return false
}

// Ops lists every operation of hnslb.Client, for fault wildcards and reports.
func Ops() []Op {
	return []Op{
		OpCreateLoadBalancer, OpUpdateLoadBalancer, OpDeleteLoadBalancer, OpGetLoadBalancer, OpListLoadBalancers,
		OpCreateEndpoint, OpDeleteEndpoint, OpGetEndpoint, OpListEndpoints,
		OpCreateNetwork, OpDeleteNetwork, OpGetNetwork, OpListNetworks,
		OpCreateNamespace, OpDeleteNamespace, OpGetNamespace, OpListNamespaces,
		OpAddNamespaceEndpoint, OpRemoveNamespaceEndpoint, OpVersion,
	}
}
