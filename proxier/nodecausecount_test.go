package proxier

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/hnsproxy/hnsproxy/proxier/desired"
	"github.com/hnsproxy/hnsproxy/sim"
)

// TestNodeCausesCountTheServicesTheyAffectWhileTheyLast: the Node's
// event of a node cause is raised once and expires with the apiserver's
// event TTL; the count of Services each kind of cause affects is what
// lasts. A Service with two causes of one kind counts once, a kind is
// counted at every sync while it lasts (not only when raised), and once
// its last Service is fixed or gone it is counted at 0, so a gauge set
// from it falls instead of keeping its last value.
func TestNodeCausesCountTheServicesTheyAffectWhileTheyLast(t *testing.T) {
	c := newNodeCauses()
	web, api := types.NamespacedName{Namespace: "shop", Name: "web"}, types.NamespacedName{Namespace: "shop", Name: "api"}
	family := NodeCauseKind{Reason: desired.ReasonIPFamilyUnsupported, Warning: true}
	affinity := NodeCauseKind{Reason: desired.ReasonSessionAffinityUnsupported, Warning: true}
	c.set(web, []desired.Problem{
		{Reason: family.Reason, Warning: true, NodeCause: "IPv6 cluster IPs are not served on this node"},
		{Reason: family.Reason, Warning: true, NodeCause: "node ports are not served in IPv6 on this node"},
		{Reason: affinity.Reason, Warning: true, NodeCause: "HNS 9.2 does not support session affinity"},
		{Reason: desired.ReasonUnsupportedProtocol, Warning: true, Message: "the Service's own"},
	})
	c.set(api, []desired.Problem{{Reason: family.Reason, Warning: true, NodeCause: "IPv6 cluster IPs are not served on this node"}})
	check := func(when string, want map[NodeCauseKind]int) {
		t.Helper()
		if got := c.servicesByKind(); !maps.Equal(got, want) {
			t.Errorf("%s: Services by kind of node cause %v, want %v", when, got, want)
		}
	}
	check("both Services affected", map[NodeCauseKind]int{family: 2, affinity: 1})
	c.due() // raised on the Node: still counted while it lasts
	check("after the Node's event", map[NodeCauseKind]int{family: 2, affinity: 1})
	c.set(web, nil)
	check("web fixed", map[NodeCauseKind]int{family: 1, affinity: 0})
	c.forget(api)
	check("api gone", map[NodeCauseKind]int{family: 0, affinity: 0})
}

// TestAMissingZoneLabelIsCountedAtEverySyncUntilLabelled: the proxier
// hands the count to its observer after every sync, the periodic ones
// too, from the same record the Node's event is raised from: 30 Services
// while the Node has no zone label, 0 once it has one.
func TestAMissingZoneLabelIsCountedAtEverySyncUntilLabelled(t *testing.T) {
	n := newTestNode(t, "ws2022", "10.244.1.5")
	obs := &recordingObserver{}
	n.observer = obs
	n.setZone("")
	const services = 30
	n.startWithZoneHintedServices(services)
	hints := NodeCauseKind{Reason: desired.ReasonTopologyHintsIgnored}
	counted := func() int {
		s, _, _ := obs.last()
		got, ok := s.NodeCauseServices[hints]
		if !ok {
			return -1
		}
		return got
	}
	if got := counted(); got != services {
		t.Fatalf("the last sync counts %d Services with TopologyHintsIgnored, want %d", got, services)
	}
	n.proxier.Sync(context.Background()) // no change: the cause lasts, so does its count
	if got := counted(); got != services {
		t.Errorf("a sync after the Node's event counts %d Services, want %d", got, services)
	}
	n.setZone("zone-a")
	n.eventually("the labelled node's count at 0", func() bool { return counted() == 0 })
}

// TestAServiceDeletedAsTheZoneChangesLeavesTheNodeCauseCount: a Node
// change hnsproxy reads (here the zone) recomputes every Service from
// scratch instead of the changed ones; a Service deleted before that sync
// is in neither, and only the recompute's sweep of the Services gone takes
// it off its node causes. Left on, the Services-by-kind count keeps it
// (an alert on the gauge never clears) and the cause stays raised.
func TestAServiceDeletedAsTheZoneChangesLeavesTheNodeCauseCount(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(10000, 0))
	n := newTestNode(t, sim.ProfileWS2019, "10.244.1.5") // HNS without session affinity: a node cause
	obs := &recordingObserver{}
	n.observer = obs
	n.clock = clk
	n.minSyncPeriod = time.Hour // no sync but the ones the test steps the clock to
	n.start()
	sticky := func(s *v1.Service) { s.Spec.SessionAffinity = v1.ServiceAffinityClientIP }
	n.apply(service("web", "10.96.0.10", sticky), slice("web", endpoint{"10.244.1.5", nodeName}),
		service("api", "10.96.0.11", sticky), slice("api", endpoint{"10.244.1.5", nodeName}))
	affinity := NodeCauseKind{Reason: desired.ReasonSessionAffinityUnsupported, Warning: true}
	counted := func() int {
		s, _, _ := obs.last()
		return s.NodeCauseServices[affinity]
	}
	n.eventually("both Services counted with the node cause", func() bool {
		clk.Step(n.minSyncPeriod)
		return len(n.lbs()) == 2 && counted() == 2
	})

	obs.mu.Lock()
	before := len(obs.syncs)
	obs.mu.Unlock()
	ctx := context.Background()
	if err := n.client.CoreV1().Services("default").Delete(ctx, "api", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	n.setZone("zone-b")
	n.eventually("the proxier's caches holding both changes", func() bool {
		cached, err := n.proxier.nodes.Get(nodeName)
		return err == nil && cached.Labels[v1.LabelTopologyZone] == "zone-b" && n.cachesCaughtUp()
	})
	n.eventually("the full recompute without api", func() bool {
		clk.Step(n.minSyncPeriod)
		obs.mu.Lock()
		defer obs.mu.Unlock()
		// Any sync since the delete: a later one (a retry) may follow it.
		return slices.ContainsFunc(obs.syncs[before:], func(s SyncStats) bool { return s.Full }) && len(n.lbs()) == 1
	})
	if got := counted(); got != 1 {
		t.Errorf("after api's delete, the recompute counts %d Services with %s, want 1 (web)", got, affinity.Reason)
	}
	n.proxier.mu.Lock()
	_, kept := n.proxier.nodeCauses.of[types.NamespacedName{Namespace: "default", Name: "api"}]
	n.proxier.mu.Unlock()
	if kept {
		t.Error("the deleted api keeps its node causes")
	}
}
