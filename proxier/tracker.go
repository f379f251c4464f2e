package proxier

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// changeTracker collects which Services must be recomputed between syncs.
// Informer handlers write to it; the sync loop takes the accumulated set.
type changeTracker struct {
	mu       sync.Mutex
	services map[types.NamespacedName]struct{}
	// podCIDRNodes are other Nodes whose pod CIDR appeared or changed (overlay).
	podCIDRNodes    []string
	serviceChanges  int
	endpointChanges int
	// triggerTimes are EndpointSlice last-change-trigger-time annotations per
	// Service, for the network programming latency metric.
	triggerTimes map[types.NamespacedName][]time.Time
	// since is when the proxier was made: an older trigger time is a
	// change made before it started, no programming latency of its
	// (kube-proxy ignores those too). A restart would otherwise report
	// every slice's age.
	since time.Time
}

// pendingChanges is what one sync works on.
type pendingChanges struct {
	services        map[types.NamespacedName]struct{}
	podCIDRNodes    []string
	serviceChanges  int
	endpointChanges int
	triggerTimes    map[types.NamespacedName][]time.Time
}

func newChangeTracker(since time.Time) *changeTracker {
	return &changeTracker{
		services:     map[types.NamespacedName]struct{}{},
		triggerTimes: map[types.NamespacedName][]time.Time{},
		since:        since,
	}
}

func (t *changeTracker) serviceChanged(name types.NamespacedName) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.services[name] = struct{}{}
	t.serviceChanges++
}

// sliceChanged notes a change to one of name's slices; triggerTime is the
// slice's (zero when it has none or it is no latency to report).
func (t *changeTracker) sliceChanged(name types.NamespacedName, triggerTime time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.services[name] = struct{}{}
	t.endpointChanges++
	if triggerTime.After(t.since) {
		t.triggerTimes[name] = append(t.triggerTimes[name], triggerTime)
	}
}

func (t *changeTracker) podCIDRChanged(node string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.podCIDRNodes = append(t.podCIDRNodes, node)
}

// pending reports how many changes wait for the next sync.
func (t *changeTracker) pending() (services, endpoints int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.serviceChanges, t.endpointChanges
}

func (t *changeTracker) take() pendingChanges {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := pendingChanges{
		services:        t.services,
		podCIDRNodes:    t.podCIDRNodes,
		serviceChanges:  t.serviceChanges,
		endpointChanges: t.endpointChanges,
		triggerTimes:    t.triggerTimes,
	}
	t.services = map[types.NamespacedName]struct{}{}
	t.triggerTimes = map[types.NamespacedName][]time.Time{}
	t.podCIDRNodes = nil
	t.serviceChanges, t.endpointChanges = 0, 0
	return p
}

// addReported adds o's counts and trigger times, not its Services: they
// were computed already.
func (p *pendingChanges) addReported(o pendingChanges) {
	p.serviceChanges += o.serviceChanges
	p.endpointChanges += o.endpointChanges
	for name, ts := range o.triggerTimes {
		p.triggerTimes[name] = append(p.triggerTimes[name], ts...)
	}
}
