package proxier

import (
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/internal/klogtest"
	"github.com/hnsproxy/hnsproxy/sim"
)

// failedSyncs counts the syncs the observer saw fail an object.
func (o *recordingObserver) failedSyncs() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, s := range o.syncs {
		if s.Result.Failed > 0 {
			n++
		}
	}
	return n
}

// loggingAt has the node log into a buffer at -v=verbosity, as the
// daemon's text format writes it.
func (n *testNode) loggingAt(verbosity int) *klogtest.Buffer {
	logger, b := klogtest.Logger(verbosity)
	n.logger = &logger
	return b
}

// TestSteadyNodeLogsNothingAtDefaultVerbosity: a node whose Services do
// not change writes nothing at -v=0 however many periodic syncs and drift
// repairs run (kube-proxy logs each sync at --v=2 only).
func TestSteadyNodeLogsNothingAtDefaultVerbosity(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(10000, 0))
	n := newTestNode(t, "ws2022", "10.244.1.5")
	obs := &recordingObserver{}
	n.observer, n.clock = obs, clk
	log := n.loggingAt(0)
	n.start()
	for i := range 5 {
		name := fmt.Sprintf("web%d", i)
		n.apply(service(name, fmt.Sprintf("10.96.0.%d", 10+i)), slice(name, endpoint{"10.244.1.5", nodeName}, endpoint{"10.244.2.5", "win-2"}))
	}
	n.eventually("the load balancers", func() bool { return len(n.lbs()) == 5 })
	n.settle()
	before := log.String()
	if !strings.Contains(before, "Waiting for caches to sync") {
		t.Fatalf("the node's start is not in its log; it logs elsewhere:\n%s", before)
	}
	for range 5 {
		obs.mu.Lock()
		syncs := len(obs.syncs)
		obs.mu.Unlock()
		clk.Step(time.Hour) // the periodic sync and the drift repair
		n.eventually("the periodic sync", func() bool {
			obs.mu.Lock()
			defer obs.mu.Unlock()
			return len(obs.syncs) > syncs
		})
		n.settle()
	}
	if got := log.String(); got != before {
		t.Errorf("a steady node logged at -v=0:\n%s", strings.TrimPrefix(got, before))
	}
}

// TestRefusedServiceIsNotLoggedOnEveryRetry: HNS refuses a Service's node
// port (a host process holds it) for as long as the test runs; each
// retry fails the same way. At -v=0 that is a few lines when it starts,
// none per retry: over hundreds of nodes and hours, a line per retry is
// a storm that says nothing new.
func TestRefusedServiceIsNotLoggedOnEveryRetry(t *testing.T) {
	n := newTestNode(t, "ws2022", "10.244.1.5")
	obs := &recordingObserver{}
	n.observer = obs
	log := n.loggingAt(0)
	n.start()
	n.hns.SetFaults(sim.Faults{TakenPorts: []sim.TakenPort{{Protocol: hnslb.ProtocolTCP, Port: 30080}}})
	svc := service("web", "10.96.0.10")
	svc.Spec.Type = v1.ServiceTypeNodePort
	svc.Spec.Ports[0].NodePort = 30080
	n.apply(svc, slice("web", endpoint{"10.244.1.5", nodeName}))
	n.eventually("the refusal retried", func() bool { return obs.failedSyncs() >= 2 })
	first := log.String()
	if !strings.Contains(first, "nodeport/v4:30080/tcp") {
		t.Errorf("the refusal is not logged at -v=0 with the frontend it refused:\n%s", first)
	}
	seen := obs.failedSyncs()
	n.eventually("20 more retries", func() bool { return obs.failedSyncs() >= seen+20 })
	if got := log.String(); got != first {
		t.Errorf("retries refused the same way logged at -v=0:\n%s", strings.TrimPrefix(got, first))
	}
}

// TestRouteReadFailureIsLoggedOncePerStreak: on overlay each drift repair
// re-reads the network's remote subnet routes, and a repair that failed is
// retried every 30 s at most. While HNS refuses (down, or a call hanging),
// the failed read is one error line when it starts, not one per retry,
// as the repair's own failure is; once a read works, the next failure is
// logged anew.
func TestRouteReadFailureIsLoggedOncePerStreak(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(10000, 0))
	n := newTestNode(t, "ws2022", "10.244.1.5")
	obs := &recordingObserver{}
	n.observer, n.clock = obs, clk
	n.remoteSubnets = networkRemoteSubnets(n.hns, n.networkID)
	log := n.loggingAt(0)
	n.start()
	n.apply(service("web", "10.96.0.20"), slice("web", endpoint{"10.244.1.5", nodeName}, endpoint{"10.244.2.5", "win-2"}))
	n.eventually("the load balancer", func() bool { return len(n.lbs()) == 1 })
	n.settle()
	repairs := func(times int) {
		t.Helper()
		for range times {
			obs.mu.Lock()
			syncs := len(obs.syncs)
			obs.mu.Unlock()
			clk.Step(time.Hour) // the periodic sync, with the drift repair
			n.eventually("the periodic sync", func() bool {
				obs.mu.Lock()
				defer obs.mu.Unlock()
				return len(obs.syncs) > syncs
			})
			n.eventually("the drift repair's end", func() bool {
				n.proxier.mu.Lock()
				defer n.proxier.mu.Unlock()
				return !n.proxier.repairing
			})
		}
	}
	failures := func() int { return strings.Count(log.String(), "Reading overlay remote subnets") }
	down := sim.Faults{ErrorRate: map[sim.Op]float64{sim.AnyOp: 1}}

	n.hns.SetFaults(down)
	repairs(8)
	if n := failures(); n != 1 {
		t.Errorf("%d route read failures logged at -v=0 over 8 repairs while HNS is down, want 1:\n%s", n, log)
	}
	n.hns.SetFaults(sim.Faults{})
	repairs(1)
	n.hns.SetFaults(down)
	repairs(3)
	if n := failures(); n != 2 {
		t.Errorf("%d route read failures logged at -v=0 after a second outage, want 2:\n%s", n, log)
	}
}
