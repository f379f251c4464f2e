package proxier

import (
	"cmp"
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
	"github.com/hnsproxy/hnsproxy/reconciler"
	"github.com/hnsproxy/hnsproxy/sim"
)

// Tests of the sync loop itself: the Observer hook, node changes, handler
// filtering, Run's lifecycle, rate limiting and retries after HNS faults.

// recordingObserver keeps what the proxier reported.
type recordingObserver struct {
	mu      sync.Mutex
	queued  int
	changes int // changes the informer handlers reported
	syncs   []SyncStats
	checks  map[types.NamespacedName]desired.HealthCheck
}

func (o *recordingObserver) Changes(Changes) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.changes++
}

// changesReported counts the changes the proxier's informer handlers
// reported. A lister holds an object before the handlers ran for it, so a
// test that steps a fake clock to the next sync waits for this instead.
func (o *recordingObserver) changesReported() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.changes
}

func (o *recordingObserver) SyncQueued(time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.queued++
}

func (o *recordingObserver) SyncDone(s SyncStats) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.syncs = append(o.syncs, s)
}

func (o *recordingObserver) HealthChecks(c map[types.NamespacedName]desired.HealthCheck) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.checks = c
}

// last returns the latest sync's stats and the health checks.
func (o *recordingObserver) last() (SyncStats, map[types.NamespacedName]desired.HealthCheck, int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.syncs) == 0 {
		return SyncStats{}, o.checks, o.queued
	}
	return o.syncs[len(o.syncs)-1], o.checks, o.queued
}

// anySync reports whether some sync so far satisfies cond.
func (o *recordingObserver) anySync(cond func(SyncStats) bool) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, s := range o.syncs {
		if cond(s) {
			return true
		}
	}
	return false
}

// programmedFirstObserver notes, each time the health checks are handed
// over, whether the Service's node-port load balancer already holds the
// local endpoint the check counts.
type programmedFirstObserver struct {
	recordingObserver
	n       *testNode
	early   []string // health checks counted a local endpoint HNS did not carry yet
	counted bool
}

func (o *programmedFirstObserver) HealthChecks(c map[types.NamespacedName]desired.HealthCheck) {
	o.recordingObserver.HealthChecks(c)
	for name, hc := range c {
		if hc.LocalIPv4+hc.LocalIPv6 == 0 {
			continue
		}
		o.mu.Lock()
		o.counted = true
		o.mu.Unlock()
		carried := false
		for _, lb := range o.n.lbs() {
			if lb.Port == 30080 && slices.Contains(lb.Backends, "10.244.1.5") {
				carried = true
			}
		}
		if !carried {
			o.mu.Lock()
			o.early = append(o.early, name.String())
			o.mu.Unlock()
		}
	}
}

// TestHealthCheckCountsOnlyWhatHNSCarries: the health-check node port hands
// a cloud load balancer this node only once the node's own load balancer
// for the Service is programmed. kube-proxy updates its service health
// server after the sync's HNS calls (winkernel syncProxyRules), so a
// health check never says 200 for a local endpoint traffic cannot reach.
func TestHealthCheckCountsOnlyWhatHNSCarries(t *testing.T) {
	n := newTestNode(t, "ws2022", "10.244.1.5")
	obs := &programmedFirstObserver{n: n}
	n.observer = obs
	n.start()
	n.apply(service("lb", "10.96.0.10", func(s *v1.Service) {
		s.Spec.Type = v1.ServiceTypeLoadBalancer
		s.Spec.ExternalTrafficPolicy = v1.ServiceExternalTrafficPolicyLocal
		s.Spec.Ports[0].NodePort = 30080
		s.Spec.HealthCheckNodePort = 32001
	}), slice("lb", endpoint{"10.244.1.5", nodeName}))
	n.eventually("a health check counting the local endpoint", func() bool {
		obs.mu.Lock()
		defer obs.mu.Unlock()
		return obs.counted
	})
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.early) > 0 {
		t.Errorf("health checks %v counted a local endpoint before HNS carried it", obs.early)
	}
}

func observedNode(t *testing.T, profile string, pods ...string) (*testNode, *recordingObserver) {
	n := newTestNode(t, profile, pods...)
	obs := &recordingObserver{}
	n.observer = obs
	n.start()
	return n, obs
}

func TestObserverSeesSyncsHealthChecksAndLocalPolicyGaps(t *testing.T) {
	n, obs := observedNode(t, "ws2022", "10.244.1.5")
	lbName := types.NamespacedName{Namespace: "default", Name: "lb"}
	// A change after the proxier started (one from before is no latency of its).
	trigger := time.Now().UTC().Format(time.RFC3339Nano)
	lbSlice := slice("lb", endpoint{"10.244.1.5", nodeName}, endpoint{"10.244.2.7", "win-2"})
	lbSlice.Annotations = map[string]string{triggerTimeAnnotation: trigger}
	n.apply(
		service("lb", "10.96.0.10", func(s *v1.Service) {
			s.Spec.Type = v1.ServiceTypeLoadBalancer
			s.Spec.ExternalTrafficPolicy = v1.ServiceExternalTrafficPolicyLocal
			s.Spec.Ports[0].NodePort = 30080
			s.Spec.HealthCheckNodePort = 32001
		}), lbSlice,
		// Local traffic policies with no endpoint on this node.
		service("itp", "10.96.0.11", func(s *v1.Service) {
			s.Spec.InternalTrafficPolicy = ptr.To(v1.ServiceInternalTrafficPolicyLocal)
		}), slice("itp", endpoint{"10.244.2.8", "win-2"}),
		service("etp", "10.96.0.12", func(s *v1.Service) {
			s.Spec.Type = v1.ServiceTypeNodePort
			s.Spec.ExternalTrafficPolicy = v1.ServiceExternalTrafficPolicyLocal
			s.Spec.Ports[0].NodePort = 30081
		}), slice("etp", endpoint{"10.244.2.9", "win-2"}),
	)
	n.eventually("health check and local-policy counts", func() bool {
		s, checks, _ := obs.last()
		return checks[lbName] == (desired.HealthCheck{NodePort: 32001, LocalIPv4: 1}) && len(checks) == 1 &&
			s.NoLocalEndpoints["internal"] == 1 && s.NoLocalEndpoints["external"] == 1
	})
	if !obs.anySync(func(s SyncStats) bool { return len(s.ProgrammingLatency) > 0 && s.EndpointChanges > 0 }) {
		t.Error("no sync reported programming latency for the slice with a trigger time")
	}
	if !obs.anySync(func(s SyncStats) bool { return s.Result.Created > 0 && !s.End.Before(s.Start) }) {
		t.Error("no sync reported created HNS objects")
	}
	if _, _, queued := obs.last(); queued == 0 {
		t.Error("SyncQueued never called")
	}

	// The local endpoint goes: the health check reports none.
	n.apply(slice("lb", endpoint{"10.244.2.7", "win-2"}))
	n.eventually("no local endpoints for the health check", func() bool {
		_, checks, _ := obs.last()
		return checks[lbName] == (desired.HealthCheck{NodePort: 32001})
	})
	if err := n.client.CoreV1().Services("default").Delete(context.Background(), "lb", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	n.eventually("health check gone with the Service", func() bool {
		_, checks, _ := obs.last()
		_, ok := checks[lbName]
		return !ok
	})
}

// TestAServiceDeletedAsTheZoneChangesLosesItsLoadBalancer: a Node change
// hnsproxy reads (here the zone) recomputes every Service from scratch
// rather than the changed ones; a Service deleted before that sync is in
// neither, and only the recompute's comparison with what it replaced
// deletes its load balancer from HNS.
func TestAServiceDeletedAsTheZoneChangesLosesItsLoadBalancer(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(10000, 0))
	n := newTestNode(t, "ws2025", "10.244.1.5")
	n.clock = clk
	n.minSyncPeriod = time.Hour // no sync but the ones the test steps the clock to
	n.start()
	n.apply(service("web", "10.96.0.10"), slice("web", endpoint{"10.244.1.5", nodeName}),
		service("api", "10.96.0.11"), slice("api", endpoint{"10.244.1.5", nodeName}))
	n.eventually("both load balancers", func() bool {
		clk.Step(n.minSyncPeriod)
		return len(n.lbs()) == 2
	})

	ctx := context.Background()
	if err := n.client.CoreV1().Services("default").Delete(ctx, "api", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	node, err := n.client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if node.Labels == nil {
		node.Labels = map[string]string{}
	}
	node.Labels[v1.LabelTopologyZone] = "zone-b"
	if _, err := n.client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	n.eventually("the proxier's caches holding both changes", func() bool {
		cached, err := n.proxier.nodes.Get(nodeName)
		return err == nil && cached.Labels[v1.LabelTopologyZone] == "zone-b" && n.cachesCaughtUp()
	})
	n.eventually("only web's load balancer", func() bool {
		clk.Step(n.minSyncPeriod)
		lbs := n.lbs()
		return len(lbs) == 1 && lbs[0].Frontend == "10.96.0.10"
	})
}

// TestAHealthCheckEndsWhenItsServiceStopsAskingForOne: a Service that
// turns its external traffic policy to Cluster has no health-check node
// port any more; the check it had must leave the health server, or a
// cloud load balancer keeps probing a port that answers for a policy
// gone (kube-proxy's health server drops it at the next sync).
func TestAHealthCheckEndsWhenItsServiceStopsAskingForOne(t *testing.T) {
	n, obs := observedNode(t, "ws2022", "10.244.1.5")
	lbName := types.NamespacedName{Namespace: "default", Name: "lb"}
	lb := func(policy v1.ServiceExternalTrafficPolicy, hcPort int32) *v1.Service {
		return service("lb", "10.96.0.10", func(s *v1.Service) {
			s.Spec.Type = v1.ServiceTypeLoadBalancer
			s.Spec.ExternalTrafficPolicy = policy
			s.Spec.Ports[0].NodePort = 30080
			s.Spec.HealthCheckNodePort = hcPort
		})
	}
	n.apply(lb(v1.ServiceExternalTrafficPolicyLocal, 32001), slice("lb", endpoint{"10.244.1.5", nodeName}))
	n.eventually("the Service's health check", func() bool {
		_, checks, _ := obs.last()
		return checks[lbName].NodePort == 32001
	})
	n.apply(lb(v1.ServiceExternalTrafficPolicyCluster, 0))
	n.eventually("the health check gone with the Local policy", func() bool {
		_, checks, _ := obs.last()
		_, ok := checks[lbName]
		return !ok
	})
}

// TestANodeHeartbeatQueuesNoSync: kubelet rewrites the Node's status on
// every condition change and every few minutes. Nothing hnsproxy reads of
// the Node changes, so, as kube-proxy (which reacts to the zone label
// only), it queues no sync: the last-queued metric and /healthz's pending
// update stay as they were (an HNS outage on a quiet node does not turn
// /healthz 503 because kubelet wrote a heartbeat). A zone change after it
// queues one sync, which recomputes every Service.
func TestANodeHeartbeatQueuesNoSync(t *testing.T) {
	n, obs := observedNode(t, "ws2025", "10.244.1.5")
	n.apply(service("web", "10.96.0.10"), slice("web", endpoint{"10.244.1.5", nodeName}))
	n.eventually("the load balancer", func() bool { return len(n.lbs()) == 1 })
	n.settle()

	ctx := context.Background()
	node, err := n.client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	obs.mu.Lock()
	syncs, queued := len(obs.syncs), obs.queued
	obs.mu.Unlock()
	node.Status.Conditions = append(node.Status.Conditions, v1.NodeCondition{
		Type: v1.NodeReady, Status: v1.ConditionTrue, LastHeartbeatTime: metav1.Now(),
	})
	if node, err = n.client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A label hnsproxy does not read, then the zone: the handler sees the
	// Node's updates in order, so once the zone's sync ran the heartbeat's
	// handler has run too.
	node.Labels["example.com/rack"] = "r7"
	if node, err = n.client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	node.Labels[v1.LabelTopologyZone] = "zone-b"
	if _, err := n.client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	n.eventually("the zone change's full recompute", func() bool {
		obs.mu.Lock()
		defer obs.mu.Unlock()
		for _, s := range obs.syncs[syncs:] {
			if s.Full && s.ServicesComputed == 1 {
				return true
			}
		}
		return false
	})
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if got := obs.queued - queued; got != 1 {
		t.Errorf("a heartbeat, an unread label and a zone change queued %d syncs; want 1 (the zone's)", got)
	}
}

func TestNodeChangesRecomputeEveryService(t *testing.T) {
	n, obs := observedNode(t, "ws2022", "10.244.1.5")
	n.apply(service("web", "10.96.0.10"), slice("web", endpoint{"10.244.1.5", nodeName}))
	n.eventually("load balancer with the node IP as source VIP", func() bool { return n.lbSourceVIPs() == nodeIP })
	n.settle()

	ctx := context.Background()
	node, err := n.client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// What the desired state reads of the Node recomputes every Service.
	recomputedAfter := func(what string, change func()) {
		t.Helper()
		obs.mu.Lock()
		syncs := len(obs.syncs)
		obs.mu.Unlock()
		change()
		if _, err := n.client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		n.eventually("a full recompute after the "+what, func() bool {
			obs.mu.Lock()
			defer obs.mu.Unlock()
			for _, s := range obs.syncs[syncs:] {
				if s.Full && s.ServicesComputed == 1 {
					return true
				}
			}
			return false
		})
	}
	recomputedAfter("zone change", func() { node.Labels[v1.LabelTopologyZone] = "zone-b" })
	// desired.Config.PodCIDRs: on overlay an address there that its slice
	// places on no node keeps the source VIP.
	recomputedAfter("pod CIDR change", func() {
		node.Spec.PodCIDR, node.Spec.PodCIDRs = "10.244.9.0/24", []string{"10.244.9.0/24", "fd00:10:244:9::/64"}
	})

	// The node IP comes from the Node's status: the first valid InternalIP
	// per family, before any ExternalIP; other address types and junk are
	// skipped.
	node.Status.Addresses = []v1.NodeAddress{
		{Type: v1.NodeExternalIP, Address: "198.51.100.1"},
		{Type: v1.NodeInternalIP, Address: "not-an-ip"},
		{Type: v1.NodeInternalIP, Address: "10.0.0.9"},
		{Type: v1.NodeInternalIP, Address: "10.0.0.10"},
		{Type: v1.NodeInternalIP, Address: "fd00::9"},
	}
	if _, err := n.client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	n.eventually("load balancer follows the new node IP", func() bool { return n.lbSourceVIPs() == "10.0.0.9" })
}

// lbSourceVIPs lists the load balancers' source VIPs, comma-separated.
func (n *testNode) lbSourceVIPs() string {
	var vips []string
	for _, lb := range n.hns.Snapshot().LoadBalancers {
		vips = append(vips, lb.SourceVIP)
	}
	return strings.Join(vips, ",")
}

// idleProxier is a Proxier whose informers never run: for handler and
// queue tests that call it directly.
func idleProxier(t *testing.T, opts Options) *Proxier {
	t.Helper()
	client := fake.NewClientset()
	if opts.NodeName == "" {
		opts.NodeName = nodeName
	}
	if opts.Reconciler == nil {
		opts.Reconciler = reconciler.New(sim.New(sim.Options{Seed: 1}), reconciler.Options{})
	}
	if opts.Kube == nil {
		opts.Kube = client
	}
	p, err := New(opts, informers.NewSharedInformerFactory(client, 0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.queue.ShutDown)
	return p
}

func TestHandlersIgnoreForeignObjectsAndUnwrapTombstones(t *testing.T) {
	p := idleProxier(t, Options{})
	unlabelled := slice("web", endpoint{"10.244.1.5", nodeName})
	unlabelled.Labels = nil
	p.onSlice(cacheSlice(unlabelled))
	p.onSlice(unlabelled) // the API type: not what the cache holds
	p.onSlice("not a slice")
	p.onService(42)
	p.onNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "other-node"}})
	if s, e := p.tracker.pending(); s != 0 || e != 0 || p.queue.Len() != 0 {
		t.Fatalf("foreign objects were tracked: %d service and %d endpoint changes, %d syncs queued", s, e, p.queue.Len())
	}
	if keys, _ := indexSliceByService(cacheSlice(unlabelled)); len(keys) != 0 {
		t.Errorf("unlabelled slice indexed under %v", keys)
	}
	if keys, _ := indexSliceByService("junk"); len(keys) != 0 {
		t.Errorf("non-slice indexed under %v", keys)
	}

	// Deletions the informer missed arrive as tombstones.
	p.onService(cache.DeletedFinalStateUnknown{Key: "default/web", Obj: service("web", "10.96.0.10")})
	p.onSlice(cache.DeletedFinalStateUnknown{Key: "default/web-abc", Obj: cacheSlice(slice("web"))})
	p.onNode(cache.DeletedFinalStateUnknown{Key: nodeName, Obj: &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName}}})
	got := p.tracker.take()
	web := types.NamespacedName{Namespace: "default", Name: "web"}
	if _, ok := got.services[web]; !ok || got.serviceChanges != 1 || got.endpointChanges != 1 || p.queue.Len() != 1 {
		t.Errorf("tombstones tracked as %+v with %d syncs queued, want one service and one endpoint change for %s and a sync", got, p.queue.Len(), web)
	}
}

func TestBadTriggerTimeIsIgnored(t *testing.T) {
	s := slice("web")
	s.Annotations = map[string]string{triggerTimeAnnotation: "yesterday"}
	if ts := cacheSlice(s).triggerTime; !ts.IsZero() {
		t.Error("unparsable trigger time accepted")
	}
}

func TestNewNeedsAReconcilerAndAClient(t *testing.T) {
	client := fake.NewClientset()
	f := informers.NewSharedInformerFactory(client, 0)
	if _, err := New(Options{NodeName: nodeName, Kube: client}, f); err == nil || !strings.Contains(err.Error(), "reconciler") {
		t.Errorf("New without a reconciler: %v, want an error naming it", err)
	}
	rec := reconciler.New(sim.New(sim.Options{Seed: 1}), reconciler.Options{})
	if _, err := New(Options{NodeName: nodeName, Reconciler: rec}, f); err == nil || !strings.Contains(err.Error(), "API client") {
		t.Errorf("New without an API client: %v, want an error naming it", err)
	}
}

func TestRequestSyncRespectsMinSyncPeriod(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(10000, 0))
	p := idleProxier(t, Options{MinSyncPeriod: 10 * time.Second, Clock: clk})

	// Long after the last sync: queued at once.
	p.requestSync()
	if p.queue.Len() != 1 {
		t.Fatalf("queue length %d after a request long after the last sync, want 1", p.queue.Len())
	}
	key, _ := p.queue.Get()
	p.queue.Done(key)

	// Right after a sync: held back until MinSyncPeriod has passed.
	p.mu.Lock()
	p.markSynced(clk.Now())
	p.mu.Unlock()
	p.requestSync()
	p.requestSync()
	clk.Step(9 * time.Second)
	if p.queue.Len() != 0 {
		t.Fatalf("sync queued %v after the last one, before MinSyncPeriod", 9*time.Second)
	}
	clk.Step(time.Second)
	waitFor(t, "the held-back sync", func() bool { return p.queue.Len() == 1 })
}

// A wall clock stepped back after a sync (w32time correcting a VM resumed
// from a pause) must not hold a change back for the size of the step: the
// wait after a sync is at most --min-sync-period.
func TestRequestSyncAfterTheClockStepsBackWaitsAtMostMinSyncPeriod(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(10000, 0))
	p := idleProxier(t, Options{MinSyncPeriod: 10 * time.Second, Clock: clk})
	p.mu.Lock()
	p.markSynced(clk.Now())
	p.mu.Unlock()

	clk.SetTime(clk.Now().Add(-time.Hour))
	p.requestSync()
	clk.Step(10 * time.Second)
	waitFor(t, "the change's sync within --min-sync-period of the step", func() bool { return p.queue.Len() == 1 })
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	(&testNode{t: t}).eventually(what, cond)
}

func TestRunReturnsWhenContextEnds(t *testing.T) {
	n, obs := observedNode(t, "ws2022")
	n.eventually("the first sync", func() bool { return obs.anySync(func(SyncStats) bool { return true }) })
	n.cancel()
	if err := <-n.done; err != nil {
		t.Errorf("Run after cancel: %v, want nil", err)
	}
	n.cancel = nil
}

func TestRunFailsWhenCachesNeverSync(t *testing.T) {
	p := idleProxier(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.Run(ctx); err == nil || !errors.Is(err, context.Canceled) {
		t.Errorf("Run with unstarted informers and a cancelled context: %v, want the cancellation", err)
	}
}

func TestRunFailsWhenHNSIsDownAtStart(t *testing.T) {
	defer func(d time.Duration) { startRetryFor = d }(startRetryFor)
	startRetryFor = 300 * time.Millisecond
	n := newTestNode(t, "ws2022")
	n.hns.Restart(time.Hour)
	n.start()
	err := <-n.done
	n.cancel()
	n.cancel = nil
	if !hnslb.IsUnavailable(err) || !strings.Contains(err.Error(), "starting reconciler") {
		t.Errorf("Run with HNS down: %v, want an unavailable error from starting the reconciler", err)
	}
}

// A transient HNS failure at start (a restart, a lost reply) is retried:
// found by the fault soak, where hnsproxy exited on one injected error.
func TestRunRetriesAStartThatHNSFailsBriefly(t *testing.T) {
	n := newTestNode(t, "ws2022", "10.244.1.5")
	n.hns.Restart(500 * time.Millisecond)
	n.start()
	n.apply(service("web", "10.96.0.10"), slice("web", endpoint{"10.244.1.5", nodeName}))
	n.eventually("the load balancer after HNS came back", func() bool { return len(n.hns.Snapshot().LoadBalancers) == 1 })
	select {
	case err := <-n.done:
		t.Fatalf("Run ended while HNS restarted briefly: %v", err)
	default:
	}
}

func TestFailedWritesAreRetriedWithoutNewEvents(t *testing.T) {
	n, obs := observedNode(t, "ws2022", "10.244.1.5")
	n.settle()
	n.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpCreateLoadBalancer: 1}})
	n.apply(service("web", "10.96.0.10"), slice("web", endpoint{"10.244.1.5", nodeName}))
	n.eventually("a sync reporting the failed create", func() bool {
		return obs.anySync(func(s SyncStats) bool { return s.Result.Failed > 0 })
	})
	// No Kubernetes change follows: only the retry the sync loop scheduled
	// from the reconciler's backoff can create the load balancer.
	n.hns.SetFaults(sim.Faults{})
	n.eventually("load balancer created by a retry", func() bool { return len(n.lbs()) == 1 })
}

// An HNS restart that drops objects (docs/simulator.md, "Restart": which it
// drops is not known) is repaired when HNS answers again, not at the next
// drift repair (an hour here): the load balancer of a Service nothing
// changed comes back only through that listing. Where the restart dropped
// the containers' endpoints too, the load balancers come back with their
// remote backends.
func TestHNSRestartThatDropsObjectsIsRepairedWhenHNSReturns(t *testing.T) {
	for _, profile := range []string{"ws2022", "ws2025"} {
		for _, loss := range sim.RestartLosses {
			t.Run(profile+"/"+cmp.Or(string(loss), "keeps-all"), func(t *testing.T) {
				n, _ := observedNode(t, profile, "10.244.1.5", "10.244.1.6", "10.244.1.7")
				n.apply(service("web", "10.96.0.10"), slice("web", endpoint{"10.244.1.5", nodeName}, endpoint{"10.244.2.7", "win-2"}),
					service("db", "10.96.0.11"), slice("db", endpoint{"10.244.1.6", nodeName}, endpoint{"10.244.2.8", "win-2"}))
				n.eventually("two load balancers", func() bool { return len(n.lbs()) == 2 })
				n.settle()

				if err := n.hns.RestartLosing(time.Hour, loss); err != nil {
					t.Fatal(err)
				}
				n.apply(slice("web", endpoint{"10.244.1.5", nodeName}, endpoint{"10.244.1.7", nodeName}, endpoint{"10.244.2.7", "win-2"}))
				// A restart takes seconds: the reconciler's probe sees HNS down too.
				n.eventually("a probe refused by the restarting HNS", func() bool {
					return n.hns.Counters().CountResult(sim.OpGetNetwork, "RPCServerUnavailable") > 0
				})
				n.hns.Restart(0)
				want := []lbView{{Backends: []string{"10.244.1.5", "10.244.1.7", "10.244.2.7"}}, {Backends: []string{"10.244.1.6", "10.244.2.8"}}}
				if loss == sim.RestartLosesEndpoints { // no pod endpoint left to use
					want = []lbView{{Backends: []string{"10.244.2.7"}}, {Backends: []string{"10.244.2.8"}}}
				}
				n.eventually("both load balancers as the Services want them", func() bool {
					got := n.lbs()
					return len(got) == 2 && slices.Equal(got[0].Backends, want[0].Backends) && slices.Equal(got[1].Backends, want[1].Backends) &&
						slices.Equal(n.remoteEndpointIPs(), []string{"10.244.2.7", "10.244.2.8"})
				})
			})
		}
	}
}

func TestHNSRestartDuringSyncConvergesWithoutDeletes(t *testing.T) {
	n, _ := observedNode(t, "ws2025", "10.244.1.5", "10.244.1.6")
	n.apply(service("web", "10.96.0.10"), slice("web", endpoint{"10.244.1.5", nodeName}, endpoint{"10.244.2.7", "win-2"}))
	n.eventually("load balancer", func() bool { return len(n.lbs()) == 1 })
	n.settle()
	before := n.hns.Snapshot().LoadBalancers[0].ID
	n.hns.ResetCounters()

	n.hns.Restart(time.Hour)
	n.apply(slice("web", endpoint{"10.244.1.5", nodeName}, endpoint{"10.244.1.6", nodeName}, endpoint{"10.244.2.7", "win-2"}))
	// A drift repair falls due while HNS is down, too.
	n.proxier.mu.Lock()
	n.proxier.lastRepair = time.Time{}
	n.proxier.mu.Unlock()
	n.eventually("a sync hitting the restarting HNS", func() bool {
		c := n.hns.Counters()
		return c.CountResult(sim.OpUpdateLoadBalancer, "RPCServerUnavailable") > 0 &&
			c.CountResult(sim.OpListLoadBalancers, "RPCServerUnavailable") > 0
	})
	n.hns.Restart(0)
	n.eventually("the update applied after the restart", func() bool {
		lbs := n.lbs()
		return len(lbs) == 1 && len(lbs[0].Backends) == 3
	})
	// The repair that failed while HNS was down is retried after a backoff;
	// settle may find HNS quiet before that retry.
	n.eventually("a drift repair succeeding after the restart", func() bool {
		n.proxier.mu.Lock()
		defer n.proxier.mu.Unlock()
		return !n.proxier.lastRepair.IsZero()
	})
	n.settle()
	c := n.hns.Counters()
	if d := c.Count(sim.OpDeleteLoadBalancer) + c.Count(sim.OpDeleteEndpoint); d != 0 {
		t.Errorf("HNS restart led to %d deletes, want 0 (%+v)", d, c.Calls)
	}
	if after := n.hns.Snapshot().LoadBalancers[0].ID; after != before {
		t.Errorf("load balancer replaced (%s → %s), want modified in place", before, after)
	}
}

// A Node whose status loses every address (recreated by an operator, or
// re-registered before the cloud controller fills them) must not empty HNS:
// the last known addresses stay in use, with one Warning event.
func TestNodeWithoutAddressesKeepsTheLastKnownOnes(t *testing.T) {
	n, _ := observedNode(t, "ws2022", "10.244.1.5")
	n.apply(service("web", "10.96.0.10"), slice("web", endpoint{"10.244.1.5", nodeName}))
	n.eventually("load balancer with the node IP as source VIP", func() bool { return n.lbSourceVIPs() == nodeIP })
	n.settle()
	before := n.lbs()

	ctx := context.Background()
	node, err := n.client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node.Status.Addresses = nil
	if _, err := n.client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	n.eventually("a NodeAddressesMissing event", func() bool {
		return drainUntil(n.recorder.Events, ReasonNodeAddressesMissing)
	})
	n.settle()
	if got := n.lbs(); !reflect.DeepEqual(got, before) {
		t.Fatalf("HNS changed after the Node lost its addresses:\n got %+v\nwant %+v", got, before)
	}

	node.Status.Addresses = []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.9"}}
	if _, err := n.client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	n.eventually("load balancer follows the returned node IP", func() bool { return n.lbSourceVIPs() == "10.0.0.9" })
}

// drainUntil reads events without blocking until one carries reason.
func drainUntil(events <-chan string, reason string) bool {
	for {
		select {
		case e := <-events:
			if strings.Contains(e, reason) {
				return true
			}
		default:
			return false
		}
	}
}

// TestRestartWithoutNodeAddressesLeavesHNSAlone (F6, found by the soak): a
// restart while the Node has no address used to prune every load balancer
// of the previous run at the first sync. The first sync now waits for an
// address, then adopts what is there without a write.
func TestRestartWithoutNodeAddressesLeavesHNSAlone(t *testing.T) {
	n, before := stoppedWithOneLoadBalancer(t)

	ctx := context.Background()
	node, err := n.client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	addresses := node.Status.Addresses
	node.Status.Addresses = nil
	if node, err = n.client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	n.hns.ResetCounters()
	n.start()
	n.eventually("a NodeAddressesMissing event", func() bool {
		return drainUntil(n.recorder.Events, ReasonNodeAddressesMissing)
	})
	if got := n.lbs(); !reflect.DeepEqual(got, before) || n.hns.Counters().Writes() != 0 {
		t.Fatalf("HNS changed while the restarted proxy had no node address: %+v (writes %d)", got, n.hns.Counters().Writes())
	}
	node.Status.Addresses = addresses
	if _, err := n.client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	n.eventually("the first sync", func() bool { return n.proxier.lastSync.Load() != nil })
	n.settle()
	if got := n.lbs(); !reflect.DeepEqual(got, before) || n.hns.Counters().Writes() != 0 {
		t.Errorf("after the address returned: %+v (writes %d)", got, n.hns.Counters().Writes())
	}
}

// hookObserver records syncs and calls during once, inside the sync after
// the first (its HealthChecks call comes before the sync ends).
type hookObserver struct {
	recordingObserver
	during func()
}

func (o *hookObserver) HealthChecks(c map[types.NamespacedName]desired.HealthCheck) {
	o.mu.Lock()
	during := o.during
	if len(o.syncs) != 1 {
		during = nil
	} else {
		o.during = nil
	}
	o.mu.Unlock()
	if during != nil {
		during()
	}
	o.recordingObserver.HealthChecks(c)
}

// A change that arrives while a sync runs waits --min-sync-period after that
// sync's end, as kube-proxy's BoundedFrequencyRunner waits minInterval after
// each run, even when the sync began long after the one before it.
func TestChangeDuringASyncWaitsMinSyncPeriodAfterIt(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(10000, 0))
	n := newTestNode(t, "ws2022", "10.244.1.5")
	n.clock = clk
	n.minSyncPeriod = 10 * time.Second
	obs := &hookObserver{}
	obs.during = func() { n.proxier.onService(service("late", "10.96.0.11")) }
	n.observer = obs
	n.start()
	syncs := func() []SyncStats {
		obs.mu.Lock()
		defer obs.mu.Unlock()
		return append([]SyncStats(nil), obs.syncs...)
	}
	n.eventually("first sync", func() bool { return len(syncs()) == 1 })
	clk.Step(time.Minute) // long after it
	n.apply(service("web", "10.96.0.10"))
	n.eventually("the change's sync", func() bool { return len(syncs()) >= 2 })
	clk.Step(n.minSyncPeriod)
	n.eventually("the late change's sync", func() bool { return len(syncs()) >= 3 })
	s := syncs()
	if gap := s[2].Start.Sub(s[1].End); gap < n.minSyncPeriod {
		t.Errorf("a change made during a sync was synced %v after that sync ended, want at least --min-sync-period %v", gap, n.minSyncPeriod)
	}
}

// HNS refusing Start's load balancer listing with a code, not as
// unavailable, is retried (reconciler startListingError) but not for
// ever: Run ends after startRetryFor with HNS's code and an error that
// says the start was retried, not that one call failed.
func TestRunEndsWhenHNSKeepsRefusingTheStartsListing(t *testing.T) {
	defer func(d time.Duration) { startRetryFor = d }(startRetryFor)
	startRetryFor = 300 * time.Millisecond
	n := newTestNode(t, "ws2022")
	n.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpListLoadBalancers: 1}, Errors: []hnslb.ErrorCode{hnslb.CodeInvalidParameter}})
	n.start()
	err := <-n.done
	n.cancel()
	n.cancel = nil
	if code, ok := hnslb.CodeOf(err); !ok || code != hnslb.CodeInvalidParameter {
		t.Errorf("Run with the listing refused: %v, want HNS's 0x57", err)
	}
	for _, want := range []string{"starting reconciler", "list load balancers", "attempts over", "retries its start for 300ms"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Run with the listing refused: %v, want it to say %q", err, want)
		}
	}
	if n.hns.Counters().Count(sim.OpListLoadBalancers) < 2 {
		t.Errorf("the listing was made %d times, want it retried", n.hns.Counters().Count(sim.OpListLoadBalancers))
	}
}
