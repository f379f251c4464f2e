package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
)

// convergedNode is testNode after the real proxier's cold start, the
// proxier stopped again: HNS holds what the model wants.
func convergedNode(t *testing.T, spec clusterSpec) (*cluster, *node) {
	t.Helper()
	c, n := testNode(t, spec)
	if err := n.start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := n.waitConverged(ctx, 20*time.Millisecond, func() bool {
		k := n.hns.Counters()
		return k.CountResult(sim.OpCreateLoadBalancer, sim.ResultOK) >= c.expectedLBs() &&
			k.CountResult(sim.OpCreateEndpoint, sim.ResultOK) >= c.expectedOwnEndpoints()
	})
	if stopErr := n.stop(); err == nil {
		err = stopErr
	}
	if err != nil {
		t.Fatal(err)
	}
	rep := &report{}
	if verify(c, n, rep, "converged"); len(rep.Problems) > 0 {
		t.Fatalf("a converged node: %q", rep.Problems)
	}
	return c, n
}

// lbOf is the load balancer on Service i's cluster IP.
func lbOf(t *testing.T, c *cluster, n *node, i int) hnslb.LoadBalancer {
	t.Helper()
	lbs := n.hns.LoadBalancersOn(c.svcs[i].Spec.ClusterIP)
	if len(lbs) != 1 {
		t.Fatalf("Service %d: %d load balancers", i, len(lbs))
	}
	return lbs[0]
}

// remoteEndpointOutside is a remote endpoint on no pod of Service i (any
// remote endpoint for i < 0).
func remoteEndpointOutside(t *testing.T, c *cluster, n *node, i int) hnslb.Endpoint {
	t.Helper()
	mine := map[string]bool{}
	if i >= 0 {
		for _, p := range c.members[i] {
			mine[c.pods[p].ip] = true
		}
	}
	for _, e := range n.hns.Snapshot().Endpoints {
		if e.IsRemote() && !mine[e.IP()] {
			return e
		}
	}
	t.Fatal("no remote endpoint outside the Service")
	return hnslb.Endpoint{}
}

// The check after every phase compares what HNS holds with the model, not
// only how many: a load balancer that sends a Service to a pod not among
// its ready endpoints, on the wrong target port, or twice on one cluster
// IP while another has none, and remote endpoints on addresses nothing
// wants in place of those wanted, are each a problem, though every count
// matches the model.
func TestVerifyFindsWrongObjectsWhoseCountsMatch(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		spoil      func(t *testing.T, c *cluster, n *node)
	}{
		{"a backend outside the Service", "load balancer", func(t *testing.T, c *cluster, n *node) {
			lb := lbOf(t, c, n, 0)
			lb.HostComputeEndpoints[0] = remoteEndpointOutside(t, c, n, 0).ID
			if _, err := n.hns.PutLoadBalancerOutOfBand(lb); err != nil {
				t.Fatal(err)
			}
		}},
		{"the wrong target port", "load balancer", func(t *testing.T, c *cluster, n *node) {
			lb := lbOf(t, c, n, 0)
			lb.PortMappings[0].InternalPort = targetPort + 1
			if _, err := n.hns.PutLoadBalancerOutOfBand(lb); err != nil {
				t.Fatal(err)
			}
		}},
		{"two on one cluster IP, none on another", "load balancer", func(t *testing.T, c *cluster, n *node) {
			if err := n.hns.DeleteLoadBalancerOutOfBand(lbOf(t, c, n, 1).ID); err != nil {
				t.Fatal(err)
			}
			lb := lbOf(t, c, n, 0)
			lb.ID = ""
			if _, err := n.hns.PutLoadBalancerOutOfBand(lb); err != nil {
				t.Fatal(err)
			}
		}},
		{"a remote endpoint nothing wants in place of one wanted", "remote endpoint", func(t *testing.T, c *cluster, n *node) {
			wanted := remoteEndpointOutside(t, c, n, -1)
			unused := ""
			for p, refs := range c.readyRefs {
				if refs == 0 && !c.pods[p].local() {
					unused = c.pods[p].ip
					break
				}
			}
			if unused == "" {
				t.Fatal("every remote pod has a ready endpoint")
			}
			stray := wanted
			stray.ID, stray.Name = "", "stray"
			stray.IpConfigurations = slices.Clone(wanted.IpConfigurations)
			stray.IpConfigurations[0].IpAddress = unused
			created, err := n.hns.CreateEndpoint(context.Background(), n.networkID, &stray)
			if err != nil {
				t.Fatal(err)
			}
			// The load balancers that used the wanted one use the stray
			// instead, so their backends still count right.
			var users []hnslb.LoadBalancer
			for _, lb := range n.hns.Snapshot().LoadBalancers {
				if slices.Contains(lb.HostComputeEndpoints, wanted.ID) {
					users = append(users, lb)
				}
			}
			if err := n.hns.DeleteEndpoint(context.Background(), wanted.ID); err != nil {
				t.Fatal(err)
			}
			for _, lb := range users {
				lb.HostComputeEndpoints[slices.Index(lb.HostComputeEndpoints, wanted.ID)] = created.ID
				if _, err := n.hns.PutLoadBalancerOutOfBand(lb); err != nil {
					t.Fatal(err)
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, n := convergedNode(t, smallSpec())
			tc.spoil(t, c, n)
			rep := &report{}
			verify(c, n, rep, "spoiled")
			if !slices.ContainsFunc(rep.Problems, func(p string) bool { return strings.Contains(p, tc.want) }) {
				t.Errorf("problems %q: none about a %s", rep.Problems, tc.want)
			}
		})
	}
}
