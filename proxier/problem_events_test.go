package proxier

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
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

// TestManyPortsWithOneProblemAreAFewEvents: a Service with 200 SCTP ports
// (the API allows thousands) beside a TCP one. Each port has its problem,
// but the Service gets a handful of UnsupportedProtocol events and a
// summary, not one per port and node: every problem stays listed by
// hnsproxy-diag, and the TCP port is served.
func TestManyPortsWithOneProblemAreAFewEvents(t *testing.T) {
	n := newTestNode(t, "ws2022", "10.244.1.5")
	n.start()
	svc := service("sip", "10.96.0.10", func(s *v1.Service) {
		for i := range 200 {
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
	if len(unsupported) > maxEventsPerReason {
		t.Fatalf("%d UnsupportedProtocol events, want at most %d", len(unsupported), maxEventsPerReason)
	}
	if last := unsupported[len(unsupported)-1]; !strings.Contains(last, fmt.Sprintf("%d more", 200-maxEventsPerReason+1)) {
		t.Errorf("the last event does not sum up the rest: %q", last)
	}
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
