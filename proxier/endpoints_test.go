package proxier

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hnsproxy/hnsproxy/proxier/desired"
)

// TestOverlayEndpointsFollowAFullRecompute: the desired state's remote
// endpoints reach HNS, the source-VIP endpoint included (no Service change
// names it), and a full recompute after the node IP changed hands over the
// service-VIP endpoint with its new provider address.
func TestOverlayEndpointsFollowAFullRecompute(t *testing.T) {
	nodes := threeNodes()[:2]
	c := newSimCluster(t, clusterSpec{profile: "ws2022", mode: desired.Overlay, nodes: nodes})
	c.apply(service("web", "10.96.0.10"), sliceOf("web", "web-1", discoveryv1.AddressTypeIPv4, readyEP(pod2a, "win-2")))
	c.converge()
	n1 := c.node("win-1")
	vip := sourceVIP(nodes[0]).String()
	local := false
	for _, e := range n1.hns.Snapshot().Endpoints {
		local = local || !e.IsRemote() && e.IP() == vip
	}
	if !local {
		t.Errorf("no local source-VIP endpoint %s in HNS", vip)
	}
	if pa := n1.remoteEndpointPA("10.96.0.10"); pa != ip1 {
		t.Fatalf("service-VIP endpoint of 10.96.0.10 has provider address %q, want %s", pa, ip1)
	}

	ctx := context.Background()
	node, err := c.client.CoreV1().Nodes().Get(ctx, "win-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node.Status.Addresses = []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.11"}}
	if _, err := c.client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	n1.eventually("the service-VIP endpoint follows the node IP", func() bool {
		return n1.remoteEndpointPA("10.96.0.10") == "10.0.0.11"
	})
	n1.eventually("the source-VIP endpoint stays", func() bool {
		for _, e := range n1.hns.Snapshot().Endpoints {
			if !e.IsRemote() && e.IP() == vip {
				return true
			}
		}
		return false
	})
}
