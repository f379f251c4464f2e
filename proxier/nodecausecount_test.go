package proxier

import (
	"context"
	"maps"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/hnsproxy/hnsproxy/proxier/desired"
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
