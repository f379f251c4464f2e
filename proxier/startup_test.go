package proxier

import (
	"testing"
	"time"
)

// At start every Service is computed once, before the reconciler starts;
// the informers' initial Add events must not make the first sync compute
// them all again (at 10,000 Services that doubled the cold-start CPU).
func TestStartComputesEveryServiceOnce(t *testing.T) {
	n := newTestNode(t, "ws2025", "10.244.1.5")
	web := slice("web", endpoint{"10.244.1.5", nodeName}, endpoint{"10.244.2.7", "win-2"})
	web.Annotations = map[string]string{triggerTimeAnnotation: time.Now().Add(-time.Second).UTC().Format(time.RFC3339Nano)}
	n.apply(
		service("web", "10.96.0.10"), web,
		service("api", "10.96.0.11"), slice("api", endpoint{"10.244.2.8", "win-2"}),
	)
	rec := &recordingObserver{}
	n.observer = rec
	n.start()
	n.eventually("both load balancers", func() bool { return len(n.lbs()) == 2 })
	n.settle()
	rec.mu.Lock()
	syncs := append([]SyncStats(nil), rec.syncs...)
	rec.mu.Unlock()
	if len(syncs) == 0 {
		t.Fatal("no sync reported")
	}
	// It is reported as the full sync it completes (kube-proxy's first
	// sync is one), timed from Run's computation, yet computes nothing.
	if first := syncs[0]; !first.Full || first.ServicesComputed != 0 {
		t.Errorf("first sync: full=%v, %d Services computed; want a full sync computing none (Run computed them all)",
			first.Full, first.ServicesComputed)
	}
	for _, s := range syncs[1:] {
		if s.Full {
			t.Errorf("a later sync with nothing changed is reported full: %+v", s)
		}
	}
	// The start's changes are still reported; the slice's trigger time,
	// older than the proxier, is no programming latency (kube-proxy's
	// EndpointsChangeTracker ignores one from before its start: each restart
	// would report every slice's age).
	if first := syncs[0]; first.ServiceChanges != 2 || first.EndpointChanges != 2 || len(first.ProgrammingLatency) != 0 {
		t.Errorf("first sync reports %d Service and %d endpoint changes and %d programming latencies; want 2, 2, 0",
			first.ServiceChanges, first.EndpointChanges, len(first.ProgrammingLatency))
	}
	if got := syncs[0].Result.Created; got != 4 {
		t.Errorf("first sync created %d HNS objects, want 4 (two load balancers, two remote endpoints)", got)
	}
}
