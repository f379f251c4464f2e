package cni_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// TestOverlayPodsAcrossNodes wires pods on two overlay nodes (CNI 1.0.0 on
// one, 0.4.0 on the other) and traces pod-to-pod traffic within and across
// nodes through both nodes' HNS state; HNS answers as stored, and with
// every echo variant.
func TestOverlayPodsAcrossNodes(t *testing.T) {
	forEachEcho(t, overlayPodsAcrossNodes)
}

func overlayPodsAcrossNodes(t *testing.T, nodeArgs ...string) {
	n1 := startNode(t, "n1", append([]string{"--node-ip", "192.168.20.1", "--network-name", "vxlan0", "--network-type", "overlay",
		"--subnet", "10.244.1.0/24", "--remote-subnet", "10.244.2.0/24=192.168.20.2"}, nodeArgs...)...)
	n2 := startNode(t, "n2", append([]string{"--node-ip", "192.168.20.2", "--network-name", "vxlan0", "--network-type", "overlay",
		"--subnet", "10.244.2.0/24", "--remote-subnet", "10.244.1.0/24=192.168.20.1"}, nodeArgs...)...)
	rt1 := newRuntime(t, netConf{version: "1.0.0", mode: "overlay", network: "vxlan0", subnet: "10.244.1.0/24", socket: n1.socket, dataDir: t.TempDir()})
	rt2 := newRuntime(t, netConf{version: "0.4.0", mode: "overlay", network: "vxlan0", subnet: "10.244.2.0/24", socket: n2.socket, dataDir: t.TempDir()})

	a1 := pod{id: "a1", netns: n1.createNamespace(t)}
	a2 := pod{id: "a2", netns: n1.createNamespace(t)}
	b1 := pod{id: "b1", netns: n2.createNamespace(t)}
	ip := map[string]string{}
	for _, x := range []struct {
		rt *runtime
		p  pod
	}{{rt1, a1}, {rt1, a2}, {rt2, b1}} {
		res := x.rt.add(t, x.p)
		ip[x.p.id] = res.IPs[0].Address.IP.String()
		if err := x.rt.check(x.p); err != nil {
			t.Errorf("CHECK %s: %v", x.p.id, err)
		}
	}
	if !netip.MustParsePrefix("10.244.2.0/24").Contains(netip.MustParseAddr(ip["b1"])) {
		t.Fatalf("b1 got %s outside n2's subnet", ip["b1"])
	}

	for _, c := range []struct {
		node *simNode
		pa   string
		pods []string
	}{{n1, "192.168.20.1", []string{"a1_vxlan0", "a2_vxlan0"}}, {n2, "192.168.20.2", []string{"b1_vxlan0"}}} {
		s := c.node.dump(t)
		if got := names(s); strings.Join(got, ",") != strings.Join(c.pods, ",") {
			t.Errorf("%s endpoints %v, want %v", c.node.name, got, c.pods)
		}
		for _, name := range c.pods {
			e := endpointByName(s, name)
			if e.ProviderAddress() != c.pa {
				t.Errorf("%s: provider address %q, want the node's %s", name, e.ProviderAddress(), c.pa)
			}
			if r := policies[hnslb.SDNRoutePolicySetting](t, e, hnslb.EndpointPolicySDNRoute); len(r) != 1 || !r[0].NeedEncap {
				t.Errorf("%s: SDNRoute %+v", name, r)
			}
		}
	}

	// Within n1: straight to the neighbour, no tunnel.
	tr := n1.trace(t, ip["a1"], ip["a2"]+":8080/tcp")
	if tr.Outcome != "delivered-to-pod" || tr.Verdict.BackendNode != "n1" || strings.Contains(tr.actions(), "encap") {
		t.Errorf("a1 -> a2: %s", tr.Summary)
	}
	// Across nodes, both ways: VXLAN to the other node's provider address.
	tr = n1.trace(t, ip["a1"]+":41000", ip["b1"]+":8080/tcp", n2)
	if tr.Outcome != "delivered-to-pod" || tr.Verdict.BackendNode != "n2" ||
		tr.Verdict.BackendEndpointID != endpointByName(n2.dump(t), "b1_vxlan0").ID ||
		!strings.Contains(tr.actions(), "n1:encap-vxlan n2:decap-vxlan") {
		t.Errorf("a1 -> b1: %s", tr.Summary)
	}
	tr = n2.trace(t, ip["b1"], ip["a2"]+":53/udp", n1)
	if tr.Outcome != "delivered-to-pod" || tr.Verdict.BackendNode != "n1" {
		t.Errorf("b1 -> a2: %s", tr.Summary)
	}

	// Without n1's route to n2's pod subnet the packet has nowhere to go.
	n1.hnssim(t, "set-remote-subnets", "--network", "vxlan0")
	if tr = n1.trace(t, ip["a1"], ip["b1"]+":8080/tcp", n2); tr.Delivered {
		t.Errorf("a1 -> b1 without a remote subnet route was delivered: %s", tr.Summary)
	}
	n1.hnssim(t, "set-remote-subnets", "--network", "vxlan0", "10.244.2.0/24=192.168.20.2")
	if tr = n1.trace(t, ip["a1"], ip["b1"]+":8080/tcp", n2); tr.Outcome != "delivered-to-pod" {
		t.Errorf("a1 -> b1 after restoring the route: %s", tr.Summary)
	}

	rt1.del(t, a1)
	rt2.del(t, b1)
	rt2.del(t, b1)
	if got := names(n1.dump(t)); strings.Join(got, ",") != "a2_vxlan0" {
		t.Errorf("n1 endpoints after DEL: %v", got)
	}
	if got := names(n2.dump(t)); len(got) != 0 {
		t.Errorf("n2 endpoints after DEL: %v", got)
	}
}

// TestOverlayNetworkVNIAndPort: an overlay network hnscni creates takes the
// VNI and VXLAN UDP port from the configuration; a trace across two such
// nodes shows both on the tunnel hops, and a node on the default port
// cannot receive.
func TestOverlayNetworkVNIAndPort(t *testing.T) {
	n1 := startNode(t, "n1", "--node-ip", "192.168.21.1")
	n2 := startNode(t, "n2", "--node-ip", "192.168.21.2")
	conf := func(n *simNode, subnet, pa string, port int) netConf {
		return netConf{version: "1.1.0", mode: "overlay", network: "vxlan0", subnet: subnet, socket: n.socket, dataDir: t.TempDir(),
			extra: map[string]any{"providerAddress": pa, "vxlanVNI": 5001, "vxlanPort": port}}
	}
	a := pod{id: "a", netns: n1.createNamespace(t)}
	b := pod{id: "b", netns: n2.createNamespace(t)}
	ipA := newRuntime(t, conf(n1, "10.244.1.0/24", "192.168.21.1", 8472)).add(t, a).IPs[0].Address.IP.String()
	ipB := newRuntime(t, conf(n2, "10.244.2.0/24", "192.168.21.2", 8472)).add(t, b).IPs[0].Address.IP.String()
	n1.hnssim(t, "set-remote-subnets", "--network", "vxlan0", "--vni", "5001", "10.244.2.0/24=192.168.21.2")

	tr := n1.trace(t, ipA+":41000", ipB+":8080/tcp", n2)
	var encap, decap string
	for _, h := range tr.Verdict.Hops {
		switch h.Action {
		case "encap-vxlan":
			encap = h.Detail
		case "decap-vxlan":
			decap = h.Detail
		}
	}
	if tr.Outcome != "delivered-to-pod" || !strings.HasPrefix(encap, "vni=5001 port=8472 ") || decap != "vni=5001 port=8472" {
		t.Errorf("a -> b: %s (encap %q, decap %q)", tr.Summary, encap, decap)
	}

	// A third node whose network runs on the default port does not decapsulate.
	n3 := startNode(t, "n3", "--node-ip", "192.168.21.3")
	c := pod{id: "c", netns: n3.createNamespace(t)}
	ipC := newRuntime(t, conf(n3, "10.244.3.0/24", "192.168.21.3", 0)).add(t, c).IPs[0].Address.IP.String()
	n1.hnssim(t, "set-remote-subnets", "--network", "vxlan0", "--vni", "5001", "10.244.2.0/24=192.168.21.2", "10.244.3.0/24=192.168.21.3")
	if tr := n1.trace(t, ipA+":41000", ipC+":8080/tcp", n3); tr.Delivered || !strings.Contains(tr.Summary, "VXLAN port 8472") {
		t.Errorf("a -> c on port 4789: %s", tr.Summary)
	}
}
