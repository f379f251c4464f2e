package proxier

import (
	"testing"

	v1 "k8s.io/api/core/v1"
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
