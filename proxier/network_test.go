package proxier

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"

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

	again := n.replaceNetwork(true)
	n.hns.ResetCounters()
	n.wantRunEndedForNetwork(again)
	c := n.hns.Counters()
	if writes := c.Count(sim.OpCreateLoadBalancer) + c.Count(sim.OpDeleteLoadBalancer) + c.Count(sim.OpCreateEndpoint) + c.Count(sim.OpDeleteEndpoint); writes != 0 {
		t.Errorf("%d HNS writes after the network was replaced; want none: %v", writes, c.Calls)
	}
}

// TestRunEndsWhenTheNetworkGoesBeforeItsStart: the network replaced (or
// deleted) after hnsproxy read it and before the reconciler's start listed
// it, on an HNS whose listing of a network gone answers "not found" (each
// modelled code): Run ends as when a Sync meets the change, with the
// network reported and the Node's Warning, not as a failed start; and on
// an HNS whose listing answers an empty list, the first Sync meets it.
func TestRunEndsWhenTheNetworkGoesBeforeItsStart(t *testing.T) {
	for _, listing := range append([]hnslb.ErrorCode{0}, sim.MissingNetworkCodes()...) {
		for _, again := range []bool{true, false} {
			t.Run(fmt.Sprintf("listing 0x%x/again=%v", uint32(listing), again), func(t *testing.T) {
				n := newTestNodeVariants(t, sim.ProfileWS2022, sim.ErrorVariants{MissingNetworkListing: listing}, "10.244.1.5")
				n.checkNetwork = true
				nowID := n.replaceNetwork(again)
				n.apply(service("web", "10.96.0.10"), slice("web", endpoint{"10.244.1.5", nodeName}, endpoint{"10.244.2.6", "win-2"}))
				n.start()
				n.wantRunEndedForNetwork(nowID)
			})
		}
	}
}

// wantRunEndedForNetwork checks that Run ends within 30 s reporting its
// network gone (nowID "") or replaced by nowID, with the Node's Warning.
func (n *testNode) wantRunEndedForNetwork(nowID string) {
	n.t.Helper()
	var err error
	select {
	case err = <-n.done:
		n.cancel()
		n.cancel = nil
	case <-time.After(30 * time.Second):
		n.t.Fatal("Run goes on 30 s after its network went")
	}
	n.wantEndedForNetwork(err, nowID)
}

// wantEndedForNetwork checks that Run's error err reports its network
// gone (nowID "") or replaced by nowID, with the Node's Warning.
func (n *testNode) wantEndedForNetwork(err error, nowID string) {
	n.t.Helper()
	var changed *reconciler.NetworkChangedError
	if !errors.As(err, &changed) || changed.WasID != n.networkID || !strings.EqualFold(changed.NowID, nowID) {
		n.t.Fatalf("Run ended with %v; want the network reported gone or replaced by %q", err, nowID)
	}
	if !drainUntil(n.recorder.Events, ReasonNetworkChanged) {
		n.t.Errorf("no %s event on the Node", ReasonNetworkChanged)
	}
}

// replaceNetwork deletes the node's network and, with again, makes one of
// its name, whose ID it returns ("" without).
func (n *testNode) replaceNetwork(again bool) string {
	n.t.Helper()
	id, err := n.hns.ReplaceNetwork(context.Background(), n.networkID, again)
	if err != nil {
		n.t.Fatal(err)
	}
	return id
}

// TestANetworkChangeMetTwiceIsOneWarningAndTheFirstStop: the Sync and a
// drift repair's listing, which run side by side, may both meet the
// network change before Run ends. The Node gets one HNSNetworkChanged
// Warning, and Run ends with what was met first, not the later report.
func TestANetworkChangeMetTwiceIsOneWarningAndTheFirstStop(t *testing.T) {
	nodes := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	if err := nodes.Add(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName}}); err != nil {
		t.Fatal(err)
	}
	recorder := events.NewFakeRecorder(10)
	stops := 0
	p := &Proxier{
		opts:    Options{NodeName: nodeName, Recorder: recorder},
		nodes:   corelisters.NewNodeLister(nodes),
		stopRun: func(error) { stops++ },
	}
	ctx := context.Background()
	p.noteNetworkChanged(ctx, &reconciler.NetworkChangedError{Name: "cbr0", WasID: "old", NowID: "new"})
	p.noteNetworkChanged(ctx, fmt.Errorf("repair: %w", &reconciler.NetworkChangedError{Name: "cbr0", WasID: "old"}))

	warnings := 0
	for len(recorder.Events) > 0 {
		if strings.Contains(<-recorder.Events, ReasonNetworkChanged) {
			warnings++
		}
	}
	if warnings != 1 || stops != 1 {
		t.Errorf("%d %s Warnings and %d stops, want one each", warnings, ReasonNetworkChanged, stops)
	}
	var changed *reconciler.NetworkChangedError
	if !errors.As(p.stopErr, &changed) || changed.NowID != "new" {
		t.Errorf("Run ends with %v, want the replacement met first", p.stopErr)
	}
}
