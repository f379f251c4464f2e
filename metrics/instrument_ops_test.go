package metrics

import (
	"context"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
)

// callsOf is every count HNSOperationsTotal holds for op, whatever its result.
func callsOf(t *testing.T, op string) float64 {
	t.Helper()
	var n float64
	for _, result := range []string{ResultSuccess, ResultNotFound, ResultAlreadyExists, ResultPortConflict,
		ResultInvalid, ResultNotImplemented, ResultUnavailable, ResultError} {
		n += counter(t, op, result)
	}
	return n
}

// TestInstrumentClientNamesEveryOperation: each call through
// InstrumentClient is counted and timed once under its operation label, the
// values operators' dashboards and alerts select on (operators.md), and
// ServiceInstance, which is not an HNS call, under none.
func TestInstrumentClientNamesEveryOperation(t *testing.T) {
	Register()
	ctx := context.Background()
	c := InstrumentClient(sim.New(sim.Options{Seed: 1}))
	for _, call := range []struct {
		op string
		do func() error
	}{
		{"version", func() error { _, err := c.Version(ctx); return err }},
		{"os_build", func() error { _, err := c.OSBuild(ctx); return err }},
		{"list_networks", func() error { _, err := c.ListNetworks(ctx); return err }},
		{"get_network", func() error { _, err := c.GetNetworkByID(ctx, "n"); return err }},
		{"get_network_by_name", func() error { _, err := c.GetNetworkByName(ctx, "n"); return err }},
		{"create_network", func() error { _, err := c.CreateNetwork(ctx, &hnslb.Network{}); return err }},
		{"delete_network", func() error { return c.DeleteNetwork(ctx, "n") }},
		{"create_endpoint", func() error { _, err := c.CreateEndpoint(ctx, "n", &hnslb.Endpoint{}); return err }},
		{"get_endpoint", func() error { _, err := c.GetEndpointByID(ctx, "e"); return err }},
		{"get_endpoint_by_name", func() error { _, err := c.GetEndpointByName(ctx, "e"); return err }},
		{"list_endpoints", func() error { _, err := c.ListEndpoints(ctx); return err }},
		{"list_endpoints_of_network", func() error { _, err := c.ListEndpointsOfNetwork(ctx, "n"); return err }},
		{"delete_endpoint", func() error { return c.DeleteEndpoint(ctx, "e") }},
		{"create_namespace", func() error { _, err := c.CreateNamespace(ctx, &hnslb.Namespace{}); return err }},
		{"get_namespace", func() error { _, err := c.GetNamespaceByID(ctx, "ns"); return err }},
		{"list_namespaces", func() error { _, err := c.ListNamespaces(ctx); return err }},
		{"delete_namespace", func() error { return c.DeleteNamespace(ctx, "ns") }},
		{"add_namespace_endpoint", func() error { return c.AddNamespaceEndpoint(ctx, "ns", "e") }},
		{"remove_namespace_endpoint", func() error { return c.RemoveNamespaceEndpoint(ctx, "ns", "e") }},
		{"create_load_balancer", func() error { _, err := c.CreateLoadBalancer(ctx, &hnslb.LoadBalancer{}); return err }},
		{"update_load_balancer", func() error { _, err := c.UpdateLoadBalancer(ctx, "lb", &hnslb.LoadBalancer{}); return err }},
		{"get_load_balancer", func() error { _, err := c.GetLoadBalancerByID(ctx, "lb"); return err }},
		{"list_load_balancers", func() error { _, err := c.ListLoadBalancers(ctx); return err }},
		{"delete_load_balancer", func() error { return c.DeleteLoadBalancer(ctx, "lb") }},
		{"list_load_balancers", func() error { return hnslb.WalkLoadBalancers(ctx, c, func(*hnslb.LoadBalancer) error { return nil }) }},
		{"list_endpoints_of_network", func() error {
			return hnslb.WalkEndpointsOfNetwork(ctx, c, "n", func(*hnslb.Endpoint) error { return nil })
		}},
	} {
		before, beforeN := callsOf(t, call.op), durations(t, call.op)
		_ = call.do()
		if got := callsOf(t, call.op) - before; got != 1 {
			t.Errorf("%s: counted %v times", call.op, got)
		}
		if got := durations(t, call.op) - beforeN; got != 1 {
			t.Errorf("%s: timed %d times", call.op, got)
		}
	}
	before, beforeN := callsOf(t, "service_instance"), durations(t, "service_instance")
	if _, err := c.ServiceInstance(ctx); err != nil {
		t.Fatal(err)
	}
	if callsOf(t, "service_instance") != before || durations(t, "service_instance") != beforeN {
		t.Error("ServiceInstance was counted as an HNS call")
	}
}
