package vfp

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

func TestNewClusterRejectsUninterpretableState(t *testing.T) {
	good := func() *hns {
		h := newHNS(nodeA, hnslb.NetworkTypeL2Bridge, "10.244.1.0/24", 0)
		h.pod(podA1)
		return h
	}
	for _, tc := range []struct {
		name  string
		nodes func() []Node
		want  string
	}{
		{"no name", func() []Node { n := good().asNode(ipA); n.Name = ""; return []Node{n} }, "has no name"},
		{"duplicate name", func() []Node { return []Node{good().asNode(ipA), good().asNode(ipB)} }, "given twice"},
		{"no snapshot", func() []Node { return []Node{{Name: nodeA}} }, "no HNS snapshot"},
		{"invalid node address", func() []Node { n := good().asNode(); n.IPs = []netip.Addr{{}}; return []Node{n} }, "not valid"},
		{"unknown network", func() []Node { n := good().asNode(ipA); n.NetworkName = "other"; return []Node{n} }, `network "other" not found`},
		{"ambiguous default network", func() []Node {
			h := good()
			h.snap.Networks = append(h.snap.Networks, hnslb.Network{ID: "x", Name: "nat", Type: hnslb.NetworkTypeNAT})
			n := h.asNode(ipA)
			n.NetworkName = ""
			return []Node{n}
		}, "not found among 2 networks"},
		{"unmodelled network type", func() []Node {
			h := good()
			h.snap.Networks[0].Type = hnslb.NetworkTypeNAT
			return []Node{h.asNode(ipA)}
		}, `type "NAT"`},
		{"bad endpoint address", func() []Node {
			h := good()
			h.snap.Endpoints[0].IpConfigurations[0].IpAddress = "10.244.1"
			return []Node{h.asNode(ipA)}
		}, "endpoint a-ep1"},
		{"bad OutBoundNAT exception", func() []Node {
			h := good()
			h.snap.Endpoints[0].Policies = []hnslb.EndpointPolicy{hnslb.NewEndpointPolicy(hnslb.EndpointPolicyOutBoundNAT,
				hnslb.OutboundNatPolicySetting{Exceptions: []string{"cluster"}})}
			return []Node{h.asNode(ipA)}
		}, `"cluster" is neither a prefix nor an address`},
		{"bad RemoteSubnetRoute", func() []Node {
			h := newHNS(nodeA, hnslb.NetworkTypeOverlay, "10.244.1.0/24", 0, remoteSubnet("10.244.2.0/24", "node-b", 0))
			return []Node{h.asNode(ipA)}
		}, "RemoteSubnetRoute 10.244.2.0/24: provider address"},
		{"bad frontend VIP", func() []Node {
			h := good()
			h.lb(lbSpec{vip: "10.96.0.10", ext: 80})
			h.snap.LoadBalancers[0].FrontendVIPs[0] = "vip"
			return []Node{h.asNode(ipA)}
		}, "a-lb1: frontend VIP"},
		{"bad source VIP", func() []Node {
			h := good()
			h.lb(lbSpec{vip: "10.96.0.10", ext: 80, sourceVIP: "10.244.1.2/24"})
			return []Node{h.asNode(ipA)}
		}, "a-lb1: source VIP"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewCluster(tc.nodes()...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewCluster error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestNewClusterDefaultNetworkAndOtherNetworksEndpoints(t *testing.T) {
	h := newHNS(nodeA, hnslb.NetworkTypeL2Bridge, "10.244.1.0/24", 0)
	h.pod(podA1)
	h.pod(podA2)
	h.snap.Endpoints[1].HostComputeNetwork = "another-network"
	n := h.asNode(ipA)
	n.NetworkName = ""
	c := mustCluster(t, n)
	v, err := c.Trace(tcp(podA1+":1", podA2+":80"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// podA2's endpoint is on another network, so podA2 is no pod here.
	if v.Outcome != Dropped || !strings.Contains(v.DropReason, "pod subnet") {
		t.Errorf("verdict %s, want a drop in the pod subnet", v)
	}
}

func TestTraceRejectsBadQuestions(t *testing.T) {
	c := l2bridgeCluster(t)
	for _, tc := range []struct {
		name string
		pkt  Packet
		opt  Options
		want string
	}{
		{"zero packet", Packet{Protocol: hnslb.ProtocolTCP}, Options{}, "must be valid addresses"},
		{"mixed families", tcp(podA1+":1", "[fd00::1]:80"), Options{}, "different IP families"},
		{"unknown protocol", Packet{Src: ap(podA1 + ":1"), Dst: ap(podA2 + ":80"), Protocol: 132}, Options{}, "protocol 132 is not modelled"},
		{"TCP to port 0", tcp(podA1+":1", podA2+":0"), Options{}, "destination port 0"},
		{"unknown ingress node", tcp(client+":1", ipA+":30080"), Options{Ingress: "c"}, `ingress node "c"`},
		{"external packet to an address nobody owns", tcp(client+":1", "192.0.2.10:443"), Options{}, "set Options.Ingress"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Trace(tc.pkt, tc.opt)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Trace error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestVerdictString(t *testing.T) {
	v, err := l2bridgeCluster(t).Trace(tcp(client+":5555", ipA+":30080"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := v.String()
	for _, part := range []string{"delivered-to-pod", "lb a-lb8 on a frontend 10.0.0.1:30080", "b deliver 10.0.0.1:5555->10.244.2.10:8080 (endpoint b-ep1)"} {
		if !strings.Contains(s, part) {
			t.Errorf("String() = %q, missing %q", s, part)
		}
	}
}

// TestLoadBalancersWithoutOrWithSeveralPortMappings: a failed create can
// leave a load balancer without port mappings (kubernetes/kubernetes#141488),
// on a frontend of its own or on one a working load balancer serves; it
// matches no packet, and the node's other load balancers work on. Another
// agent's with several port mappings is a rule for each. Before, either
// made NewCluster fail, and with it every trace on the node (hnsproxy-diag
// trace, hnssim trace).
func TestLoadBalancersWithoutOrWithSeveralPortMappings(t *testing.T) {
	a, b := l2bridgeHNS()
	twoPorts := a.lb(lbSpec{vip: "10.96.0.98", ext: 80, int: 8080, backends: []string{podA1}})
	a.snap.LoadBalancers[len(a.snap.LoadBalancers)-1].PortMappings = append(a.snap.LoadBalancers[len(a.snap.LoadBalancers)-1].PortMappings,
		hnslb.PortMapping{Protocol: hnslb.ProtocolTCP, ExternalPort: 81, InternalPort: 8081})
	var portless []string
	for _, vip := range []string{"10.96.0.99", "10.96.0.20"} {
		portless = append(portless, a.lb(lbSpec{vip: vip, ext: 80, backends: []string{podA1}}))
		a.snap.LoadBalancers[len(a.snap.LoadBalancers)-1].PortMappings = nil
	}
	c := mustCluster(t, a.asNode(ipA), b.asNode(ipB))
	for _, tc := range []struct {
		dst, backend, lb string
	}{
		{"10.96.0.20:80", podB1 + ":8080", ""}, // the working one on the leftover's frontend
		{"10.96.0.98:80", podA1 + ":8080", twoPorts},
		{"10.96.0.98:81", podA1 + ":8081", twoPorts},
	} {
		v, err := c.Trace(tcp(podA2+":40000", tc.dst), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if v.Outcome != DeliveredToPod || v.Backend != ap(tc.backend) || tc.lb != "" && v.LoadBalancerID != tc.lb {
			t.Errorf("%s: %s, want delivered to %s by %q", tc.dst, v, tc.backend, tc.lb)
		}
	}
	v, err := c.Trace(tcp(podA2+":40000", "10.96.0.99:80"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if v.LoadBalancerID != "" || v.Outcome == DeliveredToPod {
		t.Errorf("to the portless leftover's frontend: %s, want no load balancer to match (%v)", v, portless)
	}
}
