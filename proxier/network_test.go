package proxier

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/reconciler"
	"github.com/hnsproxy/hnsproxy/sim"
)

// TestRunEndsWhenTheNetworkIsReplaced: the drift repair finds the network
// replaced (nothing else reads it here: no overlay routes); Run ends with
// the reconciler's NetworkChangedError and a Warning on the Node, and has
// written nothing to HNS on the way.
func TestRunEndsWhenTheNetworkIsReplaced(t *testing.T) {
	n := newTestNode(t, sim.ProfileWS2022, "10.244.1.5")
	n.repairPeriod, n.checkNetwork = 200*time.Millisecond, true
	n.start()
	n.apply(service("web", "10.96.0.10"), slice("web", endpoint{"10.244.1.5", nodeName}, endpoint{"10.244.2.6", "win-2"}))
	n.eventually("web's load balancer", func() bool { return len(n.lbs()) == 1 })

	ctx := context.Background()
	old, err := n.hns.GetNetworkByID(ctx, n.networkID)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.hns.DeleteNetwork(ctx, n.networkID); err != nil {
		t.Fatal(err)
	}
	again, err := n.hns.CreateNetwork(ctx, &hnslb.Network{Name: old.Name, Type: old.Type, Ipams: old.Ipams})
	if err != nil {
		t.Fatal(err)
	}
	n.hns.ResetCounters()
	select {
	case err = <-n.done:
		n.cancel()
		n.cancel = nil
	case <-time.After(30 * time.Second):
		t.Fatal("Run goes on 30 s after its network was replaced")
	}
	var changed *reconciler.NetworkChangedError
	if !errors.As(err, &changed) || changed.WasID != n.networkID || changed.NowID != again.ID {
		t.Fatalf("Run ended with %v; want the network reported replaced by %s", err, again.ID)
	}
	if !drainUntil(n.recorder.Events, ReasonNetworkChanged) {
		t.Errorf("no %s event on the Node", ReasonNetworkChanged)
	}
	c := n.hns.Counters()
	if writes := c.Count(sim.OpCreateLoadBalancer) + c.Count(sim.OpDeleteLoadBalancer) + c.Count(sim.OpCreateEndpoint) + c.Count(sim.OpDeleteEndpoint); writes != 0 {
		t.Errorf("%d HNS writes after the network was replaced; want none: %v", writes, c.Calls)
	}
}
