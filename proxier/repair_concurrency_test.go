package proxier

import (
	"context"
	"strings"
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

// TestListingIsLoggedFromStartToEndAtV2: at --v=2 a drift repair's listing
// says when it starts and, only once HNS has answered it, that it ended;
// the real-process bench reads these lines to price no change with a
// listing's CPU. (At --v=0 they stay out: TestSteadyNodeLogsNothingAtDefaultVerbosity.)
func TestListingIsLoggedFromStartToEndAtV2(t *testing.T) {
	n := newTestNode(t, "ws2022", "10.244.1.5")
	log := n.loggingAt(2)
	n.start()
	n.apply(service("web", "10.96.0.10"), slice("web", endpoint{"10.244.1.5", nodeName}))
	n.eventually("load balancer", func() bool { return len(n.lbs()) == 1 })
	n.settle()
	before := len(log.String())

	n.hns.SetFaults(sim.Faults{Hang: []sim.Op{sim.OpListLoadBalancers}})
	n.repairNow()
	if err := n.hns.WaitHeld(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	during := log.String()[before:]
	if !strings.Contains(during, `"HNS listing started" listing="Drift repair"`) {
		t.Fatalf("no start line while the repair lists:\n%s", during)
	}
	if strings.Contains(during, "HNS listing ended") {
		t.Fatalf("an end line while HNS has not answered the listing:\n%s", during)
	}
	n.hns.SetFaults(sim.Faults{})
	n.eventually("the end line", func() bool {
		return strings.Contains(log.String()[before:], `"HNS listing ended" listing="Drift repair" failed=false seconds=`)
	})
	got := log.String()[before:]
	if strings.Index(got, "HNS listing ended") < strings.Index(got, "HNS listing started") {
		t.Fatalf("the end line before the start line:\n%s", got)
	}
}
