//go:build e2e

package e2e

import (
	"context"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
	hnsremote "github.com/hnsproxy/hnsproxy/sim/remote"
)

// hangSyncPeriod makes twice the sync period, the health timeout, short.
const hangSyncPeriod = 5 * time.Second

// TestHNSHang (F7) hangs HNS calls under the real hnsproxy and hnssim.
// One hung call (a load balancer delete) times out, is counted, and a
// Service created meanwhile is programmed; the delete lands once HNS lets
// it go. Then every call hangs: /livez stays 200 past twice the sync period
// (where it used to fail and get the pod restarted), since the sync loop
// still runs; once HNS answers, the change made meanwhile is programmed.
func TestHNSHang(t *testing.T) {
	ctx := context.Background()
	spec := l2bridgeSpec
	spec.ProxyArgs = append(slices.Clone(spec.ProxyArgs), "--hns-call-timeout=1s", "--sync-period="+hangSyncPeriod.String())
	c := framework.StartClusterForTest(t, spec)
	a := c.Nodes[0]
	web := wire(t, a, "web", 1)
	expect := func(svc string, port int32) string {
		return lb("ClusterIP", frontend(svc, port, "TCP", 8080), flags("DSR"), backends(local(web...))...)
	}
	gone := apply(t, c, service("web", "gone", "", 80, 8080), framework.Backends(web))
	expectLBs(t, c, a, gone, expect(gone.Spec.ClusterIP, 80))

	// One call hangs: the delete. The rest of the node's programming goes on.
	setFaults(t, a, hnsremote.FaultsRequest{Hang: []string{"DeleteLoadBalancer"}})
	if err := c.Admin.CoreV1().Services("web").Delete(ctx, "gone", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	added := apply(t, c, service("web", "added", "", 81, 8080), framework.Backends(web))
	expectLBs(t, c, a, added, expect(added.Spec.ClusterIP, 81))
	err := framework.Poll(ctx, framework.ConvergeWait, pollEvery, func(ctx context.Context) error {
		n, err := scrapeValue(ctx, a.Proxy.MetricsURL(), "hnsproxy_hns_call_timeouts_total")
		if err == nil && n == 0 {
			err = errorf("no HNS call timeout counted")
		}
		return err
	})
	if err != nil {
		t.Errorf("hnsproxy_hns_call_timeouts_total: %v", err)
	}
	setFaults(t, a, hnsremote.FaultsRequest{})
	expectLBs(t, c, a, gone) // none

	// Every call hangs: a wedged HNS.
	setFaults(t, a, hnsremote.FaultsRequest{Hang: []string{"*"}})
	late := apply(t, c, service("web", "late", "", 82, 8080), framework.Backends(web))
	livez := strings.TrimSuffix(a.Proxy.HealthzURL(), "/healthz") + "/livez"
	// The change waits for HNS; /livez must hold past the health timeout
	// (twice the sync period), when the loop used to be declared dead.
	for end := time.Now().Add(3 * hangSyncPeriod); time.Now().Before(end); time.Sleep(pollEvery) {
		if code, body, err := httpGet(ctx, livez); err != nil || code != http.StatusOK {
			t.Fatalf("/livez with HNS hung = %d %s, %v; want 200: a hung HNS is not a dead hnsproxy", code, body, err)
		}
	}
	setFaults(t, a, hnsremote.FaultsRequest{})
	expectLBs(t, c, a, late, expect(late.Spec.ClusterIP, 82))
	if code, body, err := httpGet(ctx, a.Proxy.HealthzURL()); err != nil || code != http.StatusOK {
		t.Errorf("/healthz once HNS answers = %d %s, %v", code, body, err)
	}
}

// TestHNSHangAtStart starts the real hnsproxy against an hnssim whose
// network reads hang, as a wedged HNS's calls do (kubernetes/aks-engine#4315):
// it gives up at --hns-network-timeout, saying HNS hangs and what clears it,
// where it used to wait for good without a word. Once HNS answers, it
// starts and programs the node.
func TestHNSHangAtStart(t *testing.T) {
	ctx := context.Background()
	spec := l2bridgeSpec
	spec.ProxyArgs = append(slices.Clone(spec.ProxyArgs), "--hns-call-timeout=1s", "--hns-network-timeout=5s")
	c := framework.StartClusterForTest(t, spec)
	a := c.Nodes[0]
	if err := a.Proxy.Stop(); err != nil {
		t.Fatal(err)
	}
	setFaults(t, a, hnsremote.FaultsRequest{Hang: []string{"GetNetwork"}})
	// /healthz may answer while the start waits for HNS, or the start may
	// fail first: either way the process must end by itself.
	startErr := a.Proxy.Start(ctx)
	if !a.Proxy.WaitExit(time.Minute) {
		t.Fatalf("hnsproxy still runs a minute into a hung HNS (start: %v)", startErr)
	}
	log, err := os.ReadFile(a.Proxy.LogPath())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"HNS call timed out", "HNS may be hung", "restarting the hns service"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("hnsproxy's log does not say %q; it ends:\n%s", want, tail(string(log), 15))
		}
	}

	setFaults(t, a, hnsremote.FaultsRequest{})
	if err := a.Proxy.Start(ctx); err != nil {
		t.Fatal(err)
	}
	web := wire(t, a, "web", 1)
	svc := apply(t, c, service("web", "after", "", 80, 8080), framework.Backends(web))
	expectLBs(t, c, a, svc, lb("ClusterIP", frontend(svc.Spec.ClusterIP, 80, "TCP", 8080), flags("DSR"), backends(local(web...))...))
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func setFaults(t *testing.T, n *framework.Node, req hnsremote.FaultsRequest) {
	t.Helper()
	if err := n.Sim.SetFaults(context.Background(), req); err != nil {
		t.Fatal(err)
	}
}
