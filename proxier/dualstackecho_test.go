package proxier

import (
	"testing"

	"github.com/hnsproxy/hnsproxy/sim"
)

// TestDualStackTransitionsUnderEveryEcho: a Service moving between
// single-stack and dual-stack (PreferDualStack), with an external IP,
// ingress IP and node port of each family, leaves HNS as a fresh node
// would program it whatever liberties HNS takes with its answers (each
// echo option and all at once: docs/simulator.md, "Echo profiles"); and a
// restart afterwards writes nothing, so no IPv6 load balancer or remote
// endpoint is taken for another agent's or rewritten.
func TestDualStackTransitionsUnderEveryEcho(t *testing.T) {
	for _, name := range append(sim.EchoNames(), "all") {
		t.Run(name, func(t *testing.T) {
			echo, err := sim.ParseEcho(name)
			if err != nil {
				t.Fatal(err)
			}
			pods := []string{"10.244.1.5"}
			n := newTestNode(t, "ws2025", pods...)
			n.hns.SetEcho(echo)
			runTransitions(t, n, pods, dualStackSteps(n))
			n.stop()
			n.hns.ResetCounters()
			n.start()
			n.settle()
			if c := n.hns.Counters(); c.Writes() != 0 {
				t.Errorf("a restart wrote %v", c.Calls)
			}
		})
	}
}
