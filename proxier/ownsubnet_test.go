package proxier

import (
	"slices"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/hnsproxy/hnsproxy/proxier/desired"
	"github.com/hnsproxy/hnsproxy/sim"
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
				if !podsReached(t, c.vfp(), pod1b, "10.96.0.51:80")[stale] {
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
