//go:build e2e

package e2e

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
	"github.com/hnsproxy/hnsproxy/hnslb"
	hnsremote "github.com/hnsproxy/hnsproxy/sim/remote"
)

// TestCleanup runs the real binary with --cleanup on an overlay node whose
// HNS hnsproxy programmed (load balancers, remote endpoints, the source VIP
// endpoint) beside a foreign load balancer: everything hnsproxy made goes,
// the foreign load balancer and the CNI's pod endpoints stay, the state file
// is removed, and the exit status is 0. So too when every listing leaves
// out every object (hnssim's --left-out-of-listings): cleanup deletes what
// its state file records by ID.
func TestCleanup(t *testing.T) {
	for _, leftOut := range []bool{false, true} {
		t.Run(map[bool]string{false: "listed", true: "left out of listings"}[leftOut], func(t *testing.T) {
			cleanupNode(t, leftOut)
		})
	}
}

func cleanupNode(t *testing.T, leftOut bool) {
	ctx := context.Background()
	c, _, svc := webOnTwoNodes(t, overlaySpec)
	x := c.Nodes[0]

	// Programmed: the ClusterIP's load balancer, with the remote pod behind a remote endpoint.
	var before *hnslb.Snapshot
	err := framework.Poll(ctx, framework.ConvergeWait, 200*time.Millisecond, func(ctx context.Context) error {
		snap, err := x.Sim.Dump(ctx)
		if err != nil {
			return err
		}
		for _, lb := range snap.LoadBalancers {
			if slices.Contains(lb.FrontendVIPs, svc.Spec.ClusterIP) && len(lb.HostComputeEndpoints) == 2 {
				before = snap
				return nil
			}
		}
		return errorf("no load balancer for %s with both backends yet", svc.Spec.ClusterIP)
	})
	if err != nil {
		t.Fatal(err)
	}
	// Every local endpoint but the source VIP's (the pod CIDR's .2, as in
	// the framework's overlay nodes) is the CNI's.
	sourceVIP := nthIP(x.Spec.PodCIDR, 2)
	var pods []string
	for _, ep := range before.Endpoints {
		if !ep.IsRemote() && ep.IP() != sourceVIP {
			pods = append(pods, ep.ID)
		}
	}
	for what, made := range map[string]func(hnslb.Endpoint) bool{
		"remote endpoint":     func(ep hnslb.Endpoint) bool { return ep.IsRemote() },
		"source VIP endpoint": func(ep hnslb.Endpoint) bool { return ep.IP() == sourceVIP },
	} {
		if !slices.ContainsFunc(before.Endpoints, made) {
			t.Fatalf("no %s programmed: %+v", what, before.Endpoints)
		}
	}

	foreign, err := x.Sim.Client.CreateLoadBalancer(ctx, &hnslb.LoadBalancer{
		FrontendVIPs:         []string{"10.96.200.200"},
		HostComputeEndpoints: pods[:1],
		PortMappings:         []hnslb.PortMapping{{Protocol: hnslb.ProtocolTCP, InternalPort: 9, ExternalPort: 9}},
		SchemaVersion:        hnslb.V2,
	})
	if err != nil {
		t.Fatal(err)
	}

	if err := x.Proxy.Stop(); err != nil {
		t.Fatal(err)
	}
	if leftOut {
		setFaults(t, x, hnsremote.FaultsRequest{LeftOutOfListings: 1})
	}
	out, err := x.Proxy.Cleanup(ctx)
	if err != nil {
		t.Fatalf("hnsproxy --cleanup: %v\n%s", err, out)
	}
	setFaults(t, x, hnsremote.FaultsRequest{})

	after, err := x.Sim.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(after.LoadBalancers) != 1 || after.LoadBalancers[0].ID != foreign.ID {
		t.Errorf("load balancers after cleanup: %+v, want only the foreign %s", after.LoadBalancers, foreign.ID)
	}
	var left []string
	for _, ep := range after.Endpoints {
		left = append(left, ep.ID)
	}
	slices.Sort(left)
	slices.Sort(pods)
	if !slices.Equal(left, pods) {
		t.Errorf("endpoints after cleanup %v, want only the CNI's pod endpoints %v\n%s", left, pods, out)
	}
	if _, err := os.Stat(x.Proxy.StateFile()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("state file %s after cleanup: %v, want it removed", x.Proxy.StateFile(), err)
	}
}

// webOnTwoNodes starts a cluster of spec's first two nodes and a ClusterIP
// Service "web/web" with one pod on each.
func webOnTwoNodes(t *testing.T, spec framework.ClusterSpec) (*framework.Cluster, []framework.Pod, *corev1.Service) {
	t.Helper()
	c := framework.StartClusterForTest(t, spec)
	web := append(wire(t, c.Nodes[0], "web", 1), wire(t, c.Nodes[1], "web", 1)...)
	return c, web, apply(t, c, service("web", "web", "", 80, 8080), framework.Backends(web))
}
