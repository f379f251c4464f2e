//go:build e2e

package e2e

import (
	"context"
	"slices"
	"testing"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/vfp"
)

// TestOverlayNodeJoins: a node joins an overlay cluster after hnsproxy
// started, with drift repair off: its Node object (pod CIDR) appears, then
// Flannel adds the route to it on the other nodes, then a pod on it joins a
// Service's EndpointSlice. The sync of that EndpointSlice creates the pod's
// remote endpoint with the new node's provider address, once and never
// replaced, and a packet from a pod on this node reaches it.
func TestOverlayNodeJoins(t *testing.T) {
	spec := overlaySpec
	spec.Nodes = slices.Clone(overlaySpec.Nodes[:1])
	spec.ProxyArgs = []string{"--drift-repair-period=0s"}
	c := framework.StartClusterForTest(t, spec)
	x := c.Nodes[0]
	ctx := context.Background()
	web := wire(t, x, "web", 1)
	client := wire(t, x, "client", 1)[0]
	svc := apply(t, c, service("web", "joined", "", 80, 8080), framework.Backends(web))
	dsr := flags("DSR")
	expectLBs(t, c, x, svc, lb("ClusterIP", frontend(svc.Spec.ClusterIP, 80, "TCP", 8080), dsr, local(web...)...))

	z, err := c.JoinNode(ctx, framework.NodeSpec{Name: "win-z", Profile: "ws2022", NodeIP: "10.0.0.29", PodCIDR: "10.244.9.0/24"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.RouteToNode(ctx, z); err != nil {
		t.Fatal(err)
	}
	joined := wire(t, z, "web", 1)
	before, err := x.Sim.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := framework.UpdateEndpoints(ctx, c, svc, framework.Backends(append(web, joined...))); err != nil {
		t.Fatal(err)
	}
	only := apply(t, c, service("web", "only-joined", "", 80, 8080), framework.Backends(joined))
	expectLBs(t, c, x, svc, lb("ClusterIP", frontend(svc.Spec.ClusterIP, 80, "TCP", 8080), dsr, backends(local(web...), remote(joined...))...))
	expectLBs(t, c, x, only, lb("ClusterIP", frontend(only.Spec.ClusterIP, 80, "TCP", 8080), dsr, remote(joined...)...))

	after, err := x.Sim.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Drift repair is off, and the node trigger would have replaced an
	// endpoint made with this node's address: no deletion means the first
	// write, in the sync of the EndpointSlice, had the right one.
	if deleted := after.Count(sim.OpDeleteEndpoint) - before.Count(sim.OpDeleteEndpoint); deleted != 0 {
		t.Errorf("node %s: %d endpoints deleted since the pod joined: want its endpoint created once with its node's provider address", x.Name(), deleted)
	}
	snap, err := x.Sim.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range snap.Endpoints {
		if ep.IsRemote() && ep.IP() == joined[0].IP.String() && ep.ProviderAddress() != z.Spec.NodeIP {
			t.Errorf("remote endpoint %s has provider address %s, want %s (its node's)", ep.IP(), ep.ProviderAddress(), z.Spec.NodeIP)
		}
	}
	checkFlow(t, c, flowCase{name: "a pod to a pod on the joined node (its route)",
		flow:    framework.Flow{Src: client.IP.String() + ":34000", Dst: addr(joined[0].IP.String(), 8080), Protocol: "tcp"},
		outcome: vfp.DeliveredToPod, backends: joined, port: 8080})
	checkFlow(t, c, flowCase{name: "a pod to the joined node's pod through a ClusterIP",
		flow:    framework.Flow{Src: client.IP.String() + ":34002", Dst: addr(only.Spec.ClusterIP, 80), Protocol: "tcp"},
		outcome: vfp.DeliveredToPod, backends: joined, port: 8080, node: z.Name()})
}
