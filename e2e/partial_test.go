//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
	hnsremote "github.com/hnsproxy/hnsproxy/sim/remote"
)

// TestPartialCreatesLeftBeforeAKill: node a's HNS refuses every load
// balancer create (0x57) and leaves, after each, a load balancer without
// port mappings that holds nothing (hnssim --partial-creates, as
// kubernetes/kubernetes#141488 met). The real hnsproxy is killed before any
// listing looked for them, and HNS takes creates again. Restarted on its
// state file, it deletes every one its failed creates left, with the drift
// repair an hour away, and programs the Service. Remembering failures only
// in memory, it left them for good.
func TestPartialCreatesLeftBeforeAKill(t *testing.T) {
	ctx := context.Background()
	spec := l2bridgeSpec
	spec.DriftRepairPeriod = time.Hour // Start's listing, not a repair, finds them
	c := framework.StartClusterForTest(t, spec)
	a := c.Nodes[0]
	web := wire(t, a, "web", 1)
	foreign := portlessOn(t, a) // none: the rig plants nothing of the shape
	setFaults(t, a, hnsremote.FaultsRequest{ErrorRate: map[string]float64{string(sim.OpCreateLoadBalancer): 1},
		Errors: []hnslb.ErrorCode{hnslb.CodeInvalidParameter}, PartialCreates: 1})
	svc := apply(t, c, service("web", "web", "", 80, 8080), framework.Backends(web))
	err := framework.Poll(ctx, framework.ConvergeWait, pollEvery, func(ctx context.Context) error {
		if n := len(portlessOn(t, a)) - len(foreign); n < 1 {
			return errorf("no failed create has left a load balancer yet")
		}
		// The failure is recorded at its Sync's end, after HNS left the
		// load balancer: a kill in between loses the record, and Start
		// claims the load balancer by its key's declaration instead (the
		// path of a failure whose record was lost, reliability.md), which
		// is not this test's.
		if !failureRecorded(t, a) {
			return errorf("no failed create recorded in the state file yet")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Proxy.Kill(); err != nil {
		t.Fatal(err)
	}
	setFaults(t, a, hnsremote.FaultsRequest{})
	left := portlessOn(t, a)
	if err := a.Proxy.Start(ctx); err != nil {
		t.Fatal(err)
	}
	expectLBs(t, c, a, svc, lb("ClusterIP", frontend(svc.Spec.ClusterIP, 80, "TCP", 8080), flags("DSR"), backends(local(web...))...))
	err = framework.Poll(ctx, framework.ConvergeWait, pollEvery, func(ctx context.Context) error {
		if now := portlessOn(t, a); len(now) != len(foreign) {
			return errorf("load balancers without port mappings %v (%d left before the kill)", now, len(left))
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
	log, err := os.ReadFile(a.Proxy.LogPath())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), "Deleting a load balancer HNS left without port mappings after a failed create") {
		t.Error("hnsproxy's log does not say it deleted what its failed creates left")
	}
}

// failureRecorded reports whether node n's state file (its journal, or a
// snapshot that folded it) records a failed load balancer create.
func failureRecorded(t *testing.T, n *framework.Node) bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(n.StateDir(), "*.json*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(`"kind":"failed-lb"`)) || bytes.Contains(b, []byte(`"failedLoadBalancerCreates"`)) {
			return true
		}
	}
	return false
}

// portlessOn are the IDs of the load balancers node n's HNS lists without
// port mappings.
func portlessOn(t *testing.T, n *framework.Node) []string {
	t.Helper()
	return lbIDsWhere(t, n, func(l *hnslb.LoadBalancer) bool { return len(l.PortMappings) == 0 })
}
