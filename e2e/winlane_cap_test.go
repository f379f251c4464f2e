//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/proxier"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
	"github.com/hnsproxy/hnsproxy/sim"
)

// TestWindowsLaneBackendCap serves a Service of more backends than the
// 64-backend cap from two Windows-lane nodes in one cluster, each in the
// Wine prefix of its own build (each hnsproxy.exe must read its own): ws2019 (17763.1757, below the build that
// lifted the cap), where hnsproxy.exe reads the build from the registry and
// caps at 64 from the start, and ws2022-cap64 (a build that reports 1024
// but enforces 64), where HNS's 0x57 refusal must come through hcn's
// HRESULT decoding as "invalid parameter" for hnsproxy.exe to learn the
// cap. Each node keeps 64 backends, its local ones first, warns, and
// settles: one refusal at most, no retry loop.
func TestWindowsLaneBackendCap(t *testing.T) {
	ctx := context.Background()
	c := framework.StartClusterForTest(t, framework.ClusterSpec{
		NetworkType: framework.NetworkL2Bridge,
		Nodes: []framework.NodeSpec{
			{Name: "win-c19", Profile: sim.ProfileWS2019, NodeIP: "10.0.0.31", PodCIDR: "10.244.7.0/24"},
			{Name: "win-c64", Profile: sim.ProfileWS2022Cap64, NodeIP: "10.0.0.32", PodCIDR: "10.244.8.0/24"},
		},
		Windows:   true,
		ProxyArgs: []string{"--sync-period=1h"},
	})
	old, learner := c.Nodes[0], c.Nodes[1]
	// Each hnsproxy.exe read its own build from its prefix's registry.
	for _, n := range c.Nodes {
		profile, err := sim.ProfileByName(n.Spec.Profile)
		if err != nil {
			t.Fatal(err)
		}
		if got := debugOSBuild(t, n); got != profile.OSBuild.String() {
			t.Errorf("node %s (%s): hnsproxy.exe read OS build %q from the registry, want %s", n.Name(), n.Spec.Profile, got, profile.OSBuild)
		}
	}
	// 33 a node: 66 backends, 33 local, so 64 keeps every local one.
	pods := append(wire(t, old, "many", 33), wire(t, learner, "many", 33)...)
	big := apply(t, c, service("batch", "workers", "", 9000, 9000), framework.Backends(pods))
	for _, n := range c.Nodes {
		expectCappedLB(t, c, n, big, pods, hnslb.MaxBackendsLegacy)
	}
	if t.Failed() {
		t.FailNow()
	}
	expectEvent(t, c, "Service", big.Name, desired.ReasonBackendsTruncated)
	expectEvent(t, c, "Node", learner.Name(), proxier.ReasonBackendCapLowered)
	refusals := map[*framework.Node]int{old: 0, learner: 1}
	for _, n := range c.Nodes {
		stats := quiescent(t, n)
		failed := stats.Count(sim.OpCreateLoadBalancer) - stats.CountResult(sim.OpCreateLoadBalancer, sim.ResultOK)
		if got := stats.CountResult(sim.OpCreateLoadBalancer, "InvalidParameter"); got != refusals[n] || failed != got {
			t.Errorf("node %s (%s): load balancer creates refused: %d with 0x57, %d in all; want %d, the refusal the cap is learned from",
				n.Name(), n.Spec.Profile, got, failed, refusals[n])
		}
	}
	if noisy, err := warnings(ctx, c, "Node", old.Name(), proxier.ReasonBackendCapLowered); err != nil || noisy > 0 {
		t.Errorf("node %s: %d %s events (%v); its registry's build gave the cap, nothing was learned", old.Name(), noisy, proxier.ReasonBackendCapLowered, err)
	}
	for _, n := range c.Nodes {
		checkLogClean(t, n)
	}
}

// debugOSBuild is the Windows build the node's hnsproxy reports in
// /debug/hns, once its proxier has started (before that the page answers
// 503).
func debugOSBuild(t *testing.T, n *framework.Node) string {
	t.Helper()
	var build string
	err := framework.Poll(context.Background(), framework.ConvergeWait, pollEvery, func(ctx context.Context) error {
		code, body, err := httpGet(ctx, n.Proxy.DebugURL())
		if err != nil {
			return err
		}
		if code != http.StatusOK {
			return fmt.Errorf("/debug/hns: %d: %.300s", code, body)
		}
		var d struct {
			OSBuild string `json:"osBuild"`
		}
		if err := json.Unmarshal(body, &d); err != nil {
			return fmt.Errorf("/debug/hns: %w: %.300s", err, body)
		}
		build = d.OSBuild
		return nil
	})
	if err != nil {
		t.Fatalf("node %s: %v", n.Name(), err)
	}
	return build
}

// expectEvent waits for a Warning event of reason about the object of kind
// and name.
func expectEvent(t *testing.T, c *framework.Cluster, kind, name, reason string) {
	t.Helper()
	err := framework.Poll(context.Background(), framework.ConvergeWait, pollEvery, func(ctx context.Context) error {
		n, err := warnings(ctx, c, kind, name, reason)
		if err == nil && n == 0 {
			err = fmt.Errorf("no Warning %s event about %s %s", reason, kind, name)
		}
		return err
	})
	if err != nil {
		t.Error(err)
	}
}

// warnings counts the Warning events of reason about the object of kind and name.
func warnings(ctx context.Context, c *framework.Cluster, kind, name, reason string) (int, error) {
	list, err := c.Admin.EventsV1().Events(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, ev := range list.Items {
		if ev.Type == corev1.EventTypeWarning && ev.Reason == reason && ev.Regarding.Kind == kind && ev.Regarding.Name == name {
			n++
		}
	}
	return n, nil
}
