package proxier

import (
	"context"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/hnsproxy/hnsproxy/proxier/desired"
	"github.com/hnsproxy/hnsproxy/sim"
)

// TestRestartKeepsLoadBalancersWaitingForAPodsEndpoint: a load balancer
// that leaves out a local backend no HNS endpoint serves (a ready pod of
// this node the CNI has not wired, or an address of this node's pod
// subnet a hand-made Endpoints object still lists after its pod died) is
// adopted by a restart as it stands: the restart writes nothing. Before,
// Start adopted only load balancers with every backend resolved, and on
// builds without modify (Windows Server 2019 and 2022) each restart
// deleted and re-created such a load balancer, identical, cutting its
// frontend meanwhile (found by TestRandomProxierHistoriesConverge).
func TestRestartKeepsLoadBalancersWaitingForAPodsEndpoint(t *testing.T) {
	const wired, unwired, remote = "10.244.1.11", "10.244.1.10", "10.244.2.20"
	unplaced := readyEP(unwired, "")
	unplaced.NodeName = nil
	for _, profile := range []string{sim.ProfileWS2019, sim.ProfileWS2022, sim.ProfileWS2025} {
		for name, left := range map[string]discoveryv1.Endpoint{"pod not wired": readyEP(unwired, nodeName), "address on no node": unplaced} {
			t.Run(profile+"/"+name, func(t *testing.T) {
				n := newTestNode(t, profile, wired)
				nw, err := n.hns.GetNetworkByID(context.Background(), n.networkID)
				if err != nil {
					t.Fatal(err)
				}
				n.config.NetworkSubnets = desired.NetworkSubnetsOf(nw)
				n.apply(service("web", "10.96.0.10"), sliceOf("web", "web-1", discoveryv1.AddressTypeIPv4,
					left, readyEP(wired, nodeName), readyEP(remote, "win-2")))
				n.start()
				n.settle()
				before := n.lbs()
				if len(before) != 1 || len(before[0].Backends) != 2 {
					t.Fatalf("before the restart: %+v, want one load balancer over %s and %s", before, wired, remote)
				}
				n.stop()
				n.hns.ResetCounters()
				n.start()
				n.settle()
				if c := n.hns.Counters(); c.Writes() != 0 {
					t.Errorf("the restart wrote %v", c.Calls)
				}
			})
		}
	}
}
