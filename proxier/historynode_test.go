package proxier

import (
	"context"
	"net/netip"
	"path/filepath"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
	"github.com/hnsproxy/hnsproxy/sim"
)

// The node a random history runs on, and the fresh one it is compared
// with (proxier/history_test.go): its Node objects, HNS network and pods.
// historyNodes are the Node objects a history starts with.
func historyNodes(spec phSpec) []runtime.Object {
	own := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: nodeName, Labels: map[string]string{v1.LabelTopologyZone: "zone-a"}},
		Spec:       v1.NodeSpec{PodCIDR: podCIDR, PodCIDRs: []string{podCIDR}},
		Status:     v1.NodeStatus{Addresses: []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: nodeIP}}},
	}
	if spec.dual {
		own.Spec.PodCIDRs = append(own.Spec.PodCIDRs, phPodCIDR6)
		own.Status.Addresses = append(own.Status.Addresses, v1.NodeAddress{Type: v1.NodeInternalIP, Address: phNodeIP6})
	}
	out := []runtime.Object{own}
	for _, o := range phOthers {
		out = append(out, otherNode(o))
	}
	return out
}

func otherNode(o [3]string) *v1.Node {
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: o[0], Labels: map[string]string{v1.LabelTopologyZone: "zone-b"}},
		Spec:       v1.NodeSpec{PodCIDR: o[2], PodCIDRs: []string{o[2]}},
		Status:     v1.NodeStatus{Addresses: []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: o[1]}}},
	}
}

// newHistoryNode makes this node's HNS (its network as the CNI makes it,
// with routes on overlay: those given, else one per other node as Flannel
// adds them) and pods, and a testNode on client, not started.
func newHistoryNode(t *testing.T, spec phSpec, client *fake.Clientset, seed int64, routes []hnslb.NetworkPolicy, pods []string) *testNode {
	t.Helper()
	prof, err := sim.ProfileByName(spec.profile)
	if err != nil {
		t.Fatal(err)
	}
	hns := sim.New(sim.Options{Profile: prof, Seed: seed, Variants: spec.variants})
	nw := &hnslb.Network{Name: clusterNetwork, Type: hnslb.NetworkTypeL2Bridge,
		Ipams: []hnslb.Ipam{{Type: "Static", Subnets: []hnslb.Subnet{{IpAddressPrefix: podCIDR}}}}}
	if spec.dual {
		nw.Ipams = append(nw.Ipams, hnslb.Ipam{Type: "Static", Subnets: []hnslb.Subnet{{IpAddressPrefix: phPodCIDR6}}})
	}
	if spec.overlay {
		nw.Type = hnslb.NetworkTypeOverlay
		nw.Policies = routes
		if routes == nil {
			for _, o := range phOthers {
				nw.Policies = append(nw.Policies, phRoute(o))
			}
		}
	}
	ctx := context.Background()
	created, err := hns.CreateNetwork(ctx, nw)
	if err != nil {
		t.Fatal(err)
	}
	n := &testNode{
		t: t, name: nodeName, client: client, hns: hns, networkID: created.ID,
		stateFile: filepath.Join(t.TempDir(), "state.json"),
		config:    desired.Config{Mode: desired.L2Bridge, NetworkSubnets: desired.NetworkSubnetsOf(created)},
		// The network is checked by its name, as the daemon does, so a
		// network the CNI replaced ends Run (historynetwork_test.go).
		checkNetwork: true,
		// Short deadlines, so a call HNS holds (historyhang_test.go) is
		// abandoned at once on the harness's real clock.
		callTimeout: phCallTimeout, listTimeout: phListTimeout,
	}
	if spec.overlay {
		n.config.Mode, n.config.EnableDSR = desired.Overlay, spec.dsr
		n.config.SourceVIP = map[intent.IPFamily]netip.Addr{intent.IPv4: netip.MustParseAddr("10.244.1.2")}
		n.config.HostMAC = "00-15-5d-00-00-01"
		n.remoteSubnets = n.reconcilerRemoteSubnets
	}
	for _, ip := range pods {
		n.wirePod(ip)
	}
	return n
}

// reconcilerRemoteSubnets reads the overlay routes through the running
// reconciler, as the daemon does, so the read has the HNS call deadline
// and follows the network the process started on.
func (n *testNode) reconcilerRemoteSubnets(ctx context.Context) ([]desired.RemoteSubnet, error) {
	nw, err := n.rec.Network(ctx)
	if err != nil {
		return nil, err
	}
	return desired.RemoteSubnetsOf(nw), nil
}

// phRoute is the RemoteSubnetRoute Flannel adds for another node.
func phRoute(o [3]string) hnslb.NetworkPolicy {
	return hnslb.NewNetworkPolicy(hnslb.NetworkPolicyRemoteSubnetRoute,
		hnslb.RemoteSubnetRoutePolicySetting{DestinationPrefix: o[2], ProviderAddress: o[1], IsolationId: 4096})
}

// wirePod makes a pod's local endpoint in its own namespace, as the CNI's ADD does.
func (n *testNode) wirePod(ip string) {
	n.t.Helper()
	ctx := context.Background()
	ep, err := n.hns.CreateEndpoint(ctx, n.networkID, podEndpoint(ip))
	if err != nil {
		n.t.Fatalf("wiring pod %s: %v; HNS endpoints %+v", ip, err, n.hns.Snapshot().Endpoints)
	}
	ns, err := n.hns.CreateNamespace(ctx, &hnslb.Namespace{Type: hnslb.NamespaceTypeHost})
	if err != nil {
		n.t.Fatal(err)
	}
	if err := n.hns.AddNamespaceEndpoint(ctx, ns.ID, ep.ID); err != nil {
		n.t.Fatal(err)
	}
}
