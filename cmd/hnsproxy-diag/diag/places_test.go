package diag

import (
	"net/netip"
	"testing"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The diagnosis names what is behind an HNS address from the Kubernetes
// objects, whose addresses it reads as hnsproxy and kube-proxy do
// (kubeip): an endpoint or Node address stored with leading zeros names
// the canonical address HNS holds; a zoned one names nothing.
func TestPlacesReadAddressesAsKubeProxy(t *testing.T) {
	node := "win-2"
	in := &Inputs{
		Slices: []discoveryv1.EndpointSlice{{Endpoints: []discoveryv1.Endpoint{
			{Addresses: []string{"010.244.001.005"}, NodeName: &node, TargetRef: &v1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: "web-1"}},
			{Addresses: []string{"fe80::5%eth0"}, NodeName: &node},
		}}},
		Nodes: []v1.Node{{ObjectMeta: metav1.ObjectMeta{Name: node}, Status: v1.NodeStatus{Addresses: []v1.NodeAddress{
			{Type: v1.NodeInternalIP, Address: "010.000.000.012"},
			{Type: v1.NodeInternalIP, Address: "fe80::12%eth0"},
		}}}},
	}
	pods := in.podPlaces()
	if p := pods[netip.MustParseAddr("10.244.1.5")]; p.Pod != "ns/web-1" || p.Node != node || len(pods) != 1 {
		t.Errorf("pod places %v, want ns/web-1 on %s at 10.244.1.5 only", pods, node)
	}
	nodes := in.nodeAddresses()
	if nodes[netip.MustParseAddr("10.0.0.12")] != node || len(nodes) != 1 {
		t.Errorf("node addresses %v, want %s at 10.0.0.12 only", nodes, node)
	}
}
