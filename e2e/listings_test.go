//go:build e2e

package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
	"github.com/hnsproxy/hnsproxy/sim"
	hnsremote "github.com/hnsproxy/hnsproxy/sim/remote"
)

// TestListingsThatRepeatOrLeaveOutObjects: the real hnsproxy restarted
// while node a's HNS answers every object twice in each listing (hnssim
// --listed-twice 1) writes nothing: it takes no copy for a duplicate of
// its own to delete. Then a Service is deleted while hnsproxy is down and
// HNS leaves every object out of two looks in a row, listings and gets
// alike (--left-out-of-listings 1 --left-out-in-a-row 2 --gets-leave-out,
// the drift repair an hour away): restarted, hnsproxy reads by ID what its
// state file owns, and each endpoint its load balancers name, asking a get
// again while it answers "not found", deletes the deleted Service's load
// balancer and keeps the other's, with the remote endpoint and the pod on
// node a it names, as they were. Neither fault has a public capture
// (docs/simulator.md); taking one listing's silence, or one get's, for a
// delete left the load balancer in HNS for good, as another program's, and
// the kept Service's, its pod on node a unlisted (the CNI's endpoint,
// which hnsproxy finds through listings), was deleted.
func TestListingsThatRepeatOrLeaveOutObjects(t *testing.T) {
	ctx := context.Background()
	spec := l2bridgeSpec
	spec.DriftRepairPeriod = time.Hour // Start's listing alone, each restart
	c := framework.StartClusterForTest(t, spec)
	a := c.Nodes[0]
	web := wire(t, c.Nodes[1], "web", 1) // remote on a: its endpoint is hnsproxy's
	here := wire(t, a, "web", 1)         // local on a: its endpoint is the CNI's
	kept := apply(t, c, service("web", "kept", "", 80, 8080), framework.Backends(web, here))
	gone := apply(t, c, service("web", "gone", "", 81, 8080), framework.Backends(web))
	expectLBs(t, c, a, kept, lb("ClusterIP", frontend(kept.Spec.ClusterIP, 80, "TCP", 8080), flags("DSR"), backends(remote(web...), local(here...))...))
	expectLBs(t, c, a, gone, lb("ClusterIP", frontend(gone.Spec.ClusterIP, 81, "TCP", 8080), flags("DSR"), backends(remote(web...))...))
	keptIDs, goneIDs, endpoints := lbIDsOn(t, a, kept.Spec.ClusterIP), lbIDsOn(t, a, gone.Spec.ClusterIP), endpointIDsOn(t, a)
	if len(keptIDs) != 1 || len(goneIDs) != 1 {
		t.Fatalf("load balancers %v and %v, want one per Service", keptIDs, goneIDs)
	}

	setFaults(t, a, hnsremote.FaultsRequest{ListedTwice: 1})
	checkNoWrites(t, c, a, "a restart whose listings answer each object twice", func() error { return a.Proxy.Restart(ctx) })
	setFaults(t, a, hnsremote.FaultsRequest{})

	if err := a.Proxy.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := c.Admin.CoreV1().Services("web").Delete(ctx, "gone", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	setFaults(t, a, hnsremote.FaultsRequest{LeftOutOfListings: 1, LeftOutInARow: 2, GetsLeaveOut: true})
	if err := a.Proxy.Start(ctx); err != nil {
		t.Fatal(err)
	}
	err := framework.Poll(ctx, framework.ConvergeWait, pollEvery, func(ctx context.Context) error {
		if left := lbIDsOn(t, a, gone.Spec.ClusterIP); len(left) > 0 {
			return errorf("the deleted Service's load balancers %v are still in HNS", left)
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
	if now := lbIDsOn(t, a, kept.Spec.ClusterIP); !slices.Equal(now, keptIDs) {
		t.Errorf("the kept Service's load balancers are %v, want %v as they were", now, keptIDs)
	}
	if now := endpointIDsOn(t, a); !slices.Equal(now, endpoints) {
		t.Errorf("endpoints %v, want %v as they were", now, endpoints)
	}
	setFaults(t, a, hnsremote.FaultsRequest{})
	expectLBs(t, c, a, kept, lb("ClusterIP", frontend(kept.Spec.ClusterIP, 80, "TCP", 8080), flags("DSR"), backends(remote(web...), local(here...))...))
}

// endpointIDsOn are the IDs, sorted, of every endpoint node n's HNS holds.
func endpointIDsOn(t *testing.T, n *framework.Node) []string {
	t.Helper()
	snap, err := n.Sim.Dump(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, ep := range snap.Endpoints {
		ids = append(ids, ep.ID)
	}
	slices.Sort(ids)
	return ids
}

// TestDriftRepairsWhoseListingsLeaveOutObjects: the real hnsproxy's drift
// repairs (every 2 s) on a node whose HNS listings leave out every object
// (hnssim --left-out-of-listings 1) write nothing: each load balancer and
// remote endpoint a Service wants that a repair's listing left out is read
// by ID and kept. A Service deleted meanwhile still has its load balancer
// deleted. Taken for vanished on the listing's word, they were dropped from
// the state file and made again, refused as taken every few seconds, and
// the deleted Service's load balancer stayed in HNS for good, as another
// program's.
func TestDriftRepairsWhoseListingsLeaveOutObjects(t *testing.T) {
	ctx := context.Background()
	c := framework.StartClusterForTest(t, l2bridgeSpec)
	a := c.Nodes[0]
	web := wire(t, c.Nodes[1], "web", 1) // remote on a: its endpoint is hnsproxy's
	kept := apply(t, c, service("web", "kept", "", 80, 8080), framework.Backends(web))
	gone := apply(t, c, service("web", "gone", "", 81, 8080), framework.Backends(web))
	expectLBs(t, c, a, kept, lb("ClusterIP", frontend(kept.Spec.ClusterIP, 80, "TCP", 8080), flags("DSR"), backends(remote(web...))...))
	expectLBs(t, c, a, gone, lb("ClusterIP", frontend(gone.Spec.ClusterIP, 81, "TCP", 8080), flags("DSR"), backends(remote(web...))...))
	keptIDs, endpoints := lbIDsOn(t, a, kept.Spec.ClusterIP), endpointIDsOn(t, a)

	before := quiescent(t, a)
	setFaults(t, a, hnsremote.FaultsRequest{LeftOutOfListings: 1})
	// Three repairs' listings at least, and the Syncs after them.
	err := framework.Poll(ctx, framework.ConvergeWait, pollEvery, func(ctx context.Context) error {
		s, err := a.Sim.Stats(ctx)
		if err != nil {
			return err
		}
		if n := s.Count(sim.OpListLoadBalancers) - before.Count(sim.OpListLoadBalancers); n < 3 {
			return errorf("%d listings of load balancers since the fault, want 3", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	after := quiescent(t, a)
	for _, op := range []sim.Op{sim.OpCreateLoadBalancer, sim.OpCreateEndpoint, sim.OpDeleteLoadBalancer, sim.OpDeleteEndpoint} {
		if n := after.Count(op) - before.Count(op); n != 0 {
			t.Errorf("drift repairs whose listings left everything out made %d %s calls (refused or not), want 0\nbefore: %v\nafter:  %v",
				n, op, before.Calls, after.Calls)
		}
	}

	if err := c.Admin.CoreV1().Services("web").Delete(ctx, "gone", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err = framework.Poll(ctx, framework.ConvergeWait, pollEvery, func(ctx context.Context) error {
		if left := lbIDsOn(t, a, gone.Spec.ClusterIP); len(left) > 0 {
			return errorf("the deleted Service's load balancers %v are still in HNS", left)
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
	setFaults(t, a, hnsremote.FaultsRequest{})
	if now := lbIDsOn(t, a, kept.Spec.ClusterIP); !slices.Equal(now, keptIDs) {
		t.Errorf("the kept Service's load balancers are %v, want %v as they were", now, keptIDs)
	}
	if now := endpointIDsOn(t, a); !slices.Equal(now, endpoints) {
		t.Errorf("endpoints %v, want %v as they were", now, endpoints)
	}
}
