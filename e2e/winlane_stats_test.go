//go:build e2e

package e2e

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
	"github.com/hnsproxy/hnsproxy/sim"
)

// TestWindowsLaneStatsMatchLinux runs one scenario on the Linux lane and on
// the Windows lane and compares hnssim's counts by logical operation: the
// writes (creates, updates, deletes and namespace attaches by kind) must be
// equal, since the behaviour is the same; only the raw hcn calls behind
// them, counted apart as BridgeCalls, differ by design.
func TestWindowsLaneStatsMatchLinux(t *testing.T) {
	spec := framework.ClusterSpec{
		NetworkType: framework.NetworkL2Bridge,
		Nodes:       []framework.NodeSpec{{Name: "win-s", Profile: "ws2022", NodeIP: "10.0.0.21", PodCIDR: "10.244.5.0/24"}},
		ProxyArgs:   []string{"--sync-period=1h"},
	}
	linux := statsScenario(t, spec)
	spec.Windows = true
	windows := statsScenario(t, spec)
	for _, op := range slices.Sorted(maps.Keys(linux)) {
		if windows[op] != linux[op] {
			t.Errorf("%s: %d on the Windows lane, %d on the Linux lane", op, windows[op], linux[op])
		}
	}
	for op := range windows {
		if _, ok := linux[op]; !ok {
			t.Errorf("%s: %d on the Windows lane, none on the Linux lane", op, windows[op])
		}
	}
	t.Logf("successful writes by operation on both lanes: %v", linux)
}

// statsScenario wires two pods, serves them as a ClusterIP Service, waits
// for HNS to settle, removes a pod, and returns the node's successful
// writes by operation.
func statsScenario(t *testing.T, spec framework.ClusterSpec) map[sim.Op]int {
	t.Helper()
	c := framework.StartClusterForTest(t, spec)
	n := c.Nodes[0]
	pods := wire(t, n, "web", 2)
	svc := apply(t, c, service("web", "web", "", 80, 8080), framework.Backends(pods))
	expectLBs(t, c, n, svc, lb("ClusterIP", frontend(svc.Spec.ClusterIP, 80, "TCP", 8080), flags("DSR"), local(pods...)...))
	if err := framework.UpdateEndpoints(context.Background(), c, svc, framework.Backends(pods[1:])); err != nil {
		t.Fatal(err)
	}
	expectLBs(t, c, n, svc, lb("ClusterIP", frontend(svc.Spec.ClusterIP, 80, "TCP", 8080), flags("DSR"), local(pods[1:]...)...))
	if t.Failed() {
		t.FailNow()
	}
	stats := quiescent(t, n)
	writes := map[sim.Op]int{}
	for op, results := range stats.Calls {
		for _, w := range []string{"Create", "Update", "Delete", "AddNamespace", "RemoveNamespace"} {
			if strings.HasPrefix(string(op), w) && results[sim.ResultOK] > 0 {
				writes[op] = results[sim.ResultOK]
			}
		}
	}
	return writes
}
