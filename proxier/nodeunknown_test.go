package proxier

import (
	"net/netip"
	"slices"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/vfp"
)

// TestSliceWithoutNodeNamesUsesThePodsLocalEndpoint: a Service whose
// EndpointSlice names no node for its endpoints (nodeName unset, or "":
// slices mirrored from hand-made Endpoints, third-party controllers), two
// pods on two nodes. Each node serves its own pod through the pod's local
// endpoint and the other's through a remote endpoint, as winkernel does
// (it reuses the HNS endpoint at the address before it creates a remote
// one); no node makes a remote endpoint beside its own pod's, which on
// Windows Server 2019 and 2022 would send the pod's traffic to another
// node (kubernetes/kubernetes#138000) and which Windows Server 2025 refuses.
func TestSliceWithoutNodeNamesUsesThePodsLocalEndpoint(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2022, sim.ProfileWS2025} {
		for _, mode := range []desired.NetworkMode{desired.L2Bridge, desired.Overlay} {
			t.Run(profile+"/"+string(mode), func(t *testing.T) {
				c := newSimCluster(t, clusterSpec{profile: profile, mode: mode, nodes: threeNodes()})
				unset := readyEP(pod1a, "")
				unset.NodeName = nil
				c.apply(service("nodeless", "10.96.0.50"),
					sliceOf("nodeless", "nodeless-1", discoveryv1.AddressTypeIPv4, unset, readyEP(pod2a, "")))
				c.converge()
				for _, tc := range []struct {
					node   string
					remote []string
				}{
					{"win-1", []string{pod2a}},
					{"win-2", []string{pod1a}},
					{"win-3", []string{pod1a, pod2a}},
				} {
					n := c.node(tc.node)
					var backends []string
					for _, l := range n.lbs() {
						if l.Frontend == "10.96.0.50" {
							backends = l.Backends
						}
					}
					if want := []string{pod1a, pod2a}; !slices.Equal(backends, want) {
						t.Errorf("%s: load balancer backends %v, want %v", tc.node, backends, want)
					}
					var remote []string
					for _, ip := range n.remoteEndpointIPs() {
						if ip == pod1a || ip == pod2a {
							remote = append(remote, ip)
						}
					}
					if !slices.Equal(remote, tc.remote) {
						t.Errorf("%s: remote endpoints at the pods' addresses %v, want %v", tc.node, remote, tc.remote)
					}
				}
				// Traffic from a pod of each node reaches both pods.
				vc := c.vfp()
				for _, from := range []string{pod1b, pod2b} {
					seen := podsReached(t, vc, from, "10.96.0.50:80")
					if !seen[pod1a] || !seen[pod2a] {
						t.Errorf("from %s the flows reached %v, want both pods", from, seen)
					}
				}
				if mode == desired.Overlay {
					// The other node's pod: the remote subnets name its node.
					if pa := c.node("win-1").remoteEndpointPA(pod2a); pa != ip2 {
						t.Errorf("win-1: provider address of %s = %s, want %s", pod2a, pa, ip2)
					}
				}
			})
		}
	}
}

// podsReached are the pods 64 TCP flows from the pod at from to dst reach;
// each must be delivered to a pod.
func podsReached(t *testing.T, vc *vfp.Cluster, from, dst string) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	for port := uint16(40000); port < 40064; port++ {
		pkt := vfp.Packet{Src: netip.AddrPortFrom(netip.MustParseAddr(from), port),
			Dst: netip.MustParseAddrPort(dst), Protocol: hnslb.ProtocolTCP}
		v, err := vc.Trace(pkt, vfp.Options{})
		if err != nil {
			t.Fatalf("Trace(%s): %v", pkt, err)
		}
		if v.Outcome != vfp.DeliveredToPod {
			t.Fatalf("%s: %s, want delivered to a pod\n%s", pkt, v.Outcome, v)
		}
		seen[v.Backend.Addr().String()] = true
	}
	return seen
}
