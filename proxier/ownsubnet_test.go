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

// TestUnplacedAddressOfThisNodeLetsTheCNIWireTheNextPod: a slice names no
// node for an address of win-1's pod subnet that no pod holds (a
// hand-written Endpoints object left behind by a pod that died). win-1
// makes no remote endpoint for it, so the CNI can wire the next pod IPAM
// gives the address, which Windows Server 2025 refuses beside a remote
// endpoint, and that pod is served through its local endpoint once wired,
// not sent to another node (kubernetes/kubernetes#138000 on 2019 and
// 2022): from the sync that finds its endpoint, here its own Service's
// (else the next listing of the network, a drift repair). The other nodes
// still reach the address through a remote endpoint.
func TestUnplacedAddressOfThisNodeLetsTheCNIWireTheNextPod(t *testing.T) {
	const stale = "10.244.1.14"
	for _, profile := range []string{sim.ProfileWS2022, sim.ProfileWS2025} {
		for _, mode := range []desired.NetworkMode{desired.L2Bridge, desired.Overlay} {
			t.Run(profile+"/"+string(mode), func(t *testing.T) {
				c := newSimCluster(t, clusterSpec{profile: profile, mode: mode, nodes: threeNodes()})
				unplaced := readyEP(stale, "")
				unplaced.NodeName = nil
				c.apply(service("handmade", "10.96.0.51"),
					sliceOf("handmade", "handmade-1", discoveryv1.AddressTypeIPv4, unplaced, readyEP(pod2a, "")))
				c.converge()
				n := c.node("win-1")
				if slices.Contains(n.remoteEndpointIPs(), stale) {
					t.Errorf("win-1 made a remote endpoint at its own pod address %s", stale)
				}
				if !slices.Contains(c.node("win-3").remoteEndpointIPs(), stale) {
					t.Errorf("win-3: no remote endpoint at %s: %v", stale, c.node("win-3").remoteEndpointIPs())
				}
				if got := handmadeBackends(n); !slices.Equal(got, []string{pod2a}) {
					t.Errorf("win-1 before the pod: backends %v, want only %s", got, pod2a)
				}
				// The CNI wires the next pod IPAM gives the address.
				n.replaceLocalEndpoint(stale)
				// Its own Service's slice places it on win-1: that sync finds
				// its endpoint, and the load balancer left waiting for the
				// address takes it.
				c.apply(service("owner", "10.96.0.52"), sliceOf("owner", "owner-1", discoveryv1.AddressTypeIPv4, readyEP(stale, "win-1")))
				c.converge()
				if got := handmadeBackends(n); !slices.Equal(got, []string{stale, pod2a}) {
					t.Errorf("win-1 once the pod is wired: backends %v, want %s and %s", got, stale, pod2a)
				}
				if slices.Contains(n.remoteEndpointIPs(), stale) {
					t.Errorf("win-1: a remote endpoint at %s beside the pod's", stale)
				}
				pkt := vfp.Packet{Src: netip.MustParseAddrPort(pod1b + ":40000"), Dst: netip.MustParseAddrPort("10.96.0.51:80"), Protocol: hnslb.ProtocolTCP}
				seen := false
				vc := c.vfp()
				for port := uint16(40000); port < 40064 && !seen; port++ {
					pkt.Src = netip.AddrPortFrom(pkt.Src.Addr(), port)
					v, err := vc.Trace(pkt, vfp.Options{})
					if err != nil {
						t.Fatalf("Trace(%s): %v", pkt, err)
					}
					if v.Outcome != vfp.DeliveredToPod {
						t.Fatalf("%s: %s, want delivered to a pod\n%s", pkt, v.Outcome, v)
					}
					seen = v.Backend.Addr().String() == stale
				}
				if !seen {
					t.Errorf("no flow from %s reached the new pod at %s", pod1b, stale)
				}
			})
		}
	}
}

// handmadeBackends are the backends of win-1's load balancer for 10.96.0.51.
func handmadeBackends(n *testNode) []string {
	for _, l := range n.lbs() {
		if l.Frontend == "10.96.0.51" {
			return l.Backends
		}
	}
	return nil
}
