package proxier

import (
	"context"
	"testing"

	"github.com/hnsproxy/hnsproxy/sim"
)

// A Service created while the drift repair lists HNS is programmed before
// the repair ends: the repair runs beside the sync loop, and the reconciler
// lists without its lock. The drift that repair found is repaired after.
func TestChangeIsProgrammedWhileRepairLists(t *testing.T) {
	n := newTestNode(t, "ws2022", "10.244.1.5", "10.244.1.6")
	n.start()
	n.apply(service("web", "10.96.0.10"), slice("web", endpoint{"10.244.1.5", nodeName}))
	n.eventually("load balancer", func() bool { return len(n.lbs()) == 1 })
	n.settle()
	if err := n.hns.DeleteLoadBalancerOutOfBand(n.hns.Snapshot().LoadBalancers[0].ID); err != nil {
		t.Fatal(err)
	}

	n.hns.SetFaults(sim.Faults{Hang: []sim.Op{sim.OpListLoadBalancers}})
	n.repairNow()
	if err := n.hns.WaitHeld(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	n.apply(service("api", "10.96.0.20"), slice("api", endpoint{"10.244.1.6", nodeName}))
	n.eventually("the new Service programmed while the repair lists", func() bool {
		for _, lb := range n.lbs() {
			if lb.Frontend == "10.96.0.20" {
				return true
			}
		}
		return false
	})
	if held := n.hns.Held(); held != 1 {
		t.Fatalf("%d calls held: the repair's listing should still hang", held)
	}
	n.hns.SetFaults(sim.Faults{})
	n.eventually("the drifted load balancer restored", func() bool { return len(n.lbs()) == 2 })
	n.settle()
}
