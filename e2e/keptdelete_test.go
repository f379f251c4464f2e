//go:build e2e

package e2e

import (
	"context"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
	"github.com/hnsproxy/hnsproxy/hnslb"
	hnsremote "github.com/hnsproxy/hnsproxy/sim/remote"
)

// TestDeleteHNSKept: HNS reports a load balancer's delete done and keeps
// it (hnssim --kept-on-delete, as microsoft/Windows-Containers#631 reports
// of remote endpoints). With the real binaries the drift repair finds it,
// hnsproxy_hns_deletes_kept_total counts it, and it is deleted again once
// HNS lets it go.
func TestDeleteHNSKept(t *testing.T) {
	ctx := context.Background()
	c := framework.StartClusterForTest(t, l2bridgeSpec)
	a := c.Nodes[0]
	web := wire(t, a, "web", 1)
	gone := apply(t, c, service("web", "gone", "", 80, 8080), framework.Backends(web))
	expectLBs(t, c, a, gone, lb("ClusterIP", frontend(gone.Spec.ClusterIP, 80, "TCP", 8080), flags("DSR"), backends(local(web...))...))
	ids := lbIDsOn(t, a, gone.Spec.ClusterIP)

	setFaults(t, a, hnsremote.FaultsRequest{KeptOnDelete: 1})
	if err := c.Admin.CoreV1().Services("web").Delete(ctx, "gone", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Kept at the delete, and at each delete again while the fault lasts.
	err := framework.Poll(ctx, framework.ConvergeWait, pollEvery, func(ctx context.Context) error {
		kept, err := scrapeValue(ctx, a.Proxy.MetricsURL(), "hnsproxy_hns_deletes_kept_total")
		if err != nil {
			return err
		}
		if kept < 1 {
			return errorf("no kept delete counted yet")
		}
		return nil
	})
	if err != nil {
		t.Fatalf("hnsproxy_hns_deletes_kept_total: %v", err)
	}
	if still := lbIDsOn(t, a, gone.Spec.ClusterIP); !slices.Equal(still, ids) {
		t.Fatalf("load balancers on the deleted Service's frontend: %v, want the kept %v", still, ids)
	}
	setFaults(t, a, hnsremote.FaultsRequest{})
	expectLBs(t, c, a, gone) // none
}

// lbIDsOn are the IDs of the load balancers node n's HNS holds on vip.
func lbIDsOn(t *testing.T, n *framework.Node, vip string) []string {
	t.Helper()
	return lbIDsWhere(t, n, func(l *hnslb.LoadBalancer) bool { return slices.Contains(l.FrontendVIPs, vip) })
}

// lbIDsWhere are the IDs, sorted, of the load balancers node n's HNS holds
// that keep says.
func lbIDsWhere(t *testing.T, n *framework.Node, keep func(*hnslb.LoadBalancer) bool) []string {
	t.Helper()
	snap, err := n.Sim.Dump(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range snap.LoadBalancers {
		if keep(&snap.LoadBalancers[i]) {
			ids = append(ids, snap.LoadBalancers[i].ID)
		}
	}
	slices.Sort(ids)
	return ids
}
