package proxier

import (
	"fmt"
	"slices"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
)

// TestLearnedBackendCapFeedsTheDesiredState: the OS build promises 1024
// backends, HNS enforces 64 (ws2022-cap64). The reconciler learns 64 from
// HNS's refusal; the proxier lowers the desired state's cap, which keeps its
// stable subset (local endpoints first), and says so on the Node.
func TestLearnedBackendCapFeedsTheDesiredState(t *testing.T) {
	n, locals := startBigServiceOnCappedNode(t)
	n.eventually("the desired subset of 64 with every local endpoint", func() bool {
		lbs := n.lbs()
		if len(lbs) != 1 || len(lbs[0].Backends) != hnslb.MaxBackendsLegacy {
			return false
		}
		for _, ip := range locals {
			if !slices.Contains(lbs[0].Backends, ip) {
				return false
			}
		}
		return true
	})
	// The retry at 64 already holds every local endpoint (they sort
	// first); the Node event says the cap itself was lowered.
	n.eventually("a "+ReasonBackendCapLowered+" event on the Node", func() bool {
		return drainUntil(n.recorder.Events, ReasonBackendCapLowered)
	})
	// And the desired state now computes 64: the Service reports its truncation.
	n.eventually("a BackendsTruncated problem", func() bool { return drainUntil(n.recorder.Events, "BackendsTruncated") })
}

// startBigServiceOnCappedNode starts hnsproxy believing in 1024 backends
// on a node whose HNS enforces 64 (ws2022-cap64), with a Service of 10
// local endpoints (returned) and 90 on another node.
func startBigServiceOnCappedNode(t *testing.T) (*testNode, []string) {
	t.Helper()
	var locals []string
	var eps []endpoint
	for i := range 10 {
		ip := fmt.Sprintf("10.244.1.%d", 10+i)
		locals = append(locals, ip)
		eps = append(eps, endpoint{ip, nodeName})
	}
	for i := range 90 {
		eps = append(eps, endpoint{fmt.Sprintf("10.244.2.%d", 10+i), "win-2"})
	}
	n := newTestNode(t, sim.ProfileWS2022Cap64, locals...)
	n.believedCap = hnslb.MaxBackendsModern
	n.start()
	n.apply(service("big", "10.96.0.50"), slice("big", eps...))
	return n, locals
}
