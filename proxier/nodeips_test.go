package proxier

import (
	"context"
	"fmt"
	"net/netip"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
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

// TestBindAddressOfEveryFamilyKeepsNothingWhenTheNodeLosesItsAddresses: with
// --bind-address naming the node IP of the one family it serves, a Node
// that loses its addresses takes no node IP away, so nothing is kept and
// no NodeAddressesMissing Warning is raised on the Node.
func TestBindAddressOfEveryFamilyKeepsNothingWhenTheNodeLosesItsAddresses(t *testing.T) {
	n := newTestNode(t, "ws2022", "10.244.1.5")
	n.setNodeAddresses(v1.NodeAddress{Type: v1.NodeInternalIP, Address: nodeIP})
	n.config.NodeIPs = map[intent.IPFamily]netip.Addr{intent.IPv4: netip.MustParseAddr("10.0.0.7")}
	n.start()
	n.apply(service("web", "10.96.0.10"), slice("web", endpoint{"10.244.1.5", nodeName}))
	n.eventually("the load balancer", func() bool { return n.hasFrontend("10.96.0.10") })
	n.setNodeAddresses()
	n.eventually("the proxier's Node without addresses", func() bool {
		node, err := n.proxier.nodes.Get(nodeName)
		return err == nil && len(node.Status.Addresses) == 0
	})
	// A sync after the Node lost its addresses.
	n.apply(service("api", "10.96.0.11"), slice("api", endpoint{"10.244.1.5", nodeName}))
	n.eventually("the next Service's load balancer", func() bool { return n.hasFrontend("10.96.0.11") })
	n.settle()
	if drainUntil(n.recorder.Events, ReasonNodeAddressesMissing) {
		t.Error("NodeAddressesMissing raised though --bind-address names every node IP")
	}
}

// A dual-stack l2bridge node whose Node lists only its IPv4 address (kubelet
// given one --node-ip) serves IPv6 cluster IPs as winkernel's dual-stack
// mode does: load balancers without a source VIP. A restart, with or
// without its state file, on an HNS that echoes no IPv6 flag takes them
// over without a write.
func TestIPv6ServedWithoutANodeIPv6Address(t *testing.T) {
	for _, lost := range []bool{false, true} {
		n := newTestNode(t, "ws2025", "10.244.1.5")
		n.hns.SetEcho(sim.Echo{DropUnconfirmedFlags: true})
		n.start()
		svc, v6 := dualStackService()
		svc.Spec.Type = v1.ServiceTypeNodePort
		svc.Spec.Ports[0].NodePort = 30080
		n.apply(svc, slice("web", endpoint{"10.244.1.5", nodeName}), v6)
		n.eventually("the IPv6 cluster IP load balancer", func() bool { return n.hasFrontend("fd00:10:96::10") })
		n.settle()
		before := n.lbs()
		if len(before) != 3 {
			t.Fatalf("want IPv4 node port, IPv4 and IPv6 cluster IPs; HNS has %+v", before)
		}
		for _, lb := range n.hns.Snapshot().LoadBalancers {
			if slices.Equal(lb.FrontendVIPs, []string{"fd00:10:96::10"}) && lb.SourceVIP != "" {
				t.Errorf("IPv6 load balancer has source VIP %q, want none", lb.SourceVIP)
			}
		}
		n.stop()
		if lost {
			n.stateFile = filepath.Join(t.TempDir(), "lost.json")
		}
		n.hns.ResetCounters()
		n.start()
		n.eventually("the first sync", func() bool { return n.proxier.lastSync.Load() != nil })
		n.settle()
		if got := n.lbs(); !reflect.DeepEqual(got, before) || n.hns.Counters().Writes() != 0 {
			t.Errorf("restart (state file lost: %v) rewrote HNS: %+v (writes %d)", lost, got, n.hns.Counters().Writes())
		}
	}
}

// A Node that lists its address only as ExternalIP (no InternalIP) still
// has a node IP, and a family without an InternalIP takes the Node's
// ExternalIP of that family, as kube-proxy's GetNodeHostIPs does: the
// proxy neither waits for an InternalIP nor drops that family's node IP.
func TestNodeIPsFallBackToExternalIPs(t *testing.T) {
	n := newTestNode(t, "ws2025", "10.244.1.5")
	n.setNodeAddresses(v1.NodeAddress{Type: v1.NodeExternalIP, Address: "10.0.0.9"})
	n.start()
	svc, v6 := dualStackService()
	n.apply(svc, slice("web", endpoint{"10.244.1.5", nodeName}), v6)
	sourceVIPs := func(want4, want6 string) bool {
		for _, lb := range n.hns.Snapshot().LoadBalancers {
			want := map[bool]string{false: want4, true: want6}[netip.MustParseAddr(lb.FrontendVIPs[0]).Is6()]
			if lb.SourceVIP != want {
				return false
			}
		}
		return n.hasFrontend("10.96.0.10") && n.hasFrontend("fd00:10:96::10")
	}
	n.eventually("source VIPs from the ExternalIP of a Node without InternalIP", func() bool { return sourceVIPs("10.0.0.9", "") })

	// An InternalIP goes before an ExternalIP of its family, listed first or not.
	n.setNodeAddresses(
		v1.NodeAddress{Type: v1.NodeExternalIP, Address: "198.51.100.1"},
		v1.NodeAddress{Type: v1.NodeExternalIP, Address: "fd00::9"},
		v1.NodeAddress{Type: v1.NodeInternalIP, Address: "10.0.0.7"})
	n.eventually("the IPv4 InternalIP and the IPv6 ExternalIP", func() bool { return sourceVIPs("10.0.0.7", "fd00::9") })
	if drainUntil(n.recorder.Events, ReasonNodeAddressesMissing) {
		t.Error("NodeAddressesMissing raised for a Node that lists addresses")
	}
}

// A Node's addresses are read as kube-proxy's GetNodeHostIPs reads them
// (ParseIPSloppy): "010.0.0.11" is the node IP 10.0.0.11, and a zoned
// "fe80::11%eth0" is skipped for the next address of its family. What is
// skipped is logged once as a warning, not at every sync, and again only
// when the skipped addresses change.
func TestNodeAddressesReadAsKubeProxyReadsThem(t *testing.T) {
	n := newTestNode(t, "ws2025", "10.244.1.5")
	log := n.loggingAt(0)
	n.setNodeAddresses(
		v1.NodeAddress{Type: v1.NodeInternalIP, Address: "010.0.0.011"},
		v1.NodeAddress{Type: v1.NodeInternalIP, Address: "fe80::11%eth0"},
		v1.NodeAddress{Type: v1.NodeInternalIP, Address: "fd00::11"})
	n.start()
	svc, v6 := dualStackService()
	n.apply(svc, slice("web", endpoint{"10.244.1.5", nodeName}), v6)
	n.eventually("source VIPs 10.0.0.11 and fd00::11", func() bool {
		vips := map[string]bool{}
		for _, lb := range n.hns.Snapshot().LoadBalancers {
			vips[lb.SourceVIP] = true
		}
		return len(vips) == 2 && vips["10.0.0.11"] && vips["fd00::11"]
	})
	for i := range 3 {
		n.apply(service("other", fmt.Sprintf("10.96.0.%d", 20+i)))
		n.settle()
	}
	const warning = "Node addresses skipped"
	if got := log.Count(warning); got != 1 || log.Count(`fe80::11%eth0`) != 1 {
		t.Errorf("%d warnings for the zoned address, want 1:\n%s", got, log)
	}
	n.setNodeAddresses(
		v1.NodeAddress{Type: v1.NodeInternalIP, Address: "10.0.0.11"},
		v1.NodeAddress{Type: v1.NodeInternalIP, Address: "fd00::11%eth0"},
		v1.NodeAddress{Type: v1.NodeInternalIP, Address: "fd00::12"})
	n.eventually("source VIP fd00::12", func() bool {
		for _, lb := range n.hns.Snapshot().LoadBalancers {
			if lb.SourceVIP == "fd00::12" {
				return true
			}
		}
		return false
	})
	if got := log.Count(warning); got != 2 || log.Count(`fd00::11%eth0`) != 1 {
		t.Errorf("%d warnings, want a second for the new skipped address:\n%s", got, log)
	}
}
