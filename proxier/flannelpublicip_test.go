package proxier

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hnsproxy/hnsproxy/proxier/desired"
	"github.com/hnsproxy/hnsproxy/vfp"
)

// setFlannelPublicIP writes the public IP Flannel announces for n's Node
// (flanneld writes the annotation at its start, from --public-ip, its
// interface's address or public-ip-overwrite), leaving the Node's status
// as it is.
func (n *testNode) setFlannelPublicIP(ip string) {
	n.t.Helper()
	ctx := context.Background()
	node, err := n.client.CoreV1().Nodes().Get(ctx, n.name, metav1.GetOptions{})
	if err != nil {
		n.t.Fatal(err)
	}
	if node.Annotations == nil {
		node.Annotations = map[string]string{}
	}
	node.Annotations[FlannelPublicIPAnnotation] = ip
	if _, err := n.client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
		n.t.Fatal(err)
	}
}

// TestNodeWhoseFlannelPublicIPMovesMovesItsEndpoints: Flannel routes a
// node's pod CIDR to the public IP its annotation announces, which need
// not be an address the Node's status lists (a multi-homed node whose
// kubelet --node-ip is another interface's, public-ip-overwrite). Such a
// node comes back from a reboot with a new public IP under DHCP and the
// same Node status; Flannel moves its route. The remote endpoint of its
// pod moves to the new provider address within seconds, with no drift
// repair; it used to stay on the old address, where nothing answers, until
// the next drift repair (5 minutes by default).
func TestNodeWhoseFlannelPublicIPMovesMovesItsEndpoints(t *testing.T) {
	const newPublicIP = "192.168.7.2"
	c := overlayCluster(t)
	c.apply(service("web", "10.96.0.10"), sliceOf("web", "web-1", discoveryv1.AddressTypeIPv4, readyEP(pod1a, "win-1"), readyEP(pod2a, "win-2")))
	c.converge()
	n := c.node("win-1")

	c.node("win-2").setFlannelPublicIP(newPublicIP)
	n.setRoute("10.244.2.0/24", newPublicIP)
	n.eventually("the endpoint moving to win-2's new public IP", func() bool { return n.remoteEndpointPA(pod2a) == newPublicIP })

	// The Node's status, which never named the public IP, still does not:
	// the route to the announced address is the node's, read no more.
	n.settle()
	n.proxier.mu.Lock()
	_, waiting := n.proxier.subnets.unrouted["win-2"]
	n.proxier.mu.Unlock()
	if waiting {
		t.Error("win-2 still waits for its route, which names its announced public IP")
	}
	node, err := c.client.CoreV1().Nodes().Get(context.Background(), "win-2", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := node.Status.Addresses; len(got) != 1 || got[0] != (v1.NodeAddress{Type: v1.NodeInternalIP, Address: ip2}) {
		t.Fatalf("win-2's status addresses %v changed", got)
	}

	// win-2 answers on its new public IP too (its second interface).
	c.spec.nodes[1].ips = append(c.spec.nodes[1].ips, newPublicIP)
	c.checkFlow(t, c.vfp(), flowVariant{mode: desired.Overlay, dsr: true}, flow{from: pod1b, to: "10.96.0.10:80",
		outcome: vfp.DeliveredToPod, backends: []string{pod1a, pod2a}, src: srcClusterDSR, dst: dstBackend})
}
