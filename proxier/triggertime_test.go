package proxier

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
)

// The network programming latency runs from an EndpointSlice's
// last-change-trigger-time to the sync that programs the change. Like
// kube-proxy's EndpointsChangeTracker, a trigger time counts only for a
// change the proxy had to apply, made after the proxy started: not one
// from before the start (each restart would report every slice's age), not
// an informer resync or re-list of a slice that did not change (every
// --config-sync-period would report it again), and not a deleted slice's
// (its annotation dates its last update, not the deletion).
func TestTriggerTimesCountOnlyChangesSinceStart(t *testing.T) {
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(start)
	p := idleProxier(t, Options{Clock: clk})
	web := types.NamespacedName{Namespace: "default", Name: "web"}
	withTrigger := func(rv string, at time.Time) *cachedSlice {
		s := slice("web", endpoint{"10.244.2.7", "win-2"})
		s.ResourceVersion = rv
		s.Annotations = map[string]string{triggerTimeAnnotation: at.Format(time.RFC3339Nano)}
		return cacheSlice(s)
	}
	latencies := func(what string) int {
		t.Helper()
		got := p.tracker.take()
		if _, ok := got.services[web]; !ok || got.endpointChanges == 0 {
			t.Errorf("%s: %s not tracked as changed (%+v)", what, web, got)
		}
		return len(got.triggerTimes[web])
	}

	// The initial list: the slice last changed a day before the start.
	old := withTrigger("10", start.Add(-24*time.Hour))
	p.onSlice(old)
	if n := latencies("initial list"); n != 0 {
		t.Errorf("a trigger time from before the start gave %d programming latencies, want 0", n)
	}

	// A resync hands the cached object over again; a re-list the same
	// version. Neither is a change (TestResyncIsNoChange).
	p.onSliceUpdate(old, old)
	clk.Step(time.Minute)
	p.onSliceUpdate(old, withTrigger("10", start.Add(-24*time.Hour)))
	if got := p.tracker.take(); len(got.services) != 0 || len(got.triggerTimes) != 0 {
		t.Errorf("a resync and a re-list of an unchanged slice were tracked as %+v", got)
	}

	// A real change after the start counts, once.
	changed := withTrigger("11", start.Add(30*time.Second))
	p.onSliceUpdate(old, changed)
	if n := latencies("update"); n != 1 {
		t.Errorf("an update after the start gave %d programming latencies, want 1", n)
	}

	// The deletion carries the last update's trigger time: not a latency.
	p.onSliceDelete(changed)
	if n := latencies("delete"); n != 0 {
		t.Errorf("a deleted slice gave %d programming latencies, want 0", n)
	}
}

// Through the informers: the slice informer's delete handler reports no
// programming latency for the deleted slice's trigger time.
func TestDeletedSliceReportsNoProgrammingLatency(t *testing.T) {
	n, obs := observedNode(t, "ws2025", "10.244.1.5")
	web := slice("web", endpoint{"10.244.1.5", nodeName})
	web.Annotations = map[string]string{triggerTimeAnnotation: time.Now().UTC().Format(time.RFC3339Nano)}
	n.apply(service("web", "10.96.0.10"), web)
	n.eventually("the load balancer", func() bool { return len(n.lbs()) == 1 })
	n.settle()
	if !obs.anySync(func(s SyncStats) bool { return len(s.ProgrammingLatency) == 1 }) {
		t.Fatal("the slice's creation reported no programming latency")
	}
	obs.mu.Lock()
	before := len(obs.syncs)
	obs.mu.Unlock()

	if err := n.client.DiscoveryV1().EndpointSlices("default").Delete(context.Background(), web.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	n.eventually("the load balancer gone", func() bool { return len(n.lbs()) == 0 })
	n.settle()
	obs.mu.Lock()
	defer obs.mu.Unlock()
	for _, s := range obs.syncs[before:] {
		if len(s.ProgrammingLatency) > 0 {
			t.Errorf("a sync after the slice's deletion reported programming latencies %v, want none", s.ProgrammingLatency)
		}
	}
}

// TestResyncIsNoChange: an informer resync hands every cached Service and
// slice over again each --config-sync-period. kube-proxy's change trackers
// find no difference and sync nothing; hnsproxy neither queues a sync nor
// recomputes a Service for it (at 10,000 Services that is a full
// recompute's CPU each period). A changed version still counts.
func TestResyncIsNoChange(t *testing.T) {
	n := newTestNode(t, "ws2025", "10.244.1.5")
	obs := &recordingObserver{}
	n.observer = obs
	n.resyncPeriod = 5 * time.Millisecond
	n.start()
	n.apply(service("web", "10.96.0.10"), slice("web", endpoint{"10.244.1.5", nodeName}))
	n.eventually("the Service programmed", func() bool { return len(n.lbs()) == 1 })
	n.settle()
	_, _, queued := obs.last()
	// Many resync periods: each would queue a sync that recomputes web.
	time.Sleep(200 * time.Millisecond)
	if _, _, now := obs.last(); now != queued {
		t.Errorf("resyncs queued %d syncs, want none", now-queued)
	}
	if svcs, eps := n.proxier.tracker.pending(); svcs != 0 || eps != 0 {
		t.Errorf("resyncs left %d Service and %d slice changes to sync, want none", svcs, eps)
	}

	n.apply(service("web", "10.96.0.10", func(s *v1.Service) { s.Spec.Ports[0].Port = 8080 }))
	n.eventually("the changed port programmed", func() bool {
		lbs := n.lbs()
		return len(lbs) == 1 && lbs[0].Port == 8080
	})
}

// TestProgrammingLatencyCarriesTheSlicesFamily: on a node serving both
// families each change's network programming latency is reported with the
// family of the slice that changed, as each family's proxier of
// kube-proxy's dual-stack reports its own slices (the metric's ip_family
// label): an IPv6 slice's change is not the IPv4 family's.
func TestProgrammingLatencyCarriesTheSlicesFamily(t *testing.T) {
	start := time.Date(2026, 12, 6, 6, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(start)
	obs := &recordingObserver{}
	p := idleProxier(t, Options{Observer: obs, Clock: clk,
		Config: desired.Config{Mode: desired.L2Bridge, Features: hnslb.Features{IPv6DualStack: true}}})
	of := func(name string, typ discoveryv1.AddressType, addr string) *cachedSlice {
		s := slice("web", endpoint{addr, "win-2"})
		s.Name, s.AddressType, s.ResourceVersion = name, typ, "1"
		s.Annotations = map[string]string{triggerTimeAnnotation: start.Add(time.Second).Format(time.RFC3339Nano)}
		return cacheSlice(s)
	}
	p.onSlice(of("web-v6", discoveryv1.AddressTypeIPv6, "fd00::7"))
	p.onSlice(of("web-v4", discoveryv1.AddressTypeIPv4, "10.244.2.7"))
	p.onSlice(of("web-v6-2", discoveryv1.AddressTypeIPv6, "fd00::8"))
	clk.Step(time.Minute)
	p.Sync(context.Background())
	obs.mu.Lock()
	defer obs.mu.Unlock()
	got := obs.syncs[len(obs.syncs)-1].ProgrammingLatency
	if len(got[intent.IPv6]) != 2 || len(got[intent.IPv4]) != 1 {
		t.Errorf("programming latencies by family %v, want the IPv6 slices' two under IPv6 and the IPv4 slice's one under IPv4", got)
	}
}

// TestASliceDeletedBeforeTheSyncTakesItsUpdatesLatencyAlong: an
// EndpointSlice updated and then deleted before a sync reports no network
// programming latency for the update, which no sync programmed, as
// kube-proxy's EndpointsChangeTracker drops a Service's pending trigger
// times at a slice's deletion. Each family's proxier of kube-proxy's dual-
// stack tracks its own slices: the other family's slice's change still
// counts.
func TestASliceDeletedBeforeTheSyncTakesItsUpdatesLatencyAlong(t *testing.T) {
	start := time.Date(2026, 12, 6, 6, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(start)
	p := idleProxier(t, Options{Clock: clk,
		Config: desired.Config{Mode: desired.L2Bridge, Features: hnslb.Features{IPv6DualStack: true}}})
	web := types.NamespacedName{Namespace: "default", Name: "web"}
	of := func(name, rv string, typ discoveryv1.AddressType, addr string) *cachedSlice {
		s := slice("web", endpoint{addr, "win-2"})
		s.Name, s.AddressType, s.ResourceVersion = name, typ, rv
		s.Annotations = map[string]string{triggerTimeAnnotation: start.Add(time.Second).Format(time.RFC3339Nano)}
		return cacheSlice(s)
	}
	v4, v6 := of("web-v4", "1", discoveryv1.AddressTypeIPv4, "10.244.2.7"), of("web-v6", "1", discoveryv1.AddressTypeIPv6, "fd00::7")
	p.onSlice(v4)
	p.onSlice(v6)
	_ = p.tracker.take()

	v4Updated, v6Updated := of("web-v4", "2", discoveryv1.AddressTypeIPv4, "10.244.2.8"), of("web-v6", "2", discoveryv1.AddressTypeIPv6, "fd00::8")
	p.onSliceUpdate(v4, v4Updated)
	p.onSliceUpdate(v6, v6Updated)
	p.onSliceDelete(v4Updated)
	got := p.tracker.take()
	var families []intent.IPFamily
	for _, tt := range got.triggerTimes[web] {
		families = append(families, tt.family)
	}
	if len(families) != 1 || families[0] != intent.IPv6 {
		t.Errorf("after the IPv4 slice's update and deletion, programming latencies of families %v, want the IPv6 slice's update's alone", families)
	}
}
