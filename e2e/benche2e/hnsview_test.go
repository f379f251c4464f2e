//go:build linux && benche2e

package main

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim/remote"
)

// Where HNS cannot modify, each change replaces a load balancer under a
// new ID: the view follows it by its frontend, and a frontend with no load
// balancer for a moment is not programmed, whatever its check asks.
func TestHNSViewFollowsAReplacedLoadBalancer(t *testing.T) {
	ctx := context.Background()
	_, socket := serveHNS(t)
	c := remote.NewClient(socket)
	defer c.Close()
	eps := remoteEndpoints(t, c, "10.244.1.5", "10.244.1.6")
	const vip = "10.96.0.10"
	create := func(backends []string) *hnslb.LoadBalancer {
		lb, err := c.CreateLoadBalancer(ctx, &hnslb.LoadBalancer{HostComputeEndpoints: backends, FrontendVIPs: []string{vip},
			PortMappings: []hnslb.PortMapping{{Protocol: hnslb.ProtocolTCP, InternalPort: 8080, ExternalPort: 80}}, SchemaVersion: hnslb.V2})
		if err != nil {
			t.Fatal(err)
		}
		return lb
	}
	view := newHNSView(c)
	if ips, exists, err := view.backends(ctx, vip); err != nil || exists || ips != nil {
		t.Fatalf("before any load balancer: %v, %v, %v; want none", ips, exists, err)
	}
	lb := create(eps)
	if ips, exists, err := view.backends(ctx, vip); err != nil || !exists || !reflect.DeepEqual(ips, []string{"10.244.1.5", "10.244.1.6"}) {
		t.Fatalf("first load balancer: %v, %v, %v", ips, exists, err)
	}
	// Replaced: deleted, and for a moment nothing on the frontend.
	if err := c.DeleteLoadBalancer(ctx, lb.ID); err != nil {
		t.Fatal(err)
	}
	if _, exists, err := view.backends(ctx, vip); err != nil || exists {
		t.Fatalf("mid-replacement: exists %v, %v; want not programmed", exists, err)
	}
	absent := func(ips []string) bool { return len(ips) < 2 }
	if _, err := view.waitFor(ctx, []string{vip}, 50*time.Millisecond, absent); err == nil {
		t.Error("waitFor took a frontend with no load balancer for one without the pod")
	}
	create(eps[1:])
	if ips, exists, err := view.backends(ctx, vip); err != nil || !exists || !reflect.DeepEqual(ips, []string{"10.244.1.6"}) {
		t.Fatalf("the replacement: %v, %v, %v; want it found by its frontend", ips, exists, err)
	}
	if _, err := view.waitFor(ctx, []string{vip}, time.Second, absent); err != nil {
		t.Error(err)
	}
	if id, err := view.loadBalancerID(ctx, vip); err != nil || id == lb.ID {
		t.Errorf("loadBalancerID %q, %v; want the replacement's", id, err)
	}
}
