package proxier

import (
	"context"
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hnsproxy/hnsproxy/sim"
)

// deleteNode deletes the test node's Node object and returns it as it was.
func (n *testNode) deleteNode() *v1.Node {
	n.t.Helper()
	ctx := context.Background()
	node, err := n.client.CoreV1().Nodes().Get(ctx, n.name, metav1.GetOptions{})
	if err != nil {
		n.t.Fatal(err)
	}
	if err := n.client.CoreV1().Nodes().Delete(ctx, n.name, metav1.DeleteOptions{}); err != nil {
		n.t.Fatal(err)
	}
	return node
}

// recreateNode creates node again as a new object (a new UID, as a
// re-registering kubelet makes it), with addresses.
func (n *testNode) recreateNode(node *v1.Node, addresses ...v1.NodeAddress) {
	n.t.Helper()
	node = node.DeepCopy()
	node.ResourceVersion, node.UID = "", types.UID("recreated")
	node.Status.Addresses = addresses
	if _, err := n.client.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{}); err != nil {
		n.t.Fatal(err)
	}
}

// The Node deleted while hnsproxy runs (an operator's `kubectl delete
// node`, a cloud controller's cleanup): kube-proxy 1.36 logs it and keeps
// its node IPs, 1.37 exits to be started again; hnsproxy keeps HNS as it
// is, and follows the Node recreated under the same name with a new UID and
// a new address.
func TestNodeDeletedLeavesHNSAloneAndItsReturnIsFollowed(t *testing.T) {
	n, _ := observedNode(t, "ws2022", "10.244.1.5")
	n.apply(service("web", "10.96.0.10"), slice("web", endpoint{"10.244.1.5", nodeName}))
	n.eventually("load balancer with the node IP as source VIP", func() bool { return n.lbSourceVIPs() == nodeIP })
	n.settle()
	before := n.lbs()
	n.hns.ResetCounters()

	node := n.deleteNode()
	n.eventually("the Node gone from the cache", func() bool {
		_, err := n.proxier.nodes.Get(nodeName)
		return err != nil
	})
	n.apply(service("api", "10.96.0.11"), slice("api", endpoint{"10.244.1.5", nodeName}))
	n.eventually("a Service added while the Node is gone is programmed", func() bool { return n.hasFrontend("10.96.0.11") })
	n.settle()
	c := n.hns.Counters()
	if d := c.Count(sim.OpDeleteLoadBalancer) + c.Count(sim.OpDeleteEndpoint); d != 0 {
		t.Errorf("deleting the Node led to %d HNS deletes, want 0 (%+v)", d, c.Calls)
	}
	if got := n.lbSourceVIPs(); got != nodeIP+","+nodeIP {
		t.Errorf("source VIPs %s, want the last known node IP on both", got)
	}
	if len(n.lbs()) != len(before)+1 {
		t.Errorf("load balancers %+v, want those before (%+v) and api's", n.lbs(), before)
	}

	n.recreateNode(node, v1.NodeAddress{Type: v1.NodeInternalIP, Address: "10.0.0.9"})
	n.eventually("load balancers follow the recreated Node's address", func() bool { return n.lbSourceVIPs() == "10.0.0.9,10.0.0.9" })
}

// stoppedWithOneLoadBalancer is a node whose proxier programmed one
// load balancer and stopped; before is what HNS holds.
func stoppedWithOneLoadBalancer(t *testing.T) (*testNode, []lbView) {
	n, _ := observedNode(t, "ws2022", "10.244.1.5")
	n.apply(service("web", "10.96.0.10"), slice("web", endpoint{"10.244.1.5", nodeName}))
	n.eventually("load balancer", func() bool { return len(n.lbs()) == 1 })
	n.settle()
	before := n.lbs()
	n.stop()
	return n, before
}

// A start before this node's Node exists (hnsproxy started before kubelet
// registered, or the Node deleted while hnsproxy restarted): kube-proxy
// waits for it; hnsproxy waits too, leaves HNS as it is, and says the Node
// is missing, not that it has no address.
func TestStartBeforeTheNodeIsRegisteredLeavesHNSAlone(t *testing.T) {
	n, before := stoppedWithOneLoadBalancer(t)
	node := n.deleteNode()
	n.hns.ResetCounters()
	logs := n.loggingAt(0)
	n.start()
	n.eventually("the wait for the Node logged", func() bool { return strings.Contains(logs.String(), "not registered") })
	if got := n.lbs(); !reflect.DeepEqual(got, before) || n.hns.Counters().Writes() != 0 {
		t.Fatalf("HNS changed while the Node did not exist: %+v (writes %d)", got, n.hns.Counters().Writes())
	}
	if out := logs.String(); strings.Contains(out, "no InternalIP or ExternalIP") || strings.Contains(out, "Reading the Node to raise an event") {
		t.Errorf("a missing Node is reported as one without addresses, or its event as an error:\n%s", out)
	}

	n.recreateNode(node, node.Status.Addresses...)
	n.eventually("the first sync", func() bool { return n.proxier.lastSync.Load() != nil })
	n.settle()
	if got := n.lbs(); !reflect.DeepEqual(got, before) || n.hns.Counters().Writes() != 0 {
		t.Errorf("after the Node registered: %+v (writes %d)", got, n.hns.Counters().Writes())
	}
}
