package proxier

import (
	"slices"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
)

// cappedNode is TestLearnedBackendCapFeedsTheDesiredState's node once it
// has learned the cap and HNS holds the desired subset of 64.
func cappedNode(t *testing.T) (*testNode, lbView) {
	t.Helper()
	n, _ := startBigServiceOnCappedNode(t)
	n.eventually("the cap learned", func() bool { return drainUntil(n.recorder.Events, ReasonBackendCapLowered) })
	n.settle()
	lbs := n.lbs()
	if len(lbs) != 1 || len(lbs[0].Backends) != hnslb.MaxBackendsLegacy {
		t.Fatalf("load balancers %+v, want one of 64 backends", lbs)
	}
	return n, lbs[0]
}

// TestLearnedBackendCapSurvivesARestart: on a node whose HNS enforces 64
// where its build promises 1024, a restart of hnsproxy keeps the cap it
// learned (the state file holds it for this build): the adopted load
// balancer is the desired subset already, so the restart writes nothing,
// is refused nothing, cuts no frontend and raises no second event.
func TestLearnedBackendCapSurvivesARestart(t *testing.T) {
	n, before := cappedNode(t)
	id := n.hnsLBIDs()
	n.stop()
	n.hns.ResetCounters()
	n.start()
	n.settle()
	c := n.hns.Counters()
	if w := c.Writes(); w != 0 {
		t.Errorf("the restart made %d HNS writes (%v), want 0", w, c.Calls)
	}
	if refused := c.CountResult(sim.OpCreateLoadBalancer, "InvalidParameter"); refused != 0 {
		t.Errorf("the restart had %d creates refused, want 0", refused)
	}
	if after := n.lbs(); len(after) != 1 || !slices.Equal(after[0].Backends, before.Backends) {
		t.Errorf("after the restart %+v, want %v", after, before.Backends)
	}
	if got := n.hnsLBIDs(); !slices.Equal(got, id) {
		t.Errorf("load balancer IDs %v after the restart, want %v (adopted, not re-created)", got, id)
	}
	if drainUntil(n.recorder.Events, ReasonBackendCapLowered) {
		t.Errorf("a second %s event at the restart; the cap did not change", ReasonBackendCapLowered)
	}
}

// TestLearnedBackendCapSurvivesAReboot: a reboot empties HNS of what
// hnsproxy made; the restarted hnsproxy creates the desired subset of 64
// at once, without a create HNS refuses first.
func TestLearnedBackendCapSurvivesAReboot(t *testing.T) {
	n, before := cappedNode(t)
	n.stop()
	if err := n.hns.RestartLosing(0, sim.RestartLosesRemoteEndpoints); err != nil {
		t.Fatal(err)
	}
	n.hns.ResetCounters()
	n.start()
	n.settle()
	c := n.hns.Counters()
	if refused := c.CountResult(sim.OpCreateLoadBalancer, "InvalidParameter"); refused != 0 {
		t.Errorf("%d creates refused after the reboot, want 0", refused)
	}
	if made := c.CountResult(sim.OpCreateLoadBalancer, "ok"); made != 1 {
		t.Errorf("%d load balancers created after the reboot, want 1", made)
	}
	if after := n.lbs(); len(after) != 1 || !slices.Equal(after[0].Backends, before.Backends) {
		t.Errorf("after the reboot %+v, want %v", after, before.Backends)
	}
}

// hnsLBIDs are the IDs of HNS's load balancers, sorted.
func (n *testNode) hnsLBIDs() []string {
	var ids []string
	for _, lb := range n.hns.Snapshot().LoadBalancers {
		ids = append(ids, lb.ID)
	}
	slices.Sort(ids)
	return ids
}

// TestLearnedBackendCapHeldThroughAnHNSRestart: an HNS restart that drops
// the load balancers, hnsproxy running on: the drift repair that finds
// them gone (here at once) has the next sync create the desired subset of 64 again, at once, with no create of more
// that HNS refuses and no second event.
func TestLearnedBackendCapHeldThroughAnHNSRestart(t *testing.T) {
	n, before := cappedNode(t)
	n.hns.ResetCounters()
	if err := n.hns.RestartLosing(0, sim.RestartLosesLoadBalancers); err != nil {
		t.Fatal(err)
	}
	n.repairNow()
	n.eventually("the load balancer back", func() bool {
		lbs := n.lbs()
		return len(lbs) == 1 && slices.Equal(lbs[0].Backends, before.Backends)
	})
	n.settle()
	c := n.hns.Counters()
	if refused, made := c.CountResult(sim.OpCreateLoadBalancer, "InvalidParameter"), c.CountResult(sim.OpCreateLoadBalancer, "ok"); refused != 0 || made != 1 {
		t.Errorf("creates %v after the HNS restart, want 1 and none refused", c.Calls[sim.OpCreateLoadBalancer])
	}
	if drainUntil(n.recorder.Events, ReasonBackendCapLowered) {
		t.Errorf("a second %s event after the HNS restart", ReasonBackendCapLowered)
	}
}
