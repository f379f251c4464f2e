package proxier

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/internal/klogtest"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
	"github.com/hnsproxy/hnsproxy/sim"
)

// joinNode is what a node joining the cluster shows: its Node object with
// a pod CIDR, and later (Flannel, on every other node) a route to it.
const (
	joinName    = "win-4"
	joinIP      = "10.0.0.4"
	joinPodCIDR = "10.244.4.0/24"
	joinPod     = "10.244.4.10"
)

func joinNodeObject() *v1.Node {
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: joinName},
		Spec:       v1.NodeSpec{PodCIDR: joinPodCIDR, PodCIDRs: []string{joinPodCIDR}},
		Status:     v1.NodeStatus{Addresses: []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: joinIP}}},
	}
}

// addRoute adds the joining node's RemoteSubnetRoute to n's network, as
// Flannel's VXLAN backend does when it sees the node's lease.
func (n *testNode) addRoute() {
	n.t.Helper()
	nw, err := n.hns.GetNetworkByID(context.Background(), n.networkID)
	if err != nil {
		n.t.Fatal(err)
	}
	pols := append(nw.Policies, hnslb.NewNetworkPolicy(hnslb.NetworkPolicyRemoteSubnetRoute,
		hnslb.RemoteSubnetRoutePolicySetting{DestinationPrefix: joinPodCIDR, ProviderAddress: joinIP, IsolationId: 4096}))
	if err := n.hns.SetNetworkPolicies(n.networkID, pols); err != nil {
		n.t.Fatal(err)
	}
}

func overlayCluster(t *testing.T) *simCluster {
	return newSimCluster(t, clusterSpec{profile: sim.ProfileWS2022, mode: desired.Overlay, dsr: true, nodes: threeNodes()})
}

// TestBackendInNoSubnetReadsTheRoutes: the backend trigger. A pod on a node
// whose route appeared after the last read (and whose Node the proxier
// never saw change) gets its node's provider address in the sync of its
// EndpointSlice: its remote endpoint is created once, with the right one.
func TestBackendInNoSubnetReadsTheRoutes(t *testing.T) {
	c := overlayCluster(t)
	c.apply(service("web", "10.96.0.10"), sliceOf("web", "web-1", discoveryv1.AddressTypeIPv4, readyEP(pod1a, "win-1")))
	c.converge()
	n := c.node("win-1")
	n.addRoute()
	n.hns.ResetCounters()

	c.apply(sliceOf("web", "web-1", discoveryv1.AddressTypeIPv4, readyEP(pod1a, "win-1"), readyEP(joinPod, joinName)))
	c.converge()
	if pa := n.remoteEndpointPA(joinPod); pa != joinIP {
		t.Errorf("remote endpoint %s has provider address %s, want %s (its node's)", joinPod, pa, joinIP)
	}
	calls := n.hns.Counters()
	if got := calls.Count(sim.OpCreateEndpoint); got != 1 || calls.Count(sim.OpDeleteEndpoint) != 0 {
		t.Errorf("endpoint writes %v: want the endpoint created once, never replaced", calls.Calls)
	}
	if got := calls.Count(sim.OpGetNetwork); got < 1 {
		t.Errorf("%d network reads, want the backend in no subnet to read the routes", got)
	}
}

// TestJoiningNodeReadsItsRoute: the Node trigger and the provider-address
// change. A Service already has a backend on a node that just joined, whose
// route Flannel adds after the Node appeared: the proxier reads the routes
// again until one covers the node's pod CIDR (no Service changes, no drift
// repair), and the backend's endpoint moves to the node's provider address
// while the load balancer keeps its local backend.
func TestJoiningNodeReadsItsRoute(t *testing.T) {
	c := overlayCluster(t)
	n := c.node("win-1")
	c.converge() // running: the Node below is a change, not part of the initial list
	if _, err := c.client.CoreV1().Nodes().Create(context.Background(), joinNodeObject(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.apply(service("web", "10.96.0.10"), sliceOf("web", "web-1", discoveryv1.AddressTypeIPv4, readyEP(pod1a, "win-1"), readyEP(joinPod, joinName)))
	c.converge()
	if pa := n.remoteEndpointPA(joinPod); pa != ip1 {
		t.Fatalf("before the route: provider address %s, want this node's %s (winkernel's rule)", pa, ip1)
	}
	n.proxier.mu.Lock()
	waiting := len(n.proxier.subnets.unrouted)
	n.proxier.mu.Unlock()
	if waiting != 1 {
		t.Fatalf("%d nodes wait for a route, want the joining one", waiting)
	}

	n.addRoute()
	n.eventually("the endpoint moving to its node's provider address", func() bool { return n.remoteEndpointPA(joinPod) == joinIP })
	n.settle()
	for _, lb := range n.lbs() {
		if lb.Frontend == "10.96.0.10" && !(len(lb.Backends) == 2 && lb.Backends[0] == pod1a && lb.Backends[1] == joinPod) {
			t.Errorf("load balancer backends %v, want %s and %s", lb.Backends, pod1a, joinPod)
		}
	}
	n.proxier.mu.Lock()
	waiting = len(n.proxier.subnets.unrouted)
	n.proxier.mu.Unlock()
	if waiting != 0 {
		t.Errorf("%d nodes still wait for a route once it is read", waiting)
	}
}

// TestSubnetReadsAreRateLimited: each trigger reads at most once per
// subnetReadInterval, on its own budget; a node waits for its route at most
// routeWait; a backend in no subnet asks once, not on every change of its
// Service.
func TestSubnetReadsAreRateLimited(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	reads := 0
	var routes []desired.RemoteSubnet
	factory := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	nodes := factory.Core().V1().Nodes()
	if err := nodes.Informer().GetIndexer().Add(joinNodeObject()); err != nil {
		t.Fatal(err)
	}
	p := &Proxier{clock: clk, opts: Options{
		NodeName:     nodeName,
		ClusterNodes: nodes,
		RemoteSubnets: func(context.Context) ([]desired.RemoteSubnet, error) {
			reads++
			return routes, nil
		},
	}}
	ctx := context.Background()
	public := netip.MustParseAddr("203.0.113.9")
	withPublic := desired.ServiceResult{NoProviderAddress: []netip.Addr{public}}

	p.noteNoProviderAddress(withPublic, desired.ServiceResult{})
	if !p.readSubnetsForTriggers(ctx) || reads != 1 {
		t.Fatalf("a new backend in no subnet: %d reads, want 1", reads)
	}
	p.subnets.fresh = false
	p.noteNoProviderAddress(withPublic, withPublic)
	if p.subnets.backendAsked {
		t.Error("a backend already in no subnet before asks again")
	}
	p.noteNoProviderAddress(withPublic, desired.ServiceResult{})
	if p.readSubnetsForTriggers(ctx) || reads != 1 {
		t.Errorf("a second backend trigger within the interval read (%d reads)", reads)
	}
	if next, ok := p.nextSubnetRead(); !ok || !next.Equal(clk.Now().Add(subnetReadInterval)) {
		t.Errorf("next read at %v (%t), want one interval on", next, ok)
	}
	// The Node trigger has its own budget: it reads now, and that read
	// answers the waiting backend too.
	p.noteUnrouted([]string{joinName})
	if !p.readSubnetsForTriggers(ctx) || reads != 2 || p.subnets.backendAsked {
		t.Errorf("the node trigger beside a waiting backend trigger: %d reads, want 2 answering both", reads)
	}
	if p.readSubnetsForTriggers(ctx) || reads != 2 {
		t.Errorf("the node trigger read twice within the interval (%d reads)", reads)
	}
	clk.Step(subnetReadInterval)
	if !p.readSubnetsForTriggers(ctx) || reads != 3 {
		t.Errorf("one interval on: %d reads, want the waiting node's third", reads)
	}
	if len(p.subnets.unrouted) != 1 {
		t.Fatal("the node without a route stopped waiting")
	}
	// Unrouted for routeWait: the node stops asking.
	clk.Step(routeWait)
	p.readSubnetsForTriggers(ctx)
	if len(p.subnets.unrouted) != 0 {
		t.Error("the node still waits for a route after routeWait")
	}
	if p.readSubnetsForTriggers(ctx) {
		t.Error("a read with no trigger waiting")
	}
	if _, ok := p.nextSubnetRead(); ok {
		t.Error("a next read scheduled with no trigger waiting")
	}
	// A route that covers the node ends its wait at the first read.
	routes = []desired.RemoteSubnet{{Prefix: netip.MustParsePrefix(joinPodCIDR), ProviderAddress: netip.MustParseAddr(joinIP)}}
	clk.Step(subnetReadInterval)
	p.noteUnrouted([]string{joinName})
	if !p.readSubnetsForTriggers(ctx) || len(p.subnets.unrouted) != 0 {
		t.Error("the node still waits once a route covers its pod CIDR")
	}
}

// A Node's pod CIDR is read as kube-proxy reads CIDRs (ParseCIDRSloppy,
// through kubeip): one stored with leading zeros waits for its route like
// any other, and Flannel's route for the same subnet covers it; a zoned
// one is no CIDR and waits for nothing.
func TestRoutedReadsPodCIDRsAsKubeProxy(t *testing.T) {
	routes := desired.NewRemoteSubnetIndex([]desired.RemoteSubnet{
		{Prefix: netip.MustParsePrefix("10.244.4.0/24"), ProviderAddress: netip.MustParseAddr(joinIP)},
	})
	for _, tc := range []struct {
		podCIDR    string
		routes     *desired.RemoteSubnetIndex
		wantRouted bool
	}{
		{"010.244.004.000/24", nil, false},
		{"010.244.004.000/24", routes, true},
		{"10.244.5.0/24", routes, false},
		{"fd00:244::/64", nil, true}, // overlay carries IPv4 only
		{"fe80::%eth0/64", nil, true},
	} {
		p := &Proxier{}
		p.cfg.RemoteSubnets = tc.routes
		node := &v1.Node{Spec: v1.NodeSpec{PodCIDRs: []string{tc.podCIDR}}}
		if got := p.routed(node); got != tc.wantRouted {
			t.Errorf("pod CIDR %s, %d routes: routed = %v, want %v", tc.podCIDR, tc.routes.Len(), got, tc.wantRouted)
		}
	}
}

// A Node that lists addresses is routed only by a route naming one of
// them: a route still naming its old address (or the previous holder of
// its pod CIDR) has not moved yet. Addresses read as kube-proxy reads them.
func TestRoutedWantsTheNodesAddress(t *testing.T) {
	p := &Proxier{}
	p.cfg.RemoteSubnets = desired.NewRemoteSubnetIndex([]desired.RemoteSubnet{
		{Prefix: netip.MustParsePrefix(joinPodCIDR), ProviderAddress: netip.MustParseAddr(joinIP)},
	})
	for _, tc := range []struct {
		addrs      []v1.NodeAddress
		wantRouted bool
	}{
		{nil, true}, // no address to compare: a covering route is its route
		{[]v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "fd00::4"}, {Type: v1.NodeHostName, Address: "win-4"}}, true}, // none of the route's family
		{[]v1.NodeAddress{{Type: v1.NodeInternalIP, Address: joinIP}}, true},
		{[]v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.44"}}, false},
		{[]v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.44"}, {Type: v1.NodeExternalIP, Address: joinIP}}, true},
		{[]v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "010.0.0.004"}}, true},
	} {
		node := &v1.Node{Spec: v1.NodeSpec{PodCIDRs: []string{joinPodCIDR}}, Status: v1.NodeStatus{Addresses: tc.addrs}}
		if got := p.routed(node); got != tc.wantRouted {
			t.Errorf("addresses %v, route to %s: routed = %v, want %v", tc.addrs, joinIP, got, tc.wantRouted)
		}
	}
	trimmed, _ := TrimToRouting(&v1.Node{Status: v1.NodeStatus{Addresses: []v1.NodeAddress{
		{Type: v1.NodeHostName, Address: "win-4"}, {Type: v1.NodeInternalIP, Address: joinIP}, {Type: v1.NodeExternalIP, Address: "203.0.113.4"},
	}}})
	if got := trimmed.(*v1.Node).Status.Addresses; len(got) != 2 || got[0].Address != joinIP || got[1].Address != "203.0.113.4" {
		t.Errorf("trimmed Node keeps addresses %v, want its internal and external IPs", got)
	}
}

// setRoute points n's route for prefix at pa, as Flannel does when a
// node's lease comes back with another public IP: the route with the same
// prefix is removed and the new one added. An empty pa only removes it, as
// Flannel does for a lease without a VTEP MAC (a Windows node's flanneld
// starting announces one first).
func (n *testNode) setRoute(prefix, pa string) {
	n.t.Helper()
	nw, err := n.hns.GetNetworkByID(context.Background(), n.networkID)
	if err != nil {
		n.t.Fatal(err)
	}
	var pols []hnslb.NetworkPolicy
	route := func(prefix, pa string) {
		pols = append(pols, hnslb.NewNetworkPolicy(hnslb.NetworkPolicyRemoteSubnetRoute,
			hnslb.RemoteSubnetRoutePolicySetting{DestinationPrefix: prefix, ProviderAddress: pa, IsolationId: 4096}))
	}
	for _, r := range desired.RemoteSubnetsOf(nw) {
		if r.Prefix.String() != prefix {
			route(r.Prefix.String(), r.ProviderAddress.String())
		}
	}
	if pa != "" {
		route(prefix, pa)
	}
	if err := n.hns.SetNetworkPolicies(n.networkID, pols); err != nil {
		n.t.Fatal(err)
	}
}

// TestReaddressedNodeMovesItsEndpoints: a node keeps its Node object and
// pod CIDR but comes back with another IP (a reboot under DHCP, a VM
// replaced under the same name). Its kubelet reports the new address, then
// Flannel moves the node's route to it. No pod CIDR changes and no backend
// falls outside every subnet, yet the proxier reads the routes again until
// the node's route names one of its addresses, and the remote endpoint of
// the node's pod moves to the new provider address (no drift repair).
func TestReaddressedNodeMovesItsEndpoints(t *testing.T) {
	const newIP2 = "10.0.0.22"
	c := overlayCluster(t)
	c.apply(service("web", "10.96.0.10"), sliceOf("web", "web-1", discoveryv1.AddressTypeIPv4, readyEP(pod1a, "win-1"), readyEP(pod2a, "win-2")))
	c.converge()
	n := c.node("win-1")
	if pa := n.remoteEndpointPA(pod2a); pa != ip2 {
		t.Fatalf("before: provider address %s, want win-2's %s", pa, ip2)
	}

	c.node("win-2").setNodeAddresses(v1.NodeAddress{Type: v1.NodeInternalIP, Address: newIP2})
	n.eventually("win-2 waiting for its route to move", func() bool {
		n.proxier.mu.Lock()
		defer n.proxier.mu.Unlock()
		_, waiting := n.proxier.subnets.unrouted["win-2"]
		return waiting
	})
	n.setRoute("10.244.2.0/24", newIP2)
	n.eventually("the endpoint moving to win-2's new provider address", func() bool { return n.remoteEndpointPA(pod2a) == newIP2 })
	n.settle()
	found := false
	for _, lb := range n.lbs() {
		if lb.Frontend == "10.96.0.10" {
			found = true
			if !slices.Equal(lb.Backends, []string{pod1a, pod2a}) {
				t.Errorf("load balancer backends %v, want %s and %s", lb.Backends, pod1a, pod2a)
			}
		}
	}
	if !found {
		t.Error("no load balancer on 10.96.0.10")
	}
}

// TestVanishedRouteIsHeldWhileItsNodeStays: a Windows node's flanneld
// starting first announces a lease without a VTEP MAC, on which Flannel on
// every other node removes the node's route and adds none, then the lease
// with the MAC, on which it adds the route again. A read in between (here a
// drift repair) sees the route gone while the Node is still there: the
// route is held, so the node's pods keep their remote endpoints (no
// endpoint deleted, none moved to this node's address), and read again
// until it is back.
func TestVanishedRouteIsHeldWhileItsNodeStays(t *testing.T) {
	c := overlayCluster(t)
	c.apply(service("web", "10.96.0.10"), sliceOf("web", "web-1", discoveryv1.AddressTypeIPv4, readyEP(pod1a, "win-1"), readyEP(pod2a, "win-2")))
	c.converge()
	n := c.node("win-1")
	n.setRoute("10.244.2.0/24", "")
	n.hns.ResetCounters()
	n.repairNow()
	n.eventually("a read while the route is gone", func() bool { return n.hns.Counters().Count(sim.OpGetNetwork) >= 1 })
	n.settle()
	if pa := n.remoteEndpointPA(pod2a); pa != ip2 {
		t.Errorf("while the route is gone: provider address %s, want win-2's %s still", pa, ip2)
	}
	n.eventually("the held route read again", func() bool { return n.hns.Counters().Count(sim.OpGetNetwork) >= 3 })
	n.setRoute("10.244.2.0/24", ip2)
	n.eventually("the held route read back", func() bool {
		n.proxier.mu.Lock()
		defer n.proxier.mu.Unlock()
		return len(n.proxier.subnets.held) == 0
	})
	n.settle()
	if pa := n.remoteEndpointPA(pod2a); pa != ip2 {
		t.Errorf("after: provider address %s, want win-2's %s", pa, ip2)
	}
	if deletes := n.hns.Counters().Count(sim.OpDeleteEndpoint); deletes != 0 {
		t.Errorf("%d endpoint deletes, want none: the route was held", deletes)
	}
}

// A vanished route is held only while another Node has its pod CIDR, and
// for at most routeWait; while held, it asks for a read every interval.
func TestVanishedRouteIsHeldBoundedly(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	factory := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	nodes := factory.Core().V1().Nodes()
	if err := nodes.Informer().GetIndexer().Add(joinNodeObject()); err != nil {
		t.Fatal(err)
	}
	joinRoute := desired.RemoteSubnet{Prefix: netip.MustParsePrefix(joinPodCIDR), ProviderAddress: netip.MustParseAddr(joinIP)}
	other := desired.RemoteSubnet{Prefix: netip.MustParsePrefix("10.244.9.0/24"), ProviderAddress: netip.MustParseAddr("10.0.0.9")}
	routes := []desired.RemoteSubnet{joinRoute, other}
	p := &Proxier{clock: clk, opts: Options{
		NodeName:      nodeName,
		ClusterNodes:  nodes,
		RemoteSubnets: func(context.Context) ([]desired.RemoteSubnet, error) { return routes, nil },
	}}
	ctx := context.Background()
	p.readRemoteSubnets(ctx)
	routes = nil // both vanish; only the join node's Node remains
	p.readRemoteSubnets(ctx)
	if got := p.cfg.RemoteSubnets.Routes(); len(got) != 1 || got[0] != joinRoute {
		t.Fatalf("after the routes vanished: %v, want only the route of the Node that remains", got)
	}
	if !p.readSubnetsForTriggers(ctx) {
		t.Error("a held route asks for no read")
	}
	if next, ok := p.nextSubnetRead(); !ok || !next.Equal(clk.Now().Add(subnetReadInterval)) {
		t.Errorf("a held route: next read at %v (%t), want one interval on", next, ok)
	}
	if p.routed(joinNodeObject()) {
		t.Error("a node whose route is only held counts as routed")
	}
	clk.Step(routeWait)
	p.readRemoteSubnets(ctx)
	if n := p.cfg.RemoteSubnets.Len(); n != 0 || len(p.subnets.held) != 0 {
		t.Errorf("after routeWait: %d routes, %d held, want none", n, len(p.subnets.held))
	}
	if _, ok := p.nextSubnetRead(); ok {
		t.Error("a read scheduled with nothing held")
	}
	// Back, then gone with its Node: not held.
	routes = []desired.RemoteSubnet{joinRoute}
	p.readRemoteSubnets(ctx)
	if err := nodes.Informer().GetIndexer().Delete(joinNodeObject()); err != nil {
		t.Fatal(err)
	}
	routes = nil
	p.readRemoteSubnets(ctx)
	if n := p.cfg.RemoteSubnets.Len(); n != 0 {
		t.Errorf("the route of a deleted Node: %d routes, want it gone", n)
	}
}

// TestStartBeforeARouteReadsUntilItCovers: hnsproxy starts as soon as its
// overlay network is usable (it waits for the provider address), which on
// a node that just joined, or after Flannel made the network again, is
// before Flannel has added the routes of the Nodes it learns from their
// leases. The start's read then misses another Node's route: that Node,
// listed at start, waits for its route as a joining one does, so its pods'
// remote endpoints get its provider address once the route is there, not
// at the next drift repair, which this test never runs.
func TestStartBeforeARouteReadsUntilItCovers(t *testing.T) {
	c := overlayCluster(t)
	c.apply(service("web", "10.96.0.10"), sliceOf("web", "web-1", discoveryv1.AddressTypeIPv4, readyEP(pod1a, "win-1"), readyEP(pod3a, "win-3")))
	c.converge()
	n := c.node("win-1")
	n.stop()
	n.setRoute("10.244.3.0/24", "")
	n.start()
	c.converge()
	if pa := n.remoteEndpointPA(pod3a); pa != ip1 {
		t.Fatalf("before the route: provider address %s, want this node's %s (winkernel's rule)", pa, ip1)
	}
	n.setRoute("10.244.3.0/24", ip3)
	n.eventually("the endpoint moving to its node's provider address", func() bool { return n.remoteEndpointPA(pod3a) == ip3 })
}

// A CNI whose routes never cover the Nodes' pod CIDRs (its own IPAM blocks)
// leaves every Node waiting at start: when they stop waiting, one line says
// so at the default verbosity, not one per Node of a 5,000-node cluster.
func TestNodesLeftUnroutedAreLoggedInOneLine(t *testing.T) {
	ctx, log := klogtest.Context(context.Background(), 0)
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	factory := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	nodes := factory.Core().V1().Nodes()
	var names []string
	for i := range 50 {
		name := fmt.Sprintf("win-%d", 10+i)
		names = append(names, name)
		cidr := fmt.Sprintf("10.245.%d.0/24", i)
		if err := nodes.Informer().GetIndexer().Add(&v1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       v1.NodeSpec{PodCIDR: cidr, PodCIDRs: []string{cidr}},
			Status:     v1.NodeStatus{Addresses: []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: fmt.Sprintf("10.1.0.%d", 10+i)}}},
		}); err != nil {
			t.Fatal(err)
		}
	}
	p := &Proxier{clock: clk, opts: Options{
		NodeName:     nodeName,
		ClusterNodes: nodes,
		RemoteSubnets: func(context.Context) ([]desired.RemoteSubnet, error) {
			return []desired.RemoteSubnet{{Prefix: netip.MustParsePrefix("10.200.0.0/26"), ProviderAddress: netip.MustParseAddr("10.1.0.10")}}, nil
		},
	}}
	p.noteUnrouted(names)
	p.readRemoteSubnets(ctx)
	if len(p.subnets.unrouted) != len(names) {
		t.Fatalf("%d Nodes wait for their routes, want all %d", len(p.subnets.unrouted), len(names))
	}
	clk.Step(routeWait)
	p.readRemoteSubnets(ctx)
	if len(p.subnets.unrouted) != 0 {
		t.Fatalf("%d Nodes still wait after routeWait", len(p.subnets.unrouted))
	}
	if n := log.Count("No remote subnet route"); n != 1 {
		t.Errorf("the Nodes left unrouted were logged in %d lines at -v=0, want 1:\n%s", n, log.String())
	}
	if !strings.Contains(log.String(), "nodes=50") {
		t.Errorf("the line does not count the Nodes:\n%s", log.String())
	}
}
