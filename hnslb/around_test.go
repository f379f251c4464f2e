package hnslb

import (
	"context"
	"errors"
	"testing"
)

// oneLB answers GetLoadBalancerByID and DeleteLoadBalancer; any other call
// reaches the nil Client and panics, so the test notices it.
type oneLB struct {
	Client
	err error
}

func (o oneLB) GetLoadBalancerByID(_ context.Context, id string) (*LoadBalancer, error) {
	return &LoadBalancer{ID: id}, o.err
}

func (o oneLB) DeleteLoadBalancer(context.Context, string) error { return o.err }

// TestAroundMakesEachCallOnceUnderItsName: the wrapper hands around the
// call's name, makes the call once, and returns its value and error as they
// were; what it returns is no Walker, so a walk over it lists through it.
func TestAroundMakesEachCallOnceUnderItsName(t *testing.T) {
	ctx := context.Background()
	refused := NewError("get", CodeNotFound, "gone")
	var ops []string
	around := func(op string, call func() error) error {
		ops = append(ops, op)
		return call()
	}
	c := Around(oneLB{err: refused}, around)
	lb, err := c.GetLoadBalancerByID(ctx, "lb-1")
	if lb == nil || lb.ID != "lb-1" || !errors.Is(err, refused) {
		t.Errorf("GetLoadBalancerByID through Around: %+v, %v", lb, err)
	}
	if err := c.DeleteLoadBalancer(ctx, "lb-1"); !errors.Is(err, refused) {
		t.Errorf("DeleteLoadBalancer through Around: %v", err)
	}
	if want := []string{"get_load_balancer", "delete_load_balancer"}; len(ops) != 2 || ops[0] != want[0] || ops[1] != want[1] {
		t.Errorf("around saw %q, want %q", ops, want)
	}
	if _, ok := c.(Walker); ok {
		t.Error("Around's client is a Walker")
	}
}

// TestAroundNamesEveryCallByItsOwnOperation: each of Client's calls reaches
// around under its own name, so each HNS metric counts the call it names
// (around here makes no call: the wrapped client is never reached).
func TestAroundNamesEveryCallByItsOwnOperation(t *testing.T) {
	ctx := context.Background()
	var op string
	c := Around(nil, func(name string, _ func() error) error { op = name; return nil })
	for _, call := range []struct {
		want string
		make func()
	}{
		{OpVersion, func() { _, _ = c.Version(ctx) }},
		{OpOSBuild, func() { _, _ = c.OSBuild(ctx) }},
		{OpServiceInstance, func() { _, _ = c.ServiceInstance(ctx) }},
		{OpListNetworks, func() { _, _ = c.ListNetworks(ctx) }},
		{OpGetNetwork, func() { _, _ = c.GetNetworkByID(ctx, "n") }},
		{OpGetNetworkByName, func() { _, _ = c.GetNetworkByName(ctx, "n") }},
		{OpCreateNetwork, func() { _, _ = c.CreateNetwork(ctx, nil) }},
		{OpDeleteNetwork, func() { _ = c.DeleteNetwork(ctx, "n") }},
		{OpCreateEndpoint, func() { _, _ = c.CreateEndpoint(ctx, "n", nil) }},
		{OpGetEndpoint, func() { _, _ = c.GetEndpointByID(ctx, "e") }},
		{OpGetEndpointByName, func() { _, _ = c.GetEndpointByName(ctx, "e") }},
		{OpListEndpoints, func() { _, _ = c.ListEndpoints(ctx) }},
		{OpListEndpointsOfNetwork, func() { _, _ = c.ListEndpointsOfNetwork(ctx, "n") }},
		{OpDeleteEndpoint, func() { _ = c.DeleteEndpoint(ctx, "e") }},
		{OpCreateNamespace, func() { _, _ = c.CreateNamespace(ctx, nil) }},
		{OpGetNamespace, func() { _, _ = c.GetNamespaceByID(ctx, "s") }},
		{OpListNamespaces, func() { _, _ = c.ListNamespaces(ctx) }},
		{OpDeleteNamespace, func() { _ = c.DeleteNamespace(ctx, "s") }},
		{OpAddNamespaceEndpoint, func() { _ = c.AddNamespaceEndpoint(ctx, "s", "e") }},
		{OpRemoveNamespaceEndpoint, func() { _ = c.RemoveNamespaceEndpoint(ctx, "s", "e") }},
		{OpCreateLoadBalancer, func() { _, _ = c.CreateLoadBalancer(ctx, nil) }},
		{OpUpdateLoadBalancer, func() { _, _ = c.UpdateLoadBalancer(ctx, "l", nil) }},
		{OpGetLoadBalancer, func() { _, _ = c.GetLoadBalancerByID(ctx, "l") }},
		{OpListLoadBalancers, func() { _, _ = c.ListLoadBalancers(ctx) }},
		{OpDeleteLoadBalancer, func() { _ = c.DeleteLoadBalancer(ctx, "l") }},
	} {
		op = ""
		call.make()
		if op != call.want {
			t.Errorf("a call named %q reached around as %q", call.want, op)
		}
	}
}
