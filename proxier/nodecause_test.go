package proxier

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"

	hnsevents "github.com/hnsproxy/hnsproxy/events"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
)

// startAPIEvents starts the events.k8s.io broadcaster on the node's fake
// API and returns hnsevents' recorder, as cmd/hnsproxy wires them.
func (n *testNode) startAPIEvents() events.EventRecorder {
	b := hnsevents.NewBroadcaster(n.client)
	ctx, cancel := context.WithCancel(context.Background())
	if err := b.StartRecordingToSinkWithContext(ctx); err != nil {
		n.t.Fatal(err)
	}
	n.t.Cleanup(func() { cancel(); b.Shutdown() })
	return hnsevents.NewReporter(b, n.name).Recorder()
}

// apiEventsOf returns the Event objects of reason written to the API once
// done holds of them, or as they are after the wait gives up, for the
// caller's checks to say what is missing. No sentinel event can tell that
// earlier ones were written: client-go's events.k8s.io broadcaster writes
// each event from a goroutine of its own, so a later one may land first.
func (n *testNode) apiEventsOf(reason string, done func(onNode, onServices []eventsv1.Event) bool) (onNode, onServices []eventsv1.Event) {
	n.t.Helper()
	_ = wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		list, err := n.client.EventsV1().Events("").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		onNode, onServices = nil, nil
		for _, e := range list.Items {
			switch {
			case e.Reason != reason:
			case e.Regarding.Kind == "Node":
				onNode = append(onNode, e)
			default:
				onServices = append(onServices, e)
			}
		}
		return done(onNode, onServices), nil
	})
	return onNode, onServices
}

// setZone labels the node with zone, or removes the label when zone is "".
func (n *testNode) setZone(zone string) {
	n.t.Helper()
	ctx := context.Background()
	node, err := n.client.CoreV1().Nodes().Get(ctx, n.name, metav1.GetOptions{})
	if err != nil {
		n.t.Fatal(err)
	}
	if zone == "" {
		delete(node.Labels, v1.LabelTopologyZone)
	} else {
		node.Labels[v1.LabelTopologyZone] = zone
	}
	if _, err := n.client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
		n.t.Fatal(err)
	}
}

// zoneHinted gives each of the slice's endpoints a hint for zone-a or zone-b.
func zoneHinted(s *discoveryv1.EndpointSlice) *discoveryv1.EndpointSlice {
	for i := range s.Endpoints {
		zone := []string{"zone-a", "zone-b"}[i%2]
		s.Endpoints[i].Hints = &discoveryv1.EndpointHints{ForZones: []discoveryv1.ForZone{{Name: zone}}}
	}
	return s
}

// startWithZoneHintedServices applies services Services whose endpoints
// all have zone hints, one of them on this node, starts the proxier and
// waits for their load balancers. They are in the API before the start, as
// at a daemon's start in a running cluster: the start computes them all
// before the first sync.
func (n *testNode) startWithZoneHintedServices(services int) {
	n.t.Helper()
	for i := range services {
		name := fmt.Sprintf("web-%02d", i)
		n.apply(service(name, fmt.Sprintf("10.96.0.%d", 10+i)),
			zoneHinted(slice(name, endpoint{"10.244.1.5", nodeName}, endpoint{"10.244.2.5", "other"})))
	}
	n.start()
	n.eventually("every Service's load balancer", func() bool { return len(n.lbs()) == services })
	n.settle()
}

// TestAMissingZoneLabelIsOneEventOnTheNode: a node without a
// topology.kubernetes.io/zone label ignores the zone hints of every
// Service that has them. As the daemon wires its recorder, that writes one
// TopologyHintsIgnored Event object, on the Node, naming how many Services
// it affects and a few of them, not one per Service (which client-go's
// broadcaster would write one by one: it folds only one object's repeats).
// Labelled, the cause ends and nothing is raised; unlabelled again, it is
// raised on the Node again.
func TestAMissingZoneLabelIsOneEventOnTheNode(t *testing.T) {
	n := newTestNode(t, "ws2022", "10.244.1.5")
	n.apiEvents = true
	n.setZone("")
	const services = 30
	n.startWithZoneHintedServices(services)
	onNode, onServices := n.apiEventsOf(desired.ReasonTopologyHintsIgnored,
		func(onNode, _ []eventsv1.Event) bool { return len(onNode) > 0 })
	if len(onServices) != 0 {
		t.Errorf("%d TopologyHintsIgnored Event objects on Services, want none (the cause is the node); the first: %q", len(onServices), onServices[0].Note)
	}
	if len(onNode) != 1 {
		t.Fatalf("%d TopologyHintsIgnored Event objects on the Node, want 1", len(onNode))
	}
	e := onNode[0]
	for _, want := range []string{"no topology.kubernetes.io/zone label", fmt.Sprintf("affects %d Services", services), "default/web-00, default/web-01, default/web-02 and 27 more"} {
		if !strings.Contains(e.Note, want) {
			t.Errorf("the Node's event note %q does not say %q", e.Note, want)
		}
	}
	if e.Type != v1.EventTypeNormal || e.Regarding.UID != types.UID(n.name) {
		t.Errorf("the Node's event is %s regarding %+v, want Normal, regarding the Node by name with the name as UID", e.Type, e.Regarding)
	}

	causes := func() int {
		n.proxier.mu.Lock()
		defer n.proxier.mu.Unlock()
		return len(n.proxier.nodeCauses.raised)
	}
	n.setZone("zone-a")
	n.eventually("the labelled node's cause ended", func() bool { return causes() == 0 })
	n.setZone("")
	n.eventually("the cause back", func() bool { return causes() == 1 })
	n.settle()
	onNode, onServices = n.apiEventsOf(desired.ReasonTopologyHintsIgnored,
		func(onNode, _ []eventsv1.Event) bool { return timesRaised(onNode) >= 2 })
	if raised := timesRaised(onNode); raised != 2 || len(onServices) != 0 {
		t.Errorf("after the label came and went: raised %d times on the Node and %d on Services, want 2 and none", raised, len(onServices))
	}
}

// TestANodeCauseIsRaisedWhenItAppearsOrChanges walks one node cause
// through what an operator lives: Services gaining it while it is raised
// raise nothing more; one of two affected Services leaving ends nothing;
// a changed cause (another HNS version's text, say) is raised; the last
// affected Service leaving ends the cause, and its return raises it again.
func TestANodeCauseIsRaisedWhenItAppearsOrChanges(t *testing.T) {
	c := newNodeCauses()
	problem := func(cause string) []desired.Problem {
		return []desired.Problem{
			{Reason: desired.ReasonSessionAffinityUnsupported, Message: "per Service", Warning: true, NodeCause: cause},
			{Reason: desired.ReasonInvalidIP, Message: "the Service's own", Warning: true},
		}
	}
	a, b := types.NamespacedName{Namespace: "ns", Name: "a"}, types.NamespacedName{Namespace: "ns", Name: "b"}
	raised := func(when string, want int) []nodeCauseEvent {
		t.Helper()
		got := c.due()
		if len(got) != want {
			t.Fatalf("%s: %d Node events %+v, want %d", when, len(got), got, want)
		}
		return got
	}
	if own := c.set(a, problem("HNS 9.5 has no affinity")); len(own) != 1 || own[0].Reason != desired.ReasonInvalidIP {
		t.Fatalf("the Service's own problems: %+v, want the InvalidIP one alone", own)
	}
	if e := raised("the cause appears", 1)[0]; e.services != 1 || e.reason != desired.ReasonSessionAffinityUnsupported || !e.warning {
		t.Errorf("the Node event: %+v", e)
	}
	c.set(b, problem("HNS 9.5 has no affinity"))
	raised("a second Service with it", 0)
	c.forget(a)
	raised("one of the two gone", 0)
	c.set(b, problem("HNS 9.6 has no affinity"))
	if e := raised("the cause's text changed", 1)[0]; e.cause != "HNS 9.6 has no affinity" || len(e.named) != 1 || e.named[0] != b {
		t.Errorf("the changed cause's event: %+v", e)
	}
	c.set(b, nil)
	raised("the cause ended", 0)
	c.set(b, problem("HNS 9.6 has no affinity"))
	raised("the cause back", 1)
}

// reportedToTheAPI reports the node causes of problems, one Service's, to a
// fake API through the recorder the daemon wires, and returns its node.
func reportedToTheAPI(t *testing.T, problems ...desired.Problem) *testNode {
	n := &testNode{t: t, name: nodeName, client: fake.NewClientset()}
	n.apiRecorder = n.startAPIEvents()
	p := &Proxier{opts: Options{NodeName: nodeName, Recorder: n.apiRecorder}, nodeCauses: newNodeCauses()}
	p.nodeCauses.set(types.NamespacedName{Namespace: "ns", Name: "web"}, problems)
	p.reportNodeCauses()
	return n
}

// TestTwoCausesOfOneReasonAreBothWritten: two node causes of one reason
// due at once (IPv6 cluster IPs and IPv6 node ports not served) reach
// the API both, through the recorder the daemon wires: client-go's
// broadcaster folds a second event of one object and reason into a
// series of the first and keeps the first's note, so they are one event.
func TestTwoCausesOfOneReasonAreBothWritten(t *testing.T) {
	n := reportedToTheAPI(t,
		desired.Problem{Reason: desired.ReasonIPFamilyUnsupported, Warning: true, NodeCause: "IPv6 cluster IPs are not served on this node"},
		desired.Problem{Reason: desired.ReasonIPFamilyUnsupported, Warning: true, NodeCause: "node ports are not served in IPv6 on this node"})
	says := []string{"IPv6 cluster IPs", "node ports are not served"}
	onNode, _ := n.apiEventsOf(desired.ReasonIPFamilyUnsupported,
		func(onNode, _ []eventsv1.Event) bool { return len(notesMissing(onNode, says...)) == 0 })
	notesSay(t, "the API's IPFamilyUnsupported events on the Node", onNode, says...)
}

// TestNormalAndWarningCausesOfOneReasonKeepTheirTypes: a node cause that
// is Normal (IPv6 cluster IPs not served: this HNS has no IPv6) and one
// that is a Warning (IPv4 node ports not served: the Node lists no IPv4
// address) under one reason are two events, each of its own type: grouped
// into one, the Warning would be read as Normal, or the other way round.
func TestNormalAndWarningCausesOfOneReasonKeepTheirTypes(t *testing.T) {
	n := reportedToTheAPI(t,
		desired.Problem{Reason: desired.ReasonIPFamilyUnsupported, NodeCause: "IPv6 cluster IPs are not served on this node"},
		desired.Problem{Reason: desired.ReasonIPFamilyUnsupported, Warning: true, NodeCause: "node ports are not served in IPv4 on this node"})
	ofType := func(evs []eventsv1.Event, typ string) []eventsv1.Event {
		return slices.DeleteFunc(slices.Clone(evs), func(e eventsv1.Event) bool { return e.Type != typ })
	}
	onNode, _ := n.apiEventsOf(desired.ReasonIPFamilyUnsupported, func(onNode, _ []eventsv1.Event) bool {
		return len(ofType(onNode, v1.EventTypeNormal)) > 0 && len(ofType(onNode, v1.EventTypeWarning)) > 0
	})
	normal, warning := ofType(onNode, v1.EventTypeNormal), ofType(onNode, v1.EventTypeWarning)
	notesSay(t, "the Node's Normal IPFamilyUnsupported events", normal, "IPv6 cluster IPs")
	notesSay(t, "the Node's Warning IPFamilyUnsupported events", warning, "node ports are not served")
	if len(notesMissing(warning, "IPv6 cluster IPs")) == 0 || len(notesMissing(normal, "node ports are not served")) == 0 {
		t.Errorf("a cause is in an event of the other type: Normal %q, Warning %q", eventNotes(normal), eventNotes(warning))
	}
}

// notesSay fails t for each of wants that no note of evs says.
func notesSay(t *testing.T, what string, evs []eventsv1.Event, wants ...string) {
	t.Helper()
	if missing := notesMissing(evs, wants...); len(missing) > 0 {
		t.Errorf("%s do not say %q: %q", what, missing, eventNotes(evs))
	}
}

func eventNotes(evs []eventsv1.Event) []string {
	var notes []string
	for _, e := range evs {
		notes = append(notes, e.Note)
	}
	return notes
}

// notesMissing are those of wants that no note of evs says.
func notesMissing(evs []eventsv1.Event, wants ...string) []string {
	var missing []string
	for _, want := range wants {
		if !slices.ContainsFunc(evs, func(e eventsv1.Event) bool { return strings.Contains(e.Note, want) }) {
			missing = append(missing, want)
		}
	}
	return missing
}

// timesRaised counts the raises evs stand for: the broadcaster folds a
// repeat of one object's event into a series of the first.
func timesRaised(evs []eventsv1.Event) int {
	raised := 0
	for _, e := range evs {
		raised++
		if e.Series != nil {
			raised += int(e.Series.Count) - 1
		}
	}
	return raised
}

// TestANodeCauseOfOneServiceMoreThanItNamesSaysAnd1More: a Node event
// names the first namedInCause Services it affects; with one more than
// that, its note says "and 1 more" as it says "and 27 more", or it reads
// as if the Services named were all.
func TestANodeCauseOfOneServiceMoreThanItNamesSaysAnd1More(t *testing.T) {
	c := newNodeCauses()
	for i := range namedInCause + 1 {
		c.set(types.NamespacedName{Namespace: "ns", Name: fmt.Sprintf("web-%d", i)}, []desired.Problem{
			{Reason: desired.ReasonSessionAffinityUnsupported, Warning: true, NodeCause: "HNS 9.5 has no affinity"},
		})
	}
	due := c.due()
	if len(due) != 1 {
		t.Fatalf("%d Node events %+v, want 1", len(due), due)
	}
	want := "affects 4 Services on this node (ns/web-0, ns/web-1, ns/web-2 and 1 more)"
	if note := due[0].note(); !strings.Contains(note, want) {
		t.Errorf("the Node event's note %q does not say %q", note, want)
	}
}
