package diag

import (
	"testing"

	"github.com/hnsproxy/hnsproxy/sim"
)

// TestTraceWhereHNSAnswersGUIDsInUpperCase: HNS may answer its GUIDs in
// upper case (as its v1 API does; docs/simulator.md, echo upper-guids),
// the network's own ID and an endpoint's reference to it in different
// case. A pod's packet to a cluster IP is still load-balanced there, not
// dropped as if the node had no pods.
func TestTraceWhereHNSAnswersGUIDsInUpperCase(t *testing.T) {
	in := newFixtureEchoing(t, sim.Echo{UpperGUIDs: true}).read()
	tr, err := Trace(in, mustPacket(t, client+":40000", frontendIP+":80", "tcp"))
	if err != nil {
		t.Fatal(err)
	}
	if tr.LoadBalancer == nil || tr.LoadBalancer.Service != "web/frontend:http" || tr.Outcome == "dropped" {
		t.Errorf("a pod to a cluster IP: %s %q", tr.Summary, tr.Hops)
	}
}
