package proxier

import (
	"context"
	"net/netip"
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/hnsproxy/hnsproxy/intent"
)

// dualStackService is web with an IPv6 cluster IP too, and an IPv6 slice
// with one backend on another node.
func dualStackService() (*v1.Service, *discoveryv1.EndpointSlice) {
	svc := service("web", "10.96.0.10", func(s *v1.Service) {
		s.Spec.ClusterIPs = []string{"10.96.0.10", "fd00:10:96::10"}
		s.Spec.IPFamilies = []v1.IPFamily{v1.IPv4Protocol, v1.IPv6Protocol}
		s.Spec.IPFamilyPolicy = ptr.To(v1.IPFamilyPolicyPreferDualStack)
	})
	v6 := slice("web")
	v6.Name, v6.AddressType = "web-v6", discoveryv1.AddressTypeIPv6
	v6.Endpoints = []discoveryv1.Endpoint{{Addresses: []string{"fd00:10:244:2::7"}, NodeName: ptr.To("win-2")}}
	return svc, v6
}

// setNodeAddresses replaces the test node's status addresses.
func (n *testNode) setNodeAddresses(addrs ...v1.NodeAddress) {
	n.t.Helper()
	ctx := context.Background()
	node, err := n.client.CoreV1().Nodes().Get(ctx, n.name, metav1.GetOptions{})
	if err != nil {
		n.t.Fatal(err)
	}
	node.Status.Addresses = addrs
	if _, err := n.client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		n.t.Fatal(err)
	}
}

// hasFrontend reports whether HNS holds a load balancer on vip.
func (n *testNode) hasFrontend(vip string) bool {
	for _, lb := range n.lbs() {
		if lb.Frontend == vip {
			return true
		}
	}
	return false
}

// --bind-address names the node IP of its own family only: kube-proxy's
// detectNodeIPs overrides that family and keeps the Node's address of the
// other, so a dual-stack node with --bind-address=<its IPv4> still serves
// IPv6 Services.
func TestBindAddressLeavesTheOtherFamilyToTheNode(t *testing.T) {
	n := newTestNode(t, "ws2025", "10.244.1.5")
	n.setNodeAddresses(
		v1.NodeAddress{Type: v1.NodeInternalIP, Address: nodeIP},
		v1.NodeAddress{Type: v1.NodeInternalIP, Address: "fd00::1"})
	n.config.NodeIPs = map[intent.IPFamily]netip.Addr{intent.IPv4: netip.MustParseAddr("10.0.0.7")}
	n.start()
	svc, v6 := dualStackService()
	n.apply(svc, slice("web", endpoint{"10.244.1.5", nodeName}), v6)
	n.eventually("IPv4 and IPv6 cluster IP load balancers", func() bool {
		return n.hasFrontend("10.96.0.10") && n.hasFrontend("fd00:10:96::10")
	})
	for _, lb := range n.hns.Snapshot().LoadBalancers {
		want := map[bool]string{false: "10.0.0.7", true: "fd00::1"}[netip.MustParseAddr(lb.FrontendVIPs[0]).Is6()]
		if lb.SourceVIP != want {
			t.Errorf("load balancer on %v has source VIP %q, want %q (--bind-address for IPv4, the Node's for IPv6)", lb.FrontendVIPs, lb.SourceVIP, want)
		}
	}

	// The Node losing its addresses keeps the last known IPv6 one, as
	// without --bind-address.
	n.settle()
	before := n.lbs()
	n.setNodeAddresses()
	n.eventually("a NodeAddressesMissing event", func() bool {
		return drainUntil(n.recorder.Events, ReasonNodeAddressesMissing)
	})
	n.settle()
	if got := n.lbs(); !reflect.DeepEqual(got, before) {
		t.Fatalf("HNS changed after the Node lost its addresses:\n got %+v\nwant %+v", got, before)
	}
}
