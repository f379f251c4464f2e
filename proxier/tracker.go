package proxier

import (
	"maps"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/hnsproxy/hnsproxy/intent"
)

// changeTracker collects which Services must be recomputed between syncs.
// Informer handlers write to it; the sync loop takes the accumulated set.
type changeTracker struct {
	mu       sync.Mutex
	services map[types.NamespacedName]struct{}
	// changedServices are the Services a Service event changed (services
	// has those an EndpointSlice event changed too).
	changedServices map[types.NamespacedName]struct{}
	// routingNodes are other Nodes whose pod CIDR or address appeared or
	// changed (overlay): their route may appear or move.
	routingNodes []string
	// left are the addresses of this node's endpoints that left a slice
	// or stopped being ready (localEndpointsLeft).
	left map[string]struct{}
	// returned are the addresses of this node's endpoints that came back
	// to serving (localEndpointsReturned).
	returned        map[string]struct{}
	serviceChanges  int
	endpointChanges int
	// triggerTimes are EndpointSlice last-change-trigger-time annotations per
	// Service, for the network programming latency metric.
	triggerTimes map[types.NamespacedName][]triggerTime
	// since is when the proxier was made: an older trigger time is a
	// change made before it started, no programming latency of its
	// (kube-proxy ignores those too). A restart would otherwise report
	// every slice's age.
	since time.Time
	// report, if set, is told of every change and take, under mu so that
	// the pending counts it sees are in order.
	report func(Changes)
}

// pendingChanges is what one sync works on.
type pendingChanges struct {
	services        map[types.NamespacedName]struct{}
	routingNodes    []string
	localLeft       []string
	localReturned   []string
	serviceChanges  int
	endpointChanges int
	triggerTimes    map[types.NamespacedName][]triggerTime
}

// triggerTime is one slice change's last-change-trigger-time, with the
// slice's family: its latency carries that family's ip_family label, as
// each family's proxier of kube-proxy's dual-stack reports its own slices.
type triggerTime struct {
	at     time.Time
	family intent.IPFamily
}

func newChangeTracker(since time.Time, report func(Changes)) *changeTracker {
	return &changeTracker{
		services:        map[types.NamespacedName]struct{}{},
		changedServices: map[types.NamespacedName]struct{}{},
		triggerTimes:    map[types.NamespacedName][]triggerTime{},
		since:           since,
		report:          report,
	}
}

func (t *changeTracker) serviceChanged(name types.NamespacedName) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.services[name] = struct{}{}
	t.changedServices[name] = struct{}{}
	t.serviceChanges++
	t.reportLocked(Changes{Services: 1})
}

// reportLocked reports c with the changes now pending; t.mu is held.
func (t *changeTracker) reportLocked(c Changes) {
	if t.report == nil {
		return
	}
	c.PendingServices, c.PendingEndpoints = len(t.changedServices), t.endpointChanges
	t.report(c)
}

// sliceChanged notes a change to one of name's slices, of family;
// trigger is the slice's trigger time (zero when it has none).
func (t *changeTracker) sliceChanged(name types.NamespacedName, family intent.IPFamily, trigger time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if trigger.After(t.since) {
		t.triggerTimes[name] = append(t.triggerTimes[name], triggerTime{at: trigger, family: family})
	}
	t.sliceCountedLocked(name)
}

// sliceCountedLocked marks name changed and counts one endpoint change.
func (t *changeTracker) sliceCountedLocked(name types.NamespacedName) {
	t.services[name] = struct{}{}
	t.endpointChanges++
	t.reportLocked(Changes{Endpoints: 1})
}

// sliceRemoved notes that one of name's slices, of family, is gone (or
// left the Service): a change, and the end of the family's pending trigger
// times for name, as kube-proxy's EndpointsChangeTracker drops them. A
// removed slice's updates since the last sync are no longer what the next
// sync programs, and its own annotation dates its last update, not the
// removal.
func (t *changeTracker) sliceRemoved(name types.NamespacedName, family intent.IPFamily) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.dropTriggerTimesLocked(name, family)
	t.sliceCountedLocked(name)
}

// sliceLeft is sliceRemoved, uncounted, for a slice relabelled away from
// name: the update is one change, which kube-proxy's tracker counts once,
// for the Service the slice names now (onSliceUpdate counts it there).
func (t *changeTracker) sliceLeft(name types.NamespacedName, family intent.IPFamily) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.dropTriggerTimesLocked(name, family)
	t.services[name] = struct{}{}
}

// dropTriggerTimesLocked forgets name's pending trigger times of family;
// t.mu is held.
func (t *changeTracker) dropTriggerTimesLocked(name types.NamespacedName, family intent.IPFamily) {
	kept := slices.DeleteFunc(t.triggerTimes[name], func(tt triggerTime) bool { return tt.family == family })
	if len(kept) == 0 {
		delete(t.triggerTimes, name)
	} else {
		t.triggerTimes[name] = kept
	}
}

// sliceTouched marks name for recomputing after a change to one of its
// slices that is no change to count (noteSlice): no count, nothing pending.
func (t *changeTracker) sliceTouched(name types.NamespacedName) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.services[name] = struct{}{}
}

func (t *changeTracker) nodeRoutingChanged(node string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.routingNodes = append(t.routingNodes, node)
}

// localLeft notes addresses of this node's endpoints that left a slice or
// stopped being ready or serving.
func (t *changeTracker) localLeft(ips []string) { t.noteAddresses(&t.left, ips) }

// localReturned notes addresses of this node's endpoints that came back to
// serving.
func (t *changeTracker) localReturned(ips []string) { t.noteAddresses(&t.returned, ips) }

func (t *changeTracker) noteAddresses(set *map[string]struct{}, ips []string) {
	if len(ips) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if *set == nil {
		*set = make(map[string]struct{}, len(ips))
	}
	for _, ip := range ips {
		(*set)[ip] = struct{}{}
	}
}

func (t *changeTracker) take() pendingChanges {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := pendingChanges{
		services:        t.services,
		routingNodes:    t.routingNodes,
		localLeft:       slices.Collect(maps.Keys(t.left)),
		localReturned:   slices.Collect(maps.Keys(t.returned)),
		serviceChanges:  t.serviceChanges,
		endpointChanges: t.endpointChanges,
		triggerTimes:    t.triggerTimes,
	}
	t.services = map[types.NamespacedName]struct{}{}
	clear(t.changedServices)
	t.triggerTimes = map[types.NamespacedName][]triggerTime{}
	t.routingNodes = nil
	t.left, t.returned = nil, nil
	t.serviceChanges, t.endpointChanges = 0, 0
	t.reportLocked(Changes{}) // as kube-proxy's trackers: none pending once taken
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
