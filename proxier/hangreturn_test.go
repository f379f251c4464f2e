package proxier

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/reconciler"
	"github.com/hnsproxy/hnsproxy/sim"
)

// A load balancer whose create hung past its deadline is programmed as
// soon as the abandoned call returns: the proxier syncs on the return,
// though its retry, the periodic sync and the drift repair are an hour
// away.
func TestSyncsWhenAnAbandonedCallReturns(t *testing.T) {
	n := newTestNode(t, "ws2022", "10.244.1.5")
	n.callTimeout, n.retryBase = 50*time.Millisecond, time.Hour
	n.start()
	n.hns.SetFaults(sim.Faults{HangReply: []sim.Op{sim.OpCreateLoadBalancer}})
	n.apply(service("web", "10.96.0.10"), slice("web", endpoint{"10.244.1.5", nodeName}))
	if err := n.hns.WaitHeld(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	n.eventually("the create abandoned at its deadline", func() bool {
		st := n.rec.StatusSnapshot().LoadBalancers
		return len(st) == 1 && strings.Contains(st[0].LastError, "abandoned")
	})
	n.hns.SetFaults(sim.Faults{})
	n.eventually("the load balancer the late create made, adopted", func() bool {
		st := n.rec.StatusSnapshot().LoadBalancers
		held := n.hns.Snapshot().LoadBalancers
		return len(st) == 1 && st[0].State == reconciler.StateDone && len(held) == 1 && held[0].ID == st[0].RealizedID
	})
}
