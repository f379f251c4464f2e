package vfp

import (
	"slices"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// want is what a flow test checks; zero fields are not checked, except
// that Outcome is always checked.
type want struct {
	outcome  Outcome
	reason   string // substring of DropReason
	lb       string
	node     string // BackendNode
	backend  string
	src, dst string // SeenSrc, SeenDst
	dsr      bool
	keepsIP  bool // ClientIPPreserved
	actions  []Action
	detail   string // substring of some hop's Detail
}

type flow struct {
	name string
	pkt  Packet
	opt  Options
	want want
}

var (
	podToPod     = []Action{ActionFromPod, ActionDeliver}
	lbLocal      = []Action{ActionFromPod, ActionDNAT, ActionSNAT, ActionDeliver}
	lbRemoteL2   = []Action{ActionFromPod, ActionDNAT, ActionSNAT, ActionRoute, ActionDeliver}
	lbRemoteVXL  = []Action{ActionFromPod, ActionDNAT, ActionSNAT, ActionEncap, ActionDecap, ActionDeliver}
	extLBRemote2 = []Action{ActionIngress, ActionDNAT, ActionSNAT, ActionRoute, ActionDeliver}
)

// Flows both network types treat alike (same addresses, same verdict),
// apart from the source VIP, given as svA / svB placeholders.
func commonFlows() []flow {
	return []flow{
		{name: "pod to pod same node", pkt: tcp(podA1+":40000", podA2+":8080"),
			want: want{outcome: DeliveredToPod, node: nodeA, backend: podA2 + ":8080", src: podA1 + ":40000", dst: podA2 + ":8080", keepsIP: true, actions: podToPod}},
		{name: "pod to ClusterIP, local backend, non-DSR SNATs to the source VIP", pkt: tcp(podA1+":40000", "10.96.0.10:80"),
			want: want{outcome: DeliveredToPod, lb: "a-lb1", node: nodeA, backend: podA2 + ":8080", src: "svA:40000", dst: podA2 + ":8080", actions: lbLocal}},
		{name: "pod to node, same node", pkt: tcp(podA1+":40000", ipA+":10250"),
			want: want{outcome: DeliveredToHost, node: nodeA, backend: ipA + ":10250", src: podA1 + ":40000", keepsIP: true, actions: podToPod}},
		{name: "pod to other node: OutBoundNAT to the node address over the underlay", pkt: tcp(podA1+":40000", ipB+":10250"),
			want: want{outcome: DeliveredToHost, node: nodeB, src: ipA + ":40000", dst: ipB + ":10250",
				actions: []Action{ActionFromPod, ActionOutboundNAT, ActionUnderlay, ActionDeliver}}},
		{name: "node to local pod", pkt: tcp(ipA+":50000", podA1+":8080"),
			want: want{outcome: DeliveredToPod, node: nodeA, src: ipA + ":50000", keepsIP: true, actions: []Action{ActionFromHost, ActionDeliver}}},
		{name: "pod to own node's NodePort works", pkt: tcp(podA1+":40000", ipA+":30082"),
			want: want{outcome: DeliveredToPod, lb: "a-lb10", node: nodeA, src: "svA:40000"}},
		{name: "node to own NodePort is not supported on Windows", pkt: tcp(ipA+":50000", ipA+":30080"),
			want: want{outcome: Dropped, lb: "a-lb8", reason: "local NodePort access from the node itself"}},
		{name: "external to NodePort, ETP=Local DSR: client IP kept", pkt: tcp(client+":5555", ipA+":30081"),
			want: want{outcome: DeliveredToPod, lb: "a-lb9", node: nodeA, backend: podA2 + ":8080", src: client + ":5555", dst: podA2 + ":8080",
				dsr: true, keepsIP: true, actions: []Action{ActionIngress, ActionDNAT, ActionDeliver}}},
		{name: "external to LoadBalancer ingress IP at the backend's node", pkt: tcp(client+":5555", "192.0.2.10:443"), opt: Options{Ingress: nodeB},
			want: want{outcome: DeliveredToPod, lb: "b-lb9", node: nodeB, backend: podB1 + ":8443", src: "svB:5555", dst: podB1 + ":8443",
				actions: []Action{ActionIngress, ActionDNAT, ActionSNAT, ActionDeliver}}},
		{name: "pod to LoadBalancer ingress IP is load balanced at the pod's port", pkt: tcp(podA1+":40000", "192.0.2.10:443"),
			want: want{outcome: DeliveredToPod, lb: "a-lb11", node: nodeB, backend: podB1 + ":8443", src: "svA:40000"}},
		{name: "preserve-destination keeps the VIP as destination", pkt: tcp(client+":5555", "192.0.2.20:80"), opt: Options{Ingress: nodeA},
			want: want{outcome: DeliveredToPod, lb: "a-lb12", node: nodeA, backend: podA2 + ":8080", src: client + ":5555", dst: "192.0.2.20:8080",
				dsr: true, keepsIP: true, detail: "PreserveDIP"}},
		{name: "ClusterIP is not reachable from outside the node", pkt: tcp(client+":5555", "10.96.0.10:80"), opt: Options{Ingress: nodeA},
			want: want{outcome: Dropped, reason: "no load balancer matched"}},
		{name: "no backends", pkt: tcp(podA1+":40000", "10.96.0.40:80"),
			want: want{outcome: Dropped, lb: "a-lb5", reason: "has no backends"}},
		{name: "family mismatch: IPv4 VIP on an IPv6-flagged load balancer", pkt: tcp(podA1+":40000", "10.96.0.50:80"),
			want: want{outcome: Dropped, reason: "IPv6 flag true but the packet is IPv4"}},
		{name: "protocol mismatch", pkt: Packet{Src: ap(podA1 + ":40000"), Dst: ap("10.96.0.10:80"), Protocol: hnslb.ProtocolUDP},
			want: want{outcome: Dropped, reason: "is for TCP, not UDP"}},
		{name: "port mismatch", pkt: tcp(podA1+":40000", "10.96.0.10:81"),
			want: want{outcome: Dropped, reason: "listens on port 80, not 81"}},
		{name: "pod to external: OutBoundNAT to the node address", pkt: tcp(podA1+":40000", "198.51.100.1:443"),
			want: want{outcome: LeftCluster, backend: "198.51.100.1:443", src: ipA + ":40000", actions: []Action{ActionFromPod, ActionOutboundNAT, ActionEgress}}},
		{name: "ICMP to external cannot be translated", pkt: Packet{Src: ap(podA1 + ":0"), Dst: ap("198.51.100.1:0"), Protocol: ProtocolICMP},
			want: want{outcome: Dropped, reason: "does not translate ICMP"}},
		{name: "ICMP pod to pod works", pkt: Packet{Src: ap(podA1 + ":0"), Dst: ap(podA2 + ":0"), Protocol: ProtocolICMP},
			want: want{outcome: DeliveredToPod, node: nodeA, keepsIP: true}},
		{name: "ICMP has no ports: ones given are dropped", pkt: Packet{Src: ap(podA1 + ":1234"), Dst: ap(podA2 + ":7"), Protocol: ProtocolICMP},
			want: want{outcome: DeliveredToPod, node: nodeA, keepsIP: true, src: podA1 + ":0", dst: podA2 + ":0"}},
		{name: "unknown pod address in the cluster CIDR", pkt: tcp(podA1+":40000", "10.244.1.99:80"),
			want: want{outcome: Dropped, reason: "pod subnet"}},
	}
}

func l2bridgeFlows() []flow {
	return []flow{
		{name: "pod to pod across nodes", pkt: tcp(podA1+":40000", podB1+":8080"),
			want: want{outcome: DeliveredToPod, node: nodeB, src: podA1 + ":40000", keepsIP: true, actions: []Action{ActionFromPod, ActionRoute, ActionDeliver}}},
		{name: "pod to ClusterIP, remote backend", pkt: tcp(podA1+":40000", "10.96.0.20:80"),
			want: want{outcome: DeliveredToPod, lb: "a-lb2", node: nodeB, backend: podB1 + ":8080", src: ipA + ":40000", actions: lbRemoteL2}},
		{name: "pod to DSR ClusterIP keeps the pod IP", pkt: tcp(podA1+":40000", "10.96.0.60:80"),
			want: want{outcome: DeliveredToPod, lb: "a-lb7", node: nodeB, src: podA1 + ":40000", dsr: true, keepsIP: true,
				actions: []Action{ActionFromPod, ActionDNAT, ActionRoute, ActionDeliver}}},
		{name: "node to remote pod", pkt: tcp(ipA+":50000", podB1+":8080"),
			want: want{outcome: DeliveredToPod, node: nodeB, src: ipA + ":50000", keepsIP: true, actions: []Action{ActionFromHost, ActionRoute, ActionDeliver}}},
		{name: "external to NodePort, non-DSR, remote backend: SNAT to the node address", pkt: tcp(client+":5555", ipA+":30080"),
			want: want{outcome: DeliveredToPod, lb: "a-lb8", node: nodeB, backend: podB1 + ":8080", src: ipA + ":5555", actions: extLBRemote2}},
		{name: "pod to the other node's NodePort", pkt: tcp(podA1+":40000", ipB+":30080"),
			want: want{outcome: DeliveredToPod, lb: "b-lb8", node: nodeB, src: ipB + ":40000",
				actions: []Action{ActionFromPod, ActionOutboundNAT, ActionUnderlay, ActionDNAT, ActionSNAT, ActionDeliver}}},
		{name: "node to ClusterIP, remote backend: the source VIP is the node address", pkt: tcp(ipA+":50000", "10.96.0.20:80"),
			want: want{outcome: DeliveredToPod, node: nodeB, src: ipA + ":50000", keepsIP: true, actions: []Action{ActionFromHost, ActionDNAT, ActionSNAT, ActionRoute, ActionDeliver}}},
		{name: "pod address in the cluster CIDR that no node holds", pkt: tcp(podA1+":40000", "10.244.3.10:80"),
			want: want{outcome: Dropped, reason: "in-cluster address"}},
	}
}

func overlayFlows() []flow {
	return []flow{
		{name: "pod to pod across nodes: VXLAN to the provider address", pkt: tcp(podA1+":40000", podB1+":8080"),
			want: want{outcome: DeliveredToPod, node: nodeB, src: podA1 + ":40000", keepsIP: true, detail: "vni=4096 port=4789 pa=10.0.0.2 via remote endpoint a-ep4",
				actions: []Action{ActionFromPod, ActionEncap, ActionDecap, ActionDeliver}}},
		{name: "pod to ClusterIP, remote backend: SNAT to the source VIP, encapsulated", pkt: tcp(podA1+":40000", "10.96.0.20:80"),
			want: want{outcome: DeliveredToPod, lb: "a-lb2", node: nodeB, backend: podB1 + ":8080", src: svipA + ":40000", actions: lbRemoteVXL}},
		{name: "pod to DSR ClusterIP keeps the pod IP across the tunnel", pkt: tcp(podA1+":40000", "10.96.0.60:80"),
			want: want{outcome: DeliveredToPod, node: nodeB, src: podA1 + ":40000", dsr: true, keepsIP: true}},
		{name: "node to remote pod is not possible on overlay", pkt: tcp(ipA+":50000", podB1+":8080"),
			want: want{outcome: Dropped, reason: "is a node address"}},
		{name: "node to ClusterIP, remote backend: via the source VIP", pkt: tcp(ipA+":50000", "10.96.0.20:80"),
			want: want{outcome: DeliveredToPod, node: nodeB, src: svipA + ":50000",
				actions: []Action{ActionFromHost, ActionDNAT, ActionSNAT, ActionEncap, ActionDecap, ActionDeliver}}},
		{name: "node to DSR ClusterIP with a remote backend cannot be encapsulated", pkt: tcp(ipA+":50000", "10.96.0.60:80"),
			want: want{outcome: Dropped, lb: "a-lb7", dsr: true, reason: "is a node address"}},
		{name: "external to NodePort, non-DSR, remote backend: SNAT to the source VIP", pkt: tcp(client+":5555", ipA+":30080"),
			want: want{outcome: DeliveredToPod, lb: "a-lb8", node: nodeB, backend: podB1 + ":8080", src: svipA + ":5555",
				actions: []Action{ActionIngress, ActionDNAT, ActionSNAT, ActionEncap, ActionDecap, ActionDeliver}}},
		{name: "remote subnet without a RemoteSubnetRoute", pkt: tcp(podA1+":40000", "10.244.3.10:80"),
			want: want{outcome: Dropped, reason: "overlay: no remote endpoint or RemoteSubnetRoute covers 10.244.3.10"}},
		{name: "RemoteSubnetRoute reaches a pod without a remote endpoint", pkt: tcp(podB1+":40000", "10.244.1.99:80"),
			want: want{outcome: Dropped, reason: "node a has no local endpoint with address 10.244.1.99", detail: "via RemoteSubnetRoute 10.244.1.0/24"}},
	}
}

func TestFlowsL2Bridge(t *testing.T) {
	runFlows(t, l2bridgeCluster(t), ipA, ipB, append(commonFlows(), l2bridgeFlows()...))
}

func TestFlowsOverlay(t *testing.T) {
	runFlows(t, overlayCluster(t), svipA, svipB, append(commonFlows(), overlayFlows()...))
}

func runFlows(t *testing.T, c *Cluster, svA, svB string, flows []flow) {
	for _, f := range flows {
		t.Run(f.name, func(t *testing.T) {
			v, err := c.Trace(f.pkt, f.opt)
			if err != nil {
				t.Fatalf("Trace(%s): %v", f.pkt, err)
			}
			checkVerdict(t, v, f.want, strings.NewReplacer("svA", svA, "svB", svB))
		})
	}
}

func checkVerdict(t *testing.T, v Verdict, w want, sv *strings.Replacer) {
	t.Helper()
	fail := func(what string, got, want any) {
		t.Helper()
		t.Errorf("%s = %v, want %v\nverdict: %s", what, got, want, v)
	}
	if v.Outcome != w.outcome {
		fail("Outcome", v.Outcome, w.outcome)
	}
	if (w.outcome == Dropped) != (v.DropReason != "") || !strings.Contains(v.DropReason, w.reason) {
		fail("DropReason", v.DropReason, w.reason)
	}
	if w.lb != "" && v.LoadBalancerID != w.lb {
		fail("LoadBalancerID", v.LoadBalancerID, w.lb)
	}
	if w.node != "" && v.BackendNode != w.node {
		fail("BackendNode", v.BackendNode, w.node)
	}
	if w.backend != "" && v.Backend.String() != w.backend {
		fail("Backend", v.Backend, w.backend)
	}
	if w.src != "" && v.SeenSrc.String() != sv.Replace(w.src) {
		fail("SeenSrc", v.SeenSrc, sv.Replace(w.src))
	}
	if w.dst != "" && v.SeenDst.String() != w.dst {
		fail("SeenDst", v.SeenDst, w.dst)
	}
	if v.DSR != w.dsr {
		fail("DSR", v.DSR, w.dsr)
	}
	if v.ClientIPPreserved != w.keepsIP {
		fail("ClientIPPreserved", v.ClientIPPreserved, w.keepsIP)
	}
	if w.actions != nil && !slices.Equal(v.Actions(), w.actions) {
		fail("Actions", v.Actions(), w.actions)
	}
	if w.detail != "" && !slices.ContainsFunc(v.Hops, func(h Hop) bool { return strings.Contains(h.Detail, w.detail) }) {
		fail("hop detail", v.Hops, w.detail)
	}
}
