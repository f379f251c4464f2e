package vfp

import (
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

func TestPathsByProviderAddress(t *testing.T) {
	const podC1 = "10.244.3.10"
	const podB2 = "10.244.2.11"
	a := newHNS(nodeA, hnslb.NetworkTypeL2Bridge, "10.244.1.0/24", 0)
	b := newHNS(nodeB, hnslb.NetworkTypeL2Bridge, "10.244.2.0/24", 0)
	a.pod(podA1)
	a.remote(podB1, ipB)       // l2bridge remote endpoint naming its node
	a.remote(podC1, ipB)       // wrong: podC1 is on no node
	a.remote(podB2, ipA)       // naming this node (winkernel's node-IP provider address): no next hop
	a.remote("fd00:2::10", "") // an IPv6-only remote endpoint
	b.pod(podB1)
	b.pod(podB2)
	a.lb(lbSpec{vip: "10.96.0.10", ext: 80, int: 8080, backends: []string{"fd00:2::10"}})
	c := mustCluster(t, a.asNode(ipA), b.asNode(ipB))
	runFlows(t, c, "", "", []flow{
		{name: "l2bridge follows the remote endpoint's provider address", pkt: tcp(podA1+":40000", podB1+":80"),
			want: want{outcome: DeliveredToPod, node: nodeB, keepsIP: true, actions: []Action{ActionFromPod, ActionRoute, ActionDeliver}}},
		{name: "a provider address naming this node leaves the route to the pod's node", pkt: tcp(podA1+":40000", podB2+":80"),
			want: want{outcome: DeliveredToPod, node: nodeB, keepsIP: true, actions: []Action{ActionFromPod, ActionRoute, ActionDeliver}}},
		{name: "provider address of a node without the pod", pkt: tcp(podA1+":40000", podC1+":80"),
			want: want{outcome: Dropped, reason: "node b has no pod or node address 10.244.3.10"}},
		{name: "backend without an address of the family", pkt: tcp(podA1+":40000", "10.96.0.10:80"),
			want: want{outcome: Dropped, lb: "a-lb1", reason: "has no IPv4 address"}},
	})
	v, _ := c.Trace(tcp(podA1+":40000", podB1+":80"), Options{})
	if !v.Delivered() {
		t.Errorf("Delivered() = false for %s", v)
	}
	v, _ = c.Trace(tcp(podA1+":40000", podC1+":80"), Options{})
	if v.Delivered() {
		t.Errorf("Delivered() = true for %s", v)
	}
}

func TestOverlayProviderAddressProblems(t *testing.T) {
	a := newHNS(nodeA, hnslb.NetworkTypeOverlay, "10.244.1.0/24", 0,
		remoteSubnet("10.244.2.0/24", ipB, 0), remoteSubnet("10.244.3.0/24", "10.0.0.3", 0))
	b := newHNS(nodeB, hnslb.NetworkTypeL2Bridge, "10.244.2.0/24", 0)
	a.pod(podA1)
	b.pod(podB1)
	c := mustCluster(t, a.asNode(ipA), b.asNode(ipB))
	runFlows(t, c, "", "", []flow{
		{name: "no node has the provider address", pkt: tcp(podA1+":40000", "10.244.3.10:80"),
			want: want{outcome: Dropped, reason: "no node has provider address 10.0.0.3 (RemoteSubnetRoute 10.244.3.0/24)"}},
		{name: "the receiving node is not on an overlay network", pkt: tcp(podA1+":40000", podB1+":80"),
			want: want{outcome: Dropped, reason: `node b's network "cbr0" is not an overlay network`}},
	})
}
