package proxier

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/hnsproxy/hnsproxy/proxier/desired"
)

// TestAnUnchangedProblemIsNotReportedAgainWithANewOne: a Service keeps a
// problem (an invalid external IP) while another one comes and goes. The
// steady problem is one event; a new problem is one event of its own, not a
// reason to raise every other problem of the Service again (each endpoint
// change of a truncated Service would otherwise repeat all its warnings).
func TestAnUnchangedProblemIsNotReportedAgainWithANewOne(t *testing.T) {
	n := newTestNode(t, "ws2022", "10.244.1.5")
	n.start()
	withExternal := func(ips ...string) func(*v1.Service) {
		return func(s *v1.Service) { s.Spec.ExternalIPs = ips }
	}
	n.apply(service("web", "10.96.0.10", withExternal("not-an-ip")), slice("web", endpoint{"10.244.1.5", nodeName}))
	n.eventually("the load balancer", func() bool { return len(n.lbs()) == 1 })
	n.settle()
	steady, steadyText := 0, `"not-an-ip"`
	steady += n.countEvents(steadyText)
	for i, second := range []string{"also-bad", "", "still-bad"} {
		ips := []string{"not-an-ip"}
		if second != "" {
			ips = append(ips, second)
		}
		n.apply(service("web", "10.96.0.10", withExternal(ips...)))
		n.settle()
		steady += n.countEvents(steadyText)
		if steady != 1 {
			t.Fatalf("after change %d: %d events about the unchanged invalid IP, want 1", i, steady)
		}
	}
}

// TestManyPortsWithOneProblemAreOneEvent: a Service with 200 SCTP ports
// (the API allows thousands) beside a TCP one. Each port has its problem,
// but the Service gets one UnsupportedProtocol event that counts them and
// says the first few, not one per port and node: every problem stays
// listed by hnsproxy-diag, and the TCP port is served.
func TestManyPortsWithOneProblemAreOneEvent(t *testing.T) {
	event := unsupportedProtocolEvent(t, 200)
	for _, want := range []string{"200 UnsupportedProtocol problems", fmt.Sprintf("the first %d", maxProblemsPerEvent), "port sctp-0:", "port sctp-4:"} {
		if !strings.Contains(event, want) {
			t.Errorf("the event does not say %q: %q", want, event)
		}
	}
	if strings.Contains(event, "port sctp-5:") {
		t.Errorf("the event says more than the first %d: %q", maxProblemsPerEvent, event)
	}
}

// TestAsManyProblemsAsAnEventSaysAreAllSaid: a Service with exactly
// maxProblemsPerEvent SCTP ports gets an event that says all of them, not
// one that sends the operator to hnsproxy-diag for a rest there is not.
func TestAsManyProblemsAsAnEventSaysAreAllSaid(t *testing.T) {
	event := unsupportedProtocolEvent(t, maxProblemsPerEvent)
	if want := fmt.Sprintf("%d UnsupportedProtocol problems of this Service, these:", maxProblemsPerEvent); !strings.Contains(event, want) {
		t.Errorf("the event does not say %q: %q", want, event)
	}
}

// unsupportedProtocolEvent serves a Service with a TCP port and sctpPorts
// SCTP ports (sctp-0, sctp-1, ...) and returns its one UnsupportedProtocol
// event, failing the test unless there is exactly one.
func unsupportedProtocolEvent(t *testing.T, sctpPorts int) string {
	t.Helper()
	n := newTestNode(t, "ws2022", "10.244.1.5")
	n.start()
	svc := service("sip", "10.96.0.10", func(s *v1.Service) {
		for i := range sctpPorts {
			s.Spec.Ports = append(s.Spec.Ports, v1.ServicePort{Name: fmt.Sprintf("sctp-%d", i), Protocol: v1.ProtocolSCTP, Port: int32(5000 + i)})
		}
	})
	n.apply(svc, slice("sip", endpoint{"10.244.1.5", nodeName}))
	n.eventually("the TCP port's load balancer", func() bool { return len(n.lbs()) == 1 })
	n.settle()
	var unsupported []string
	for _, e := range n.drainEvents() {
		if strings.Contains(e, desired.ReasonUnsupportedProtocol) {
			unsupported = append(unsupported, e)
		}
	}
	if len(unsupported) != 1 {
		t.Fatalf("%d UnsupportedProtocol events, want 1", len(unsupported))
	}
	return unsupported[0]
}

// TestTwoProblemsOfOneReasonReachTheAPIBoth: a Service with two invalid
// external IPs, through the recorder the daemon wires. client-go's
// events.k8s.io broadcaster folds a second event of one object with the
// same reason into a series of the first and the API keeps the first
// note, so raised one by one, the second IP would be said nowhere.
func TestTwoProblemsOfOneReasonReachTheAPIBoth(t *testing.T) {
	n := newTestNode(t, "ws2022", "10.244.1.5")
	n.apiEvents = true
	n.start()
	n.apply(service("web", "10.96.0.10", func(s *v1.Service) { s.Spec.ExternalIPs = []string{"not-an-ip", "also-bad"} }),
		slice("web", endpoint{"10.244.1.5", nodeName}))
	n.eventually("the load balancer", func() bool { return len(n.lbs()) == 1 })
	n.settle()
	says := []string{`"not-an-ip"`, `"also-bad"`}
	_, onService := n.apiEventsOf(desired.ReasonInvalidIP,
		func(_, onService []eventsv1.Event) bool { return len(notesMissing(onService, says...)) == 0 })
	notesSay(t, "the API's InvalidIP events on the Service", onService, says...)
}

// TestARecreatedServiceGetsItsProblemsReported: a Service deleted and made
// again under its name (kubectl replace --force, a reinstalled chart) before
// a sync sees the deletion is a new object: its problems are raised on it,
// not taken as the old object's, already reported.
func TestARecreatedServiceGetsItsProblemsReported(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(10000, 0))
	n := newTestNode(t, "ws2022", "10.244.1.5")
	n.clock = clk
	n.minSyncPeriod = time.Hour // no sync but the ones the test steps the clock to
	n.start()
	bad := func(uid types.UID) *v1.Service {
		return service("web", "10.96.0.10", func(s *v1.Service) { s.UID, s.Spec.ExternalIPs = uid, []string{"not-an-ip"} })
	}
	invalidIP := func() bool {
		clk.Step(n.minSyncPeriod)
		return n.countEvents(`"not-an-ip"`) > 0
	}
	n.apply(bad("uid-1"), slice("web", endpoint{"10.244.1.5", nodeName}))
	n.eventually("the first object's InvalidIP event", invalidIP)
	ctx := context.Background()
	if err := n.client.CoreV1().Services("default").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	n.apply(bad("uid-2"))
	n.eventually("the proxier's cache holding the new object", n.cachesCaughtUp)
	n.eventually("the new object's InvalidIP event", invalidIP)
}
