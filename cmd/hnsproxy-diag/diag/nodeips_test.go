package diag

import (
	"context"
	"net/netip"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hnsproxy/hnsproxy/intent"
)

// --bind-address names the node IP of its family only; the diagnosis takes
// the other family's from the Node, as the proxier does.
func TestBindAddressLeavesTheOtherFamilyToTheNode(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	node, err := f.kube.CoreV1().Nodes().Get(ctx, self, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node.Status.Addresses = append(node.Status.Addresses, v1.NodeAddress{Type: v1.NodeInternalIP, Address: "fd00::11"})
	if _, err := f.kube.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.cfg.BindAddress = "10.0.0.99"
	got := f.read().Config.NodeIPs
	want := map[intent.IPFamily]netip.Addr{intent.IPv4: netip.MustParseAddr("10.0.0.99"), intent.IPv6: netip.MustParseAddr("fd00::11")}
	if len(got) != len(want) || got[intent.IPv4] != want[intent.IPv4] || got[intent.IPv6] != want[intent.IPv6] {
		t.Fatalf("node IPs %v, want %v", got, want)
	}
}
