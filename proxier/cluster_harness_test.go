package proxier

import (
	"context"
	"fmt"
	"net/netip"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/vfp"
)

// A simulated cluster: several Windows nodes, each with its own HNS
// simulator, reconciler and real proxier, all watching one fake clientset.
// Pods are local endpoints the test creates in each node's simulator, as the
// CNI would; the proxiers program everything else. Packets are then traced
// through the nodes' HNS snapshots with the VFP model.

// In-cluster ranges the pods' OutBoundNAT policies exempt, as the CNI
// configures them (cluster CIDR and service CIDR per family).
var natExceptions = []string{"10.244.0.0/16", "10.96.0.0/12", "fd00:10:244::/56", "fd00:10:96::/108"}

// clusterNetwork is the HNS network name on every node.
const clusterNetwork = "cbr0"

// nodeSpec is one node: its addresses (one per family, IPv4 first), pod
// subnets (same order) and pods. A dual-stack pod is "v4,v6".
type nodeSpec struct {
	name     string
	ips      []string
	podCIDRs []string
	pods     []string
}

type clusterSpec struct {
	profile string
	mode    desired.NetworkMode
	dsr     bool // --enable-dsr
	nodes   []nodeSpec
}

// simCluster is the running cluster.
type simCluster struct {
	t      *testing.T
	spec   clusterSpec
	client *fake.Clientset
	nodes  []*testNode
	// applied are the objects the test last wrote, by kind/namespace/name,
	// so convergence can wait until every informer has seen them.
	applied map[string]any
}

// newSimCluster creates the nodes' HNS state and Node objects and starts a
// proxier per node.
func newSimCluster(t *testing.T, spec clusterSpec) *simCluster {
	t.Helper()
	prof, err := sim.ProfileByName(spec.profile)
	if err != nil {
		t.Fatal(err)
	}
	c := &simCluster{t: t, spec: spec, client: fake.NewClientset(), applied: map[string]any{}}
	ctx := context.Background()
	for i, ns := range spec.nodes {
		node := &v1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: ns.name, Labels: map[string]string{v1.LabelTopologyZone: "zone-a"}},
			Spec:       v1.NodeSpec{PodCIDR: ns.podCIDRs[0], PodCIDRs: ns.podCIDRs},
		}
		for _, ip := range ns.ips {
			node.Status.Addresses = append(node.Status.Addresses, v1.NodeAddress{Type: v1.NodeInternalIP, Address: ip})
		}
		if _, err := c.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		hns := sim.New(sim.Options{Profile: prof, Seed: int64(i + 1)})
		nw, err := hns.CreateNetwork(ctx, c.network(ns))
		if err != nil {
			t.Fatal(err)
		}
		for _, pod := range ns.pods {
			if _, err := hns.CreateEndpoint(ctx, nw.ID, podEndpoint(pod)); err != nil {
				t.Fatal(err)
			}
		}
		n := &testNode{
			t: t, name: ns.name, client: c.client, hns: hns, networkID: nw.ID,
			stateFile: filepath.Join(t.TempDir(), "state.json"),
			config:    desired.Config{Mode: spec.mode, EnableDSR: spec.dsr, NetworkSubnets: desired.NetworkSubnetsOf(nw)},
		}
		if spec.mode == desired.Overlay {
			n.config.SourceVIP = map[intent.IPFamily]netip.Addr{intent.IPv4: sourceVIP(ns)}
			n.config.HostMAC = fmt.Sprintf("00-15-5d-00-00-%02x", i+1)
			n.remoteSubnets = networkRemoteSubnets(hns, nw.ID)
		}
		c.nodes = append(c.nodes, n)
	}
	for _, n := range c.nodes {
		n.start()
	}
	return c
}

// network is the node's pod network as the CNI creates it; on overlay it
// routes every other node's IPv4 pod subnet to that node (VXLAN, VNI 4096).
func (c *simCluster) network(ns nodeSpec) *hnslb.Network {
	typ := hnslb.NetworkTypeL2Bridge
	if c.spec.mode == desired.Overlay {
		typ = hnslb.NetworkTypeOverlay
	}
	nw := &hnslb.Network{Name: clusterNetwork, Type: typ}
	for _, cidr := range ns.podCIDRs {
		nw.Ipams = append(nw.Ipams, hnslb.Ipam{Type: "Static", Subnets: []hnslb.Subnet{{IpAddressPrefix: cidr}}})
	}
	if typ != hnslb.NetworkTypeOverlay {
		return nw
	}
	for _, other := range c.spec.nodes {
		if other.name == ns.name {
			continue
		}
		nw.Policies = append(nw.Policies, hnslb.NewNetworkPolicy(hnslb.NetworkPolicyRemoteSubnetRoute,
			hnslb.RemoteSubnetRoutePolicySetting{DestinationPrefix: other.podCIDRs[0], ProviderAddress: other.ips[0], IsolationId: 4096}))
	}
	return nw
}

// sourceVIP is the overlay source VIP of a node: .2 of its IPv4 pod subnet.
func sourceVIP(ns nodeSpec) netip.Addr {
	return netip.MustParsePrefix(ns.podCIDRs[0]).Addr().Next().Next()
}

// networkRemoteSubnets reads the RemoteSubnetRoute policies of the node's
// network, as the daemon does on overlay.
func networkRemoteSubnets(hns *sim.HNS, networkID string) func(context.Context) ([]desired.RemoteSubnet, error) {
	return func(ctx context.Context) ([]desired.RemoteSubnet, error) {
		nw, err := hns.GetNetworkByID(ctx, networkID)
		if err != nil {
			return nil, err
		}
		return desired.RemoteSubnetsOf(nw), nil
	}
}

// podEndpoint is a pod's local endpoint as the CNI makes it: its
// addresses and an OutBoundNAT policy exempting in-cluster ranges.
func podEndpoint(pod string) *hnslb.Endpoint {
	e := &hnslb.Endpoint{
		Name: "pod-" + pod,
		Policies: []hnslb.EndpointPolicy{hnslb.NewEndpointPolicy(hnslb.EndpointPolicyOutBoundNAT,
			hnslb.OutboundNatPolicySetting{Exceptions: natExceptions})},
	}
	for _, ip := range strings.Split(pod, ",") {
		bits := uint8(24)
		if strings.Contains(ip, ":") {
			bits = 64
		}
		e.IpConfigurations = append(e.IpConfigurations, hnslb.IPConfig{IpAddress: ip, PrefixLength: bits})
	}
	return e
}

// apply writes objects through the shared clientset and remembers them.
func (c *simCluster) apply(objs ...any) {
	c.t.Helper()
	for _, o := range objs {
		out, err := upsert(c.client, o)
		if err != nil {
			c.t.Fatal(err)
		}
		m := out.(metav1.Object)
		c.applied[fmt.Sprintf("%T/%s/%s", out, m.GetNamespace(), m.GetName())] = out
	}
}

// converge waits until every node's informers hold what the test applied
// and its proxier and HNS are quiet.
func (c *simCluster) converge() {
	c.t.Helper()
	for _, n := range c.nodes {
		n.eventually("informers seeing the applied objects", func() bool { return n.sees(c.applied) })
		n.settle()
	}
}

// sees reports whether the node's informer caches hold exactly these objects.
func (n *testNode) sees(objs map[string]any) bool {
	for _, o := range objs {
		var got, want any
		var err error
		switch o := o.(type) {
		case *v1.Service:
			got, err = n.proxier.services.Services(o.Namespace).Get(o.Name)
			want, _ = TrimForCache(o.DeepCopy())
		case *discoveryv1.EndpointSlice:
			var exists bool
			got, exists, err = n.proxier.slices.GetByKey(o.Namespace + "/" + o.Name)
			if !exists {
				return false
			}
			want, _ = TrimForCache(o.DeepCopy())
		}
		if err != nil || !reflect.DeepEqual(got, want) {
			return false
		}
	}
	return true
}

// vfp builds the packet model from every node's current HNS state.
func (c *simCluster) vfp() *vfp.Cluster {
	c.t.Helper()
	var nodes []vfp.Node
	for i, n := range c.nodes {
		vn := vfp.Node{Name: n.name, HNS: n.hns.Snapshot(), NetworkName: clusterNetwork}
		for _, ip := range c.spec.nodes[i].ips {
			vn.IPs = append(vn.IPs, netip.MustParseAddr(ip))
		}
		nodes = append(nodes, vn)
	}
	vc, err := vfp.NewCluster(nodes...)
	if err != nil {
		c.t.Fatalf("vfp.NewCluster: %v", err)
	}
	return vc
}

func (c *simCluster) node(name string) *testNode {
	for _, n := range c.nodes {
		if n.name == name {
			return n
		}
	}
	c.t.Fatalf("no node %q", name)
	return nil
}

// Builders for EndpointSlices with explicit conditions.

func readyEP(ip, node string) discoveryv1.Endpoint {
	return discoveryv1.Endpoint{
		Addresses: []string{ip}, NodeName: ptr.To(node),
		Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true), Serving: ptr.To(true), Terminating: ptr.To(false)},
	}
}

func terminatingEP(ip, node string, serving bool) discoveryv1.Endpoint {
	return discoveryv1.Endpoint{
		Addresses: []string{ip}, NodeName: ptr.To(node),
		Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(false), Serving: ptr.To(serving), Terminating: ptr.To(true)},
	}
}

// sliceOf is an EndpointSlice of svc with port http 8080/TCP.
func sliceOf(svc, name string, at discoveryv1.AddressType, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "default", Name: name,
			Labels: map[string]string{discoveryv1.LabelServiceName: svc},
		},
		AddressType: at,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080), Protocol: ptr.To(v1.ProtocolTCP)}},
		Endpoints:   eps,
	}
}

// repairNow makes the next sync a drift repair, as the repair timer would.
func (n *testNode) repairNow() {
	n.proxier.mu.Lock()
	defer n.proxier.mu.Unlock()
	n.askRepairLocked()
}

// askRepairLocked makes the next sync a drift repair; the caller holds the
// proxier's lock.
func (n *testNode) askRepairLocked() {
	n.proxier.lastRepair = time.Time{}
	n.proxier.queue.Add(syncKey)
}

// repaired asks for a drift repair once no listing runs and waits until it
// has ended well. repairNow then settle can pass before the repair began,
// in the moment between the ask and the sync that starts it (seen on a
// loaded machine: FuzzProxierHistory's kept delete, found only by a
// restart), and one asked for while a listing runs is dropped when that
// listing ends (it sets lastRepair).
func (n *testNode) repaired() {
	n.t.Helper()
	asked := false
	n.eventually("a drift repair asked for and ended", func() bool {
		n.proxier.mu.Lock()
		defer n.proxier.mu.Unlock()
		switch {
		case !n.proxier.initialized || n.proxier.repairing:
			return false
		case !asked:
			n.askRepairLocked()
			asked = true
			return false
		}
		return !n.proxier.lastRepair.IsZero()
	})
}

// remoteEndpointPA is the provider address of the remote endpoint for ip.
func (n *testNode) remoteEndpointPA(ip string) string {
	for _, e := range n.hns.Snapshot().Endpoints {
		if e.IsRemote() && e.IP() == ip {
			return e.ProviderAddress()
		}
	}
	return "(no remote endpoint)"
}

// udpSlice is an EndpointSlice of svc with port http 5353/UDP.
func udpSlice(svc, name string, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	s := sliceOf(svc, name, discoveryv1.AddressTypeIPv4, eps...)
	s.Ports = []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](5353), Protocol: ptr.To(v1.ProtocolUDP)}}
	return s
}
