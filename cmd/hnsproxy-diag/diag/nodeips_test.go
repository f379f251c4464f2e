package diag

import (
	"context"
	"net/netip"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hnsproxy/hnsproxy/intent"
)

// setNodeAddresses sets this node's Node status addresses to what edit
// makes of them.
func (f *fixture) setNodeAddresses(edit func([]v1.NodeAddress) []v1.NodeAddress) {
	f.t.Helper()
	ctx := context.Background()
	node, err := f.kube.CoreV1().Nodes().Get(ctx, self, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	node.Status.Addresses = edit(node.Status.Addresses)
	if _, err := f.kube.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		f.t.Fatal(err)
	}
}

// addNodeAddress adds an address to this node's Node status.
func (f *fixture) addNodeAddress(typ v1.NodeAddressType, ip string) {
	f.t.Helper()
	f.setNodeAddresses(func(a []v1.NodeAddress) []v1.NodeAddress { return append(a, v1.NodeAddress{Type: typ, Address: ip}) })
}

// --bind-address names the node IP of its family only; the diagnosis takes
// the other family's from the Node, as the proxier does.
func TestBindAddressLeavesTheOtherFamilyToTheNode(t *testing.T) {
	f := newFixture(t)
	f.addNodeAddress(v1.NodeInternalIP, "fd00::11")
	f.cfg.BindAddress = "10.0.0.99"
	got := f.read().Config.NodeIPs
	want := map[intent.IPFamily]netip.Addr{intent.IPv4: netip.MustParseAddr("10.0.0.99"), intent.IPv6: netip.MustParseAddr("fd00::11")}
	if len(got) != len(want) || got[intent.IPv4] != want[intent.IPv4] || got[intent.IPv6] != want[intent.IPv6] {
		t.Fatalf("node IPs %v, want %v", got, want)
	}
}

// The diagnosis takes the node IPs as the proxier does (one owner:
// desired.NodeIPs): a family the Node lists only as ExternalIP is a node IP.
func TestNodeIPsFromExternalIPAsTheProxierTakesThem(t *testing.T) {
	f := newFixture(t)
	f.addNodeAddress(v1.NodeExternalIP, "2001:db8::11")
	if got := Diagnose(f.read()).NodeIPs; !slices.Equal(got, []string{selfIP, "2001:db8::11"}) {
		t.Fatalf("node IPs %v, want the InternalIP and the IPv6 ExternalIP", got)
	}
}

// A Node listing no address is what the proxier waits on
// (NodeAddressesMissing), not a configuration hnsproxy cannot run with:
// the diagnosis says so.
func TestNodeWithoutAddressesIsNamed(t *testing.T) {
	f := newFixture(t)
	f.setNodeAddresses(func([]v1.NodeAddress) []v1.NodeAddress {
		return []v1.NodeAddress{{Type: v1.NodeHostName, Address: self}}
	})
	_, err := readNow(context.Background(), f.source())
	if err == nil || !strings.Contains(err.Error(), `the Node "win-a" lists no InternalIP or ExternalIP address`) ||
		!strings.Contains(err.Error(), "NodeAddressesMissing") {
		t.Fatalf("Read: %v", err)
	}
}
