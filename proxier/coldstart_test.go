package proxier

import (
	"runtime/metrics"
	"testing"
)

// forcedCollections counts the collections the process forced so far.
func forcedCollections() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// The first sync ends with a collection, so that the heap goal follows the
// steady state rather than the cold start's working set; later syncs force
// none.
func TestColdStartEndsWithACollection(t *testing.T) {
	n := newTestNode(t, "ws2025", "10.244.1.5")
	n.apply(service("web", "10.96.0.10"), slice("web", endpoint{"10.244.1.5", nodeName}, endpoint{"10.244.2.7", "win-2"}))
	before := forcedCollections()
	n.start()
	n.eventually("a collection after the first sync", func() bool { return forcedCollections() > before })
	n.settle()
	after := forcedCollections()
	n.apply(service("api", "10.96.0.11"), slice("api", endpoint{"10.244.2.8", "win-2"}))
	n.eventually("the second load balancer", func() bool { return len(n.lbs()) == 2 })
	n.settle()
	if got := forcedCollections() - after; got != 0 {
		t.Errorf("later syncs forced %d collections, want none", got)
	}
}
