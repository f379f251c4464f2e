package vfp

import (
	"net/netip"
	"strings"
	"testing"
)

// A trace over one node's HNS (as hnsproxy-diag makes on a real node): node
// b's state is missing, its addresses are known from Kubernetes.
var elsewhere = Options{
	OtherNodes: map[netip.Addr]string{netip.MustParseAddr(ipB): nodeB},
	OtherPods:  map[netip.Addr]string{netip.MustParseAddr(podB1): nodeB},
}

func TestHandOffToNodesOutsideTheCluster(t *testing.T) {
	l2a, _ := l2bridgeHNS()
	ova, _ := overlayHNS()
	l2 := mustCluster(t, l2a.asNode(ipA))
	ov := mustCluster(t, ova.asNode(ipA))
	for _, tc := range []struct {
		name string
		c    *Cluster
		pkt  Packet
		opt  Options
		want want
	}{
		{"l2bridge: ClusterIP with a remote backend is routed to its node", l2, tcp(podA1+":40000", "10.96.0.20:80"), elsewhere,
			want{outcome: HandedOff, lb: "a-lb2", node: nodeB, backend: podB1 + ":8080", src: ipA + ":40000", dst: podB1 + ":8080",
				actions: []Action{ActionFromPod, ActionDNAT, ActionSNAT, ActionRoute}}},
		{"l2bridge: without the other node's pods, the backend reads as outside the cluster", l2, tcp(podA1+":40000", "10.96.0.20:80"), Options{},
			want{outcome: LeftCluster, lb: "a-lb2", backend: podB1 + ":8080"}},
		{"l2bridge: pod to the other node's address: OutBoundNAT, underlay", l2, tcp(podA1+":40000", ipB+":10250"), elsewhere,
			want{outcome: HandedOff, node: nodeB, backend: ipB + ":10250", src: ipA + ":40000",
				actions: []Action{ActionFromPod, ActionOutboundNAT, ActionUnderlay}}},
		{"overlay: ClusterIP with a remote backend is encapsulated to its node", ov, tcp(podA1+":40000", "10.96.0.20:80"), elsewhere,
			want{outcome: HandedOff, lb: "a-lb2", node: nodeB, backend: podB1 + ":8080", src: svipA + ":40000", detail: "pa=10.0.0.2",
				actions: []Action{ActionFromPod, ActionDNAT, ActionSNAT, ActionEncap}}},
		{"overlay: without the other node, its provider address leads nowhere", ov, tcp(podA1+":40000", "10.96.0.20:80"), Options{},
			want{outcome: Dropped, reason: "no node has provider address 10.0.0.2"}},
		{"overlay: the node's own address still cannot be encapsulated", ov, tcp(ipA+":50000", podB1+":8080"), elsewhere,
			want{outcome: Dropped, reason: "is a node address"}},
		{"external client at the traced node's NodePort, remote backend", ov, tcp(client+":5555", ipA+":30080"), elsewhere,
			want{outcome: HandedOff, lb: "a-lb8", node: nodeB, backend: podB1 + ":8080", src: svipA + ":5555"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := tc.c.Trace(tc.pkt, tc.opt)
			if err != nil {
				t.Fatalf("Trace(%s): %v", tc.pkt, err)
			}
			checkVerdict(t, v, tc.want, strings.NewReplacer())
		})
	}
}
