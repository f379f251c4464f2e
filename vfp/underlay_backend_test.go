package vfp

import (
	"net/netip"
	"strings"
	"testing"
)

// Backends outside the overlay on an overlay node: a Linux control-plane
// node at its own address (a remote endpoint whose provider address is its
// IP, like kubernetes.default's) and a public IP (a remote endpoint with this
// node's address as provider address, winkernel's "assuming it is a public
// IP"). HNS reaches both on the underlay, not over VXLAN, and winkernel
// gives their load balancers the node IP as source VIP because the
// underlay does not route the overlay's source VIP back
// (kubernetes/kubernetes#91886, #91912, KEP-5100).
func TestOverlayBackendsOnTheUnderlay(t *testing.T) {
	const (
		linuxCP  = "10.0.0.100"
		public   = "198.51.100.9"
		apiVIP   = "10.96.0.1"
		extVIP   = "10.96.0.200"
		wrongVIP = "10.96.0.201"
		nodeBVIP = "10.96.0.202"
	)
	a, b := overlayHNS()
	a.remote(linuxCP, linuxCP)
	a.remote(public, ipA)
	a.lb(lbSpec{vip: apiVIP, ext: 443, int: 6443, backends: []string{linuxCP}, sourceVIP: ipA})
	a.lb(lbSpec{vip: extVIP, ext: 80, int: 80, backends: []string{public}, sourceVIP: ipA})
	a.lb(lbSpec{vip: wrongVIP, ext: 443, int: 6443, backends: []string{linuxCP}, sourceVIP: svipA})
	// A host-network backend on node b, reached on the underlay like linuxCP.
	a.remote(ipB, ipB)
	a.lb(lbSpec{vip: nodeBVIP, ext: 10250, int: 10250, backends: []string{ipB}, sourceVIP: svipA})
	c := mustCluster(t, a.asNode(ipA), b.asNode(ipB))
	for _, tc := range []struct {
		name string
		pkt  Packet
		opt  Options
		want want
	}{
		{name: "pod to a ClusterIP backed by a node outside the cluster", pkt: tcp(podA1+":40000", apiVIP+":443"),
			want: want{outcome: LeftCluster, backend: linuxCP + ":6443", src: ipA + ":40000",
				actions: []Action{ActionFromPod, ActionDNAT, ActionSNAT, ActionEgress}}},
		{name: "host to a ClusterIP backed by a node outside the cluster", pkt: tcp(ipA+":50000", apiVIP+":443"),
			want: want{outcome: LeftCluster, backend: linuxCP + ":6443", src: ipA + ":50000", keepsIP: true}},
		{name: "pod to a ClusterIP backed by a public IP", pkt: tcp(podA1+":40000", extVIP+":80"),
			want: want{outcome: LeftCluster, backend: public + ":80", src: ipA + ":40000"}},
		{name: "pod to the node outside the cluster directly: OutBoundNAT", pkt: tcp(podA1+":40000", linuxCP+":6443"),
			want: want{outcome: LeftCluster, backend: linuxCP + ":6443", src: ipA + ":40000",
				actions: []Action{ActionFromPod, ActionOutboundNAT, ActionEgress}}},
		{name: "the overlay source VIP does not route back from the underlay", pkt: tcp(podA1+":40000", wrongVIP+":443"),
			want: want{outcome: Dropped, reason: "does not route it back"}},
		{name: "nor to another node of the cluster", pkt: tcp(podA1+":40000", nodeBVIP+":10250"),
			want: want{outcome: Dropped, reason: "does not route it back"}},
		{name: "nor to a node whose HNS is not traced", pkt: tcp(podA1+":40000", wrongVIP+":443"),
			opt:  Options{OtherNodes: map[netip.Addr]string{netip.MustParseAddr(linuxCP): "control-plane"}},
			want: want{outcome: Dropped, reason: "does not route it back"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := c.Trace(tc.pkt, tc.opt)
			if err != nil {
				t.Fatalf("Trace(%s): %v", tc.pkt, err)
			}
			checkVerdict(t, v, tc.want, strings.NewReplacer())
		})
	}
}
