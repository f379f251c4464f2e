package app

import (
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	k8smetrics "k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"
	clocktesting "k8s.io/utils/clock/testing"

	hnsevents "github.com/hnsproxy/hnsproxy/events"
	"github.com/hnsproxy/hnsproxy/healthcheck"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/metrics"
	"github.com/hnsproxy/hnsproxy/proxier"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
	"github.com/hnsproxy/hnsproxy/reconciler"
)

type statuses struct {
	lbs []reconciler.Status
	eps []reconciler.EndpointStatus
	// gathering: the reconciler has not handed the statuses over yet.
	gathering bool
}

func (s statuses) StatusSnapshot() *reconciler.StatusSnapshot {
	if s.gathering {
		return &reconciler.StatusSnapshot{Gathering: true}
	}
	return &reconciler.StatusSnapshot{LoadBalancers: s.lbs, RemoteEndpoints: s.eps}
}

// ObjectCounts counts as the reconciler does, from the statuses.
func (s statuses) ObjectCounts() reconciler.ObjectCounts {
	var c reconciler.ObjectCounts
	count := func(k *reconciler.KindCounts, desired bool, state reconciler.State) {
		if desired {
			k.Desired++
		}
		switch state {
		case reconciler.StateDone:
			k.Done++
		case reconciler.StateError:
			k.Failed++
		}
	}
	for _, st := range s.lbs {
		count(&c.LoadBalancers, st.Desired != nil, st.State)
	}
	for _, st := range s.eps {
		count(&c.RemoteEndpoints, st.Desired, st.State)
	}
	return c
}

// fakeBroadcaster hands every NewRecorder the same fake recorder, so the
// test builds its reporter the way run.go does (events.NewReporter).
type fakeBroadcaster struct {
	// Only NewRecorder is called; the embedded nil interface fills the rest.
	events.EventBroadcaster
	rec *events.FakeRecorder
}

func (b fakeBroadcaster) NewRecorder(*runtime.Scheme, string) events.EventRecorderLogger {
	return b.rec
}

// must unwraps a metric read; a read error is a broken test, so it panics.
func must(v float64, err error) float64 {
	if err != nil {
		panic(err)
	}
	return v
}

func TestObserverFeedsMetricsAndHealth(t *testing.T) {
	metrics.Register()
	clk := clocktesting.NewFakeClock(time.Unix(1_800_000_000, 0))
	health := healthcheck.NewProxyHealthServer(clk, time.Minute, nil)
	lb := intent.LB{Owner: "shop/web:http"}
	webKey := intent.LBKey{Family: intent.IPv4, VIP: "10.96.0.10", Protocol: hnslb.ProtocolTCP, Port: 80}
	rec := events.NewFakeRecorder(10)
	obs := newObserver([]string{"10.244.0.0/16", "fd00::/56"}, health, nil, statuses{
		lbs: []reconciler.Status{
			{Desired: &lb, State: reconciler.StateDone},
			{Key: webKey, Owner: "shop/web:http", Desired: &lb, State: reconciler.StateError},
			{State: reconciler.StatePending},
		},
		eps: []reconciler.EndpointStatus{{Desired: true, State: reconciler.StateDone}},
	}, hnsevents.NewReporter(fakeBroadcaster{rec: rec}, "win-1"))
	if len(obs.families) != 2 || obs.families[1] != v1.IPv6Protocol {
		t.Fatalf("families = %v", obs.families)
	}

	beforeSvc := must(testutil.GetCounterMetricValue(metrics.ServiceChangesTotal))
	obs.SyncDone(proxier.SyncStats{Start: clk.Now(), End: clk.Now()}) // the first sync
	obs.SyncQueued(clk.Now())
	obs.Changes(proxier.Changes{Services: 1, PendingServices: 2, PendingEndpoints: 5})
	if got := must(testutil.GetGaugeMetricValue(metrics.ServiceChangesPending)); got != 2 {
		t.Errorf("service changes pending = %v, want 2", got)
	}
	if got := must(testutil.GetGaugeMetricValue(metrics.EndpointChangesPending)); got != 5 {
		t.Errorf("endpoint changes pending = %v, want 5", got)
	}
	clk.Step(2 * time.Minute)
	if health.Health().Healthy {
		t.Fatal("a queued update older than the timeout should be unhealthy")
	}
	unreachable := hnslb.NewError("CreateLoadBalancer", hnslb.CodeRPCServerUnavailable, "HNS is restarting")
	obs.SyncDone(proxier.SyncStats{Start: clk.Now(), End: clk.Now().Add(time.Second),
		Result: reconciler.SyncResult{Failed: 1, Errors: []reconciler.ObjectError{{Kind: reconciler.KindLoadBalancer, Err: unreachable}}}})
	if health.Health().Healthy {
		t.Error("a sync that could not reach HNS must not count as synced")
	}
	if !health.Liveness().Healthy {
		t.Error("a sync that finished without reaching HNS is a live loop: /livez must stay healthy (F7)")
	}
	rejected := hnslb.NewError("CreateLoadBalancer", hnslb.CodePortAlreadyExists, "exists")
	// The start-up's cap, which syncs that learn none leave in place.
	metrics.SetBackendCap(64, metrics.BackendCapFromHNSVersion)
	for range 2 { // a load balancer HNS keeps refusing is reported once
		obs.SyncDone(proxier.SyncStats{Start: clk.Now(), End: clk.Now().Add(time.Second), Full: true, Truncated: 7, MixedPortDropped: 2,
			NoLocalEndpoints: map[string]int{"external": 4},
			Result: reconciler.SyncResult{Failed: 1, Errors: []reconciler.ObjectError{{Kind: reconciler.KindLoadBalancer, Name: webKey.String(), Err: rejected}},
				ForeignHeld: []reconciler.ForeignFrontend{{Key: intent.LBKey{Family: intent.IPv4, VIP: "203.0.113.7", Protocol: hnslb.ProtocolTCP, Port: 443}, ID: "foreign-1"}}}})
	}
	if len(rec.Events) != 1 {
		t.Fatalf("%d rejection events, want 1", len(rec.Events))
	}
	if ev := <-rec.Events; !strings.Contains(ev, "HNSLoadBalancerRejected") || !strings.Contains(ev, "port http (10.96.0.10:80/tcp)") || !strings.Contains(ev, "0x803b0013") {
		t.Errorf("event = %q", ev)
	}
	if !health.Health().Healthy {
		t.Error("one rejected load balancer must not make the node unhealthy")
	}
	if got := must(testutil.GetCounterMetricValue(metrics.ServiceChangesTotal)) - beforeSvc; got != 1 {
		t.Errorf("service changes moved by %v", got)
	}
	checks := map[string]float64{
		"truncated": must(testutil.GetGaugeMetricValue(metrics.BackendsTruncated)),
		"mixed":     must(testutil.GetGaugeMetricValue(metrics.EndpointsDroppedMixedPorts)),
		"no local":  must(testutil.GetGaugeMetricValue(metrics.SyncProxyRulesNoLocalEndpointsTotal.WithLabelValues("external", "IPv4"))),
		"lb want":   must(testutil.GetGaugeMetricValue(metrics.Objects.WithLabelValues(metrics.KindLoadBalancer, metrics.StateDesired))),
		"lb done":   must(testutil.GetGaugeMetricValue(metrics.Objects.WithLabelValues(metrics.KindLoadBalancer, metrics.StateRealized))),
		"lb failed": must(testutil.GetGaugeMetricValue(metrics.Objects.WithLabelValues(metrics.KindLoadBalancer, metrics.StateFailed))),
		"ep done":   must(testutil.GetGaugeMetricValue(metrics.Objects.WithLabelValues(metrics.KindRemoteEndpoint, metrics.StateRealized))),
		"last sync": must(testutil.GetGaugeMetricValue(metrics.SyncProxyRulesLastTimestamp.WithLabelValues("IPv6"))),
		"foreign":   must(testutil.GetGaugeMetricValue(metrics.ForeignFrontendConflicts)),
	}
	want := map[string]float64{"truncated": 7, "mixed": 2, "no local": 4, "lb want": 2, "lb done": 1, "lb failed": 1, "ep done": 1, "foreign": 1,
		"last sync": float64(clk.Now().Add(time.Second).Unix())}
	for k, w := range want {
		if checks[k] != w {
			t.Errorf("%s = %v, want %v", k, checks[k], w)
		}
	}
	n, err := testutil.GetHistogramMetricCount(metrics.SyncFullProxyRulesLatency.WithLabelValues("IPv4"))
	if err != nil || n == 0 {
		t.Errorf("full sync latency not observed: %d %v", n, err)
	}
	// Syncs that learned no cap leave the start-up's in place; a learned
	// one replaces it.
	if got := must(testutil.GetGaugeMetricValue(metrics.BackendCap.WithLabelValues(metrics.BackendCapFromHNSVersion))); got != 64 {
		t.Errorf("backend cap from the HNS version after syncs that learned none = %v, want 64", got)
	}
	obs.SyncDone(proxier.SyncStats{Start: clk.Now(), End: clk.Now(), Result: reconciler.SyncResult{LearnedBackendCap: 32}})
	if got := must(testutil.GetGaugeMetricValue(metrics.BackendCap.WithLabelValues(metrics.BackendCapLearned))); got != 32 {
		t.Errorf("learned backend cap = %v, want 32", got)
	}
}

func TestObserverOpensHealthCheckPorts(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	health := healthcheck.NewProxyHealthServer(clocktesting.NewFakeClock(time.Now()), time.Minute, nil)
	services := healthcheck.NewServiceHealthServer("win-1", nil, []string{"127.0.0.1"}, health)
	t.Cleanup(services.Close)
	obs := newObserver(nil, health, services, nil, nil)
	web := types.NamespacedName{Namespace: "shop", Name: "web"}
	nohc := types.NamespacedName{Namespace: "shop", Name: "nohc"}
	obs.HealthChecks(map[types.NamespacedName]desired.HealthCheck{web: {NodePort: port, LocalIPv4: 2}, nohc: {}})
	if addrs := services.Addrs(nohc); addrs != nil {
		t.Errorf("a Service without a health-check node port listens on %v, want nothing", addrs)
	}
	resp, err := http.Get("http://" + net.JoinHostPort("127.0.0.1", itoa(port)) + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("X-Load-Balancing-Endpoint-Weight") != "2" {
		t.Errorf("health check = %d weight %q", resp.StatusCode, resp.Header.Get("X-Load-Balancing-Endpoint-Weight"))
	}
	obs.HealthChecks(nil)
	if services.Addrs(web) != nil {
		t.Error("the health check stayed open after its service went away")
	}
}

func itoa(p uint16) string { return strconv.Itoa(int(p)) }

// TestReconcilerCountsReachTheirMetrics: what the reconciler tells of drift
// and of deletes HNS kept is counted under the kind label the dashboards use.
func TestReconcilerCountsReachTheirMetrics(t *testing.T) {
	metrics.Register()
	for _, tc := range []struct {
		tell   func(reconciler.ObjectKind)
		metric interface {
			WithLabelValues(...string) k8smetrics.CounterMetric
		}
		name string
	}{
		{driftRepaired, metrics.DriftRepairsTotal, "hnsproxy_drift_repairs_total"},
		{deleteKept, metrics.HNSDeletesKeptTotal, "hnsproxy_hns_deletes_kept_total"},
	} {
		lb := tc.metric.WithLabelValues(metrics.KindLoadBalancer)
		ep := tc.metric.WithLabelValues(metrics.KindRemoteEndpoint)
		lbBefore, epBefore := must(testutil.GetCounterMetricValue(lb)), must(testutil.GetCounterMetricValue(ep))
		tc.tell(reconciler.KindLoadBalancer)
		tc.tell(reconciler.KindRemoteEndpoint)
		tc.tell(reconciler.KindRemoteEndpoint)
		tc.tell(reconciler.KindStale) // not a kind these count
		if d := must(testutil.GetCounterMetricValue(lb)) - lbBefore; d != 1 {
			t.Errorf("%s{kind=loadbalancer} rose by %v, want 1", tc.name, d)
		}
		if d := must(testutil.GetCounterMetricValue(ep)) - epBefore; d != 2 {
			t.Errorf("%s{kind=remote_endpoint} rose by %v, want 2", tc.name, d)
		}
	}
}

// TestObserverReportsRefusedAddresses: HNS refuses a backend's remote
// endpoint for its address, and the load balancer leaves it out. The
// Service gets one HNSEndpointAddressRefused Warning naming the backend,
// the port and why, however many retries HNS refuses; another after the
// backend was programmed and is refused again, and another when HNS
// refuses it for another reason; none for other errors of the endpoint.
func TestObserverReportsRefusedAddresses(t *testing.T) {
	metrics.Register()
	clk := clocktesting.NewFakeClock(time.Unix(1_800_000_000, 0))
	health := healthcheck.NewProxyHealthServer(clk, time.Minute, nil)
	webKey := intent.LBKey{Family: intent.IPv4, VIP: "10.96.0.10", Protocol: hnslb.ProtocolTCP, Port: 80}
	lb := intent.LB{Key: webKey, Owner: "shop/web:http"}
	src := &statuses{lbs: []reconciler.Status{{Key: webKey, Owner: "shop/web:http", Desired: &lb, State: reconciler.StatePending, MissingBackends: []string{"10.244.3.31"}}}}
	rec := events.NewFakeRecorder(10)
	obs := newObserver(nil, health, nil, src, hnsevents.NewReporter(fakeBroadcaster{rec: rec}, "win-1"))
	sync := func(errs ...reconciler.ObjectError) {
		obs.SyncDone(proxier.SyncStats{Start: clk.Now(), End: clk.Now(), Result: reconciler.SyncResult{Failed: len(errs), Errors: errs}})
	}
	reserved := reconciler.ObjectError{Kind: reconciler.KindRemoteEndpoint, Name: "10.244.3.31",
		Err: &reconciler.AddressRefusedError{IP: "10.244.3.31", Err: hnslb.NewError("CreateEndpoint", hnslb.CodeAddrInvalidOrReserved, "")}}
	sync(reconciler.ObjectError{Kind: reconciler.KindRemoteEndpoint, Name: "10.244.3.31", Err: hnslb.NewError("CreateEndpoint", hnslb.CodeTimeout, "")})
	for range 3 {
		sync(reserved)
	}
	if len(rec.Events) != 1 {
		t.Fatalf("%d events, want 1", len(rec.Events))
	}
	if ev := <-rec.Events; !strings.Contains(ev, "HNSEndpointAddressRefused") || !strings.Contains(ev, "backend 10.244.3.31 of port http (10.96.0.10:80/tcp)") ||
		!strings.Contains(ev, "invalid or reserved") {
		t.Errorf("event = %q", ev)
	}
	src.lbs[0].MissingBackends, src.lbs[0].State = nil, reconciler.StateDone
	sync()
	src.lbs[0].MissingBackends = []string{"10.244.3.31"}
	sync(reserved)
	if len(rec.Events) != 1 {
		t.Fatalf("%d events after the refusal came back, want 1", len(rec.Events))
	}
	<-rec.Events
	sync(reconciler.ObjectError{Kind: reconciler.KindRemoteEndpoint, Name: "10.244.3.31",
		Err: hnslb.NewError("CreateEndpoint", hnslb.CodeInvalidParameter, "The parameter is incorrect.")})
	if len(rec.Events) != 1 {
		t.Fatalf("%d events once HNS refused the endpoint for another reason, want 1", len(rec.Events))
	}
	if ev := <-rec.Events; !strings.Contains(ev, "HNSEndpointRejected") || !strings.Contains(ev, "backend 10.244.3.31") {
		t.Errorf("event = %q, want HNSEndpointRejected for backend 10.244.3.31", ev)
	}
}

// kube-proxy's sync loop marks each family updated when it starts
// (pkg/proxy/winkernel SyncLoop calls healthzServer.Updated before any
// sync), so a change that waits 2 x sync period for a first sync that
// never reaches the dataplane turns /healthz 503. Before that mark a
// family counts as starting up; without it hnsproxy's /healthz would stay
// 200 for as long as the first sync fails. /livez keeps hnsproxy's own
// start-up grace until the loop finishes a sync (healthcheck/liveness.go).
func TestHealthzFailsWhenTheFirstSyncNeverReachesHNS(t *testing.T) {
	metrics.Register()
	clk := clocktesting.NewFakeClock(time.Unix(1_800_000_000, 0))
	health := healthcheck.NewProxyHealthServer(clk, time.Minute, nil)
	obs := newObserver([]string{"10.244.0.0/16", "fd00::/56"}, health, nil, nil, nil)
	clk.Step(time.Second)
	obs.SyncQueued(clk.Now())
	clk.Step(time.Minute - time.Nanosecond)
	if !health.Health().Healthy {
		t.Fatal("a change queued less than the timeout ago must not make the proxy unhealthy")
	}
	clk.Step(time.Nanosecond)
	h := health.Health()
	if h.Healthy || h.Status[v1.IPv4Protocol].Healthy || h.Status[v1.IPv6Protocol].Healthy {
		t.Errorf("no sync for the timeout since the loop started and a change was queued: health = %+v, want unhealthy in both families", h)
	}
	if !health.Liveness().Healthy {
		t.Error("/livez must keep its start-up grace until the first sync finishes")
	}
	unreachable := hnslb.NewError("CreateLoadBalancer", hnslb.CodeRPCServerUnavailable, "HNS is restarting")
	obs.SyncDone(proxier.SyncStats{Start: clk.Now(), End: clk.Now(),
		Result: reconciler.SyncResult{Failed: 1, Errors: []reconciler.ObjectError{{Kind: reconciler.KindLoadBalancer, Err: unreachable}}}})
	if health.Health().Healthy {
		t.Error("a first sync that met HNS unreachable must not make the proxy healthy")
	}
	obs.SyncDone(proxier.SyncStats{Start: clk.Now(), End: clk.Now()})
	if !health.Health().Healthy || !health.Liveness().Healthy {
		t.Error("a sync that reached HNS makes the proxy healthy")
	}
}

// kube-proxy's change trackers count a Service or EndpointSlice change when
// it arrives and zero the pending gauges when a sync takes the changes: a
// change that arrives while a sync runs still waits when that sync ends,
// and the totals move while no sync ends (a sync stuck on HNS).
func TestChangeMetricsMoveWithTheChangesNotTheSyncs(t *testing.T) {
	metrics.Register()
	obs := newObserver(nil, nil, nil, nil, nil)
	svcTotal := must(testutil.GetCounterMetricValue(metrics.ServiceChangesTotal))
	epTotal := must(testutil.GetCounterMetricValue(metrics.EndpointChangesTotal))
	gauges := func(wantSvc, wantEp float64) {
		t.Helper()
		if got := must(testutil.GetGaugeMetricValue(metrics.ServiceChangesPending)); got != wantSvc {
			t.Errorf("service changes pending = %v, want %v", got, wantSvc)
		}
		if got := must(testutil.GetGaugeMetricValue(metrics.EndpointChangesPending)); got != wantEp {
			t.Errorf("endpoint changes pending = %v, want %v", got, wantEp)
		}
	}
	totals := func(wantSvc, wantEp float64) {
		t.Helper()
		if got := must(testutil.GetCounterMetricValue(metrics.ServiceChangesTotal)) - svcTotal; got != wantSvc {
			t.Errorf("service changes total moved by %v, want %v", got, wantSvc)
		}
		if got := must(testutil.GetCounterMetricValue(metrics.EndpointChangesTotal)) - epTotal; got != wantEp {
			t.Errorf("endpoint changes total moved by %v, want %v", got, wantEp)
		}
	}

	obs.Changes(proxier.Changes{Services: 1, PendingServices: 1})
	obs.Changes(proxier.Changes{Endpoints: 1, PendingServices: 1, PendingEndpoints: 1})
	totals(1, 1) // before any sync
	gauges(1, 1)

	obs.Changes(proxier.Changes{}) // a sync takes them
	gauges(0, 0)
	obs.Changes(proxier.Changes{Endpoints: 1, PendingEndpoints: 1}) // while it runs
	obs.SyncDone(proxier.SyncStats{ServiceChanges: 1, EndpointChanges: 1})
	gauges(0, 1)
	totals(1, 2) // the sync's own counts are not added again
}

// While HNS is down, a sync with no retry due calls nothing and so fails
// nothing: it is no sync that reached HNS, for the last-sync timestamp (and
// the HNSProxySyncStale alert) nor for /healthz, as kube-proxy's sync that
// fails at its network lookup is none.
func TestSyncWhileHNSIsDownIsNotASync(t *testing.T) {
	metrics.Register()
	clk := clocktesting.NewFakeClock(time.Unix(1_900_000_000, 0))
	health := healthcheck.NewProxyHealthServer(clk, time.Minute, nil)
	obs := newObserver(nil, health, nil, nil, nil)
	obs.SyncDone(proxier.SyncStats{Start: clk.Now(), End: clk.Now()})
	last := func() float64 {
		return must(testutil.GetGaugeMetricValue(metrics.SyncProxyRulesLastTimestamp.WithLabelValues("IPv4")))
	}
	synced := last()
	clk.Step(time.Second)
	obs.SyncQueued(clk.Now())
	clk.Step(2 * time.Minute)
	obs.SyncDone(proxier.SyncStats{Start: clk.Now(), End: clk.Now(), Result: reconciler.SyncResult{HNSDown: true}})
	if got := last(); got != synced {
		t.Errorf("last sync timestamp moved to %v during an HNS outage, want %v", got, synced)
	}
	if health.Health().Healthy {
		t.Error("a change waiting through an HNS outage must leave /healthz unhealthy")
	}
	obs.SyncDone(proxier.SyncStats{Start: clk.Now(), End: clk.Now()})
	if got := last(); got == synced || !health.Health().Healthy {
		t.Errorf("a sync after HNS answers: timestamp %v (was %v), healthy %v", got, synced, health.Health().Healthy)
	}
}

// A change's network programming latency ends when HNS is programmed: a
// sync that could not reach HNS observes none, as kube-proxy's Linux
// proxiers observe only after a successful restore.
func TestNoProgrammingLatencyFromASyncThatMissedHNS(t *testing.T) {
	metrics.Register()
	obs := newObserver(nil, nil, nil, nil, nil)
	count := func() uint64 { return samples(t, metrics.NetworkProgrammingLatency.WithLabelValues("IPv4")) }
	before := count()
	unreachable := hnslb.NewError("CreateLoadBalancer", hnslb.CodeRPCServerUnavailable, "HNS is restarting")
	obs.SyncDone(proxier.SyncStats{ProgrammingLatency: map[intent.IPFamily][]time.Duration{intent.IPv4: {3 * time.Second}},
		Result: reconciler.SyncResult{Failed: 1, Errors: []reconciler.ObjectError{{Kind: reconciler.KindLoadBalancer, Err: unreachable}}}})
	obs.SyncDone(proxier.SyncStats{ProgrammingLatency: map[intent.IPFamily][]time.Duration{intent.IPv4: {time.Second}}, Result: reconciler.SyncResult{HNSDown: true}})
	if got := count() - before; got != 0 {
		t.Errorf("%d programming latencies observed from syncs that did not reach HNS, want 0", got)
	}
	obs.SyncDone(proxier.SyncStats{ProgrammingLatency: map[intent.IPFamily][]time.Duration{intent.IPv4: {2 * time.Second}}})
	if got := count() - before; got != 1 {
		t.Errorf("%d programming latencies observed after a sync that reached HNS, want 1", got)
	}
}

// TestProgrammingLatencyIsLabelledWithItsSlicesFamily: on a dual-stack
// cluster an IPv6 slice's network programming latency is an IPv6 sample,
// as kube-proxy's IPv6 proxier reports it, not the primary family's; where
// --cluster-cidr names one family only, that family's label carries all.
func TestProgrammingLatencyIsLabelledWithItsSlicesFamily(t *testing.T) {
	metrics.Register()
	count := func(family string) uint64 {
		return samples(t, metrics.NetworkProgrammingLatency.WithLabelValues(family))
	}
	stats := proxier.SyncStats{ProgrammingLatency: map[intent.IPFamily][]time.Duration{
		intent.IPv4: {time.Second}, intent.IPv6: {2 * time.Second, 3 * time.Second}}}
	for _, c := range []struct {
		cidrs        []string
		ipv4, ipv6   uint64
		whatClusters string
	}{
		{[]string{"10.244.0.0/16", "fd00:10:244::/56"}, 1, 2, "dual-stack"},
		{[]string{"10.244.0.0/16"}, 3, 0, "IPv4"},
	} {
		v4, v6 := count("IPv4"), count("IPv6")
		newObserver(c.cidrs, nil, nil, nil, nil).SyncDone(stats)
		if got4, got6 := count("IPv4")-v4, count("IPv6")-v6; got4 != c.ipv4 || got6 != c.ipv6 {
			t.Errorf("%s cluster: %d IPv4 and %d IPv6 samples, want %d and %d", c.whatClusters, got4, got6, c.ipv4, c.ipv6)
		}
	}
}

// TestEachSyncIsOneLatencySamplePerFamily: two --cluster-cidr ranges of
// one family (a cluster that added a pod range) are still one family, so
// each sync is one sample of that family's sync latency, not one per range.
func TestEachSyncIsOneLatencySamplePerFamily(t *testing.T) {
	metrics.Register()
	count := func(family string) uint64 { return samples(t, metrics.SyncProxyRulesLatency.WithLabelValues(family)) }
	for _, cidrs := range [][]string{
		{"10.244.0.0/16", "10.245.0.0/16", "fd00:10:244::/56"},
		{"10.244.0.0/16", "fd00:10:244::/56", "fd00:10:245::/56"},
	} {
		v4, v6 := count("IPv4"), count("IPv6")
		newObserver(cidrs, nil, nil, nil, nil).SyncDone(proxier.SyncStats{})
		if got4, got6 := count("IPv4")-v4, count("IPv6")-v6; got4 != 1 || got6 != 1 {
			t.Errorf("--cluster-cidr %v: one sync gave %d IPv4 and %d IPv6 samples, want 1 each", cidrs, got4, got6)
		}
	}
}

// TestNodeCauseCountsBecomeAGaugeByReasonAndType: the Services a node
// cause affects are a gauge labelled by the Node event's reason and type,
// set at every sync, and 0 (not the last count) once the proxier counts
// the cause ended, so an alert on it resolves.
func TestNodeCauseCountsBecomeAGaugeByReasonAndType(t *testing.T) {
	metrics.Register()
	obs := newObserver([]string{"10.244.0.0/16"}, nil, nil, nil, nil)
	affinity := proxier.NodeCauseKind{Reason: desired.ReasonSessionAffinityUnsupported, Warning: true}
	hints := proxier.NodeCauseKind{Reason: desired.ReasonTopologyHintsIgnored}
	gauge := func(reason, eventType string) float64 {
		return must(testutil.GetGaugeMetricValue(metrics.NodeCauseServices.WithLabelValues(reason, eventType)))
	}
	obs.SyncDone(proxier.SyncStats{NodeCauseServices: map[proxier.NodeCauseKind]int{affinity: 12, hints: 30}})
	if a, h := gauge(affinity.Reason, v1.EventTypeWarning), gauge(hints.Reason, v1.EventTypeNormal); a != 12 || h != 30 {
		t.Errorf("Services affected: %s %v, %s %v; want 12 (Warning) and 30 (Normal)", affinity.Reason, a, hints.Reason, h)
	}
	obs.SyncDone(proxier.SyncStats{NodeCauseServices: map[proxier.NodeCauseKind]int{affinity: 0, hints: 30}})
	if a := gauge(affinity.Reason, v1.EventTypeWarning); a != 0 {
		t.Errorf("after the cause ended, %s = %v, want 0", affinity.Reason, a)
	}
}

// samples is how many observations a histogram holds.
func samples(t *testing.T, h k8smetrics.ObserverMetric) uint64 {
	t.Helper()
	n, err := testutil.GetHistogramMetricCount(h)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
