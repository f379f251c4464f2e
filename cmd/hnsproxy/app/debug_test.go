package app

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
	"github.com/hnsproxy/hnsproxy/healthcheck"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/metrics"
	"github.com/hnsproxy/hnsproxy/reconciler"
	"github.com/hnsproxy/hnsproxy/sim"
)

// gatedHNS is the simulator with CreateLoadBalancer held at a gate while
// closed: a sync stuck inside HNS, holding the reconciler's lock.
type gatedHNS struct {
	hnslb.Client
	closed  atomic.Bool
	entered chan struct{} // one value per call stopped at the gate
	open    chan struct{} // closed to let them through
}

func (g *gatedHNS) CreateLoadBalancer(ctx context.Context, l *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	if g.closed.Load() {
		g.entered <- struct{}{}
		<-g.open
	}
	return g.Client.CreateLoadBalancer(ctx, l)
}

func clusterIPLB(vip, owner string) intent.LB {
	return intent.LB{
		Key:          intent.LBKey{Family: intent.IPv4, VIP: vip, Protocol: hnslb.ProtocolTCP, Port: 80},
		InternalPort: 8080,
		Backends:     []intent.Backend{{IP: "10.244.1.10", Local: true}},
		Owner:        owner,
	}
}

// debugFixture is a reconciler over a gated simulator, with a first load
// balancer synced, and the servers that answer /debug/hns, /metrics,
// /healthz and /livez.
type debugFixture struct {
	hns     *gatedHNS
	rec     *reconciler.Reconciler
	source  metrics.DebugSource
	servers map[string]http.Handler // by path
}

func newDebugFixture(t *testing.T) *debugFixture {
	t.Helper()
	f := newUnreadDebugFixture(t)
	f.rec.StatusSnapshot() // a reader looks while the reconciler is idle: the current status
	return f
}

// newUnreadDebugFixture is newDebugFixture before anything read the status.
func newUnreadDebugFixture(t *testing.T) *debugFixture {
	t.Helper()
	ctx := context.Background()
	p, err := sim.ProfileByName(sim.ProfileWS2022)
	if err != nil {
		t.Fatal(err)
	}
	h := sim.New(sim.Options{Profile: p, Seed: 1})
	n, err := h.CreateNetwork(ctx, &hnslb.Network{Name: "cbr0", Type: hnslb.NetworkTypeL2Bridge})
	if err != nil {
		t.Fatal(err)
	}
	// The backend's endpoint, as the CNI makes it (local backends keep the
	// test free of remote-endpoint bookkeeping).
	if _, err := h.CreateEndpoint(ctx, n.ID, &hnslb.Endpoint{IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.1.10"}}}); err != nil {
		t.Fatal(err)
	}
	g := &gatedHNS{Client: h, entered: make(chan struct{}), open: make(chan struct{})}
	rec := reconciler.New(g, reconciler.Options{NetworkID: n.ID, Features: p.Features()})
	rec.Upsert(clusterIPLB("10.96.0.1", "default/first:http"))
	if err := rec.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if res := rec.Sync(ctx); res.Failed+res.Pending != 0 {
		t.Fatalf("first sync: %+v", res)
	}
	deps := &Deps{Network: n, Capabilities: Capabilities{Features: p.Features()}}
	src := debugSource(&options.Config{NodeName: "win-a"}, deps, rec)
	m := metrics.NewServer(metrics.ServerOptions{EnableDebug: true})
	m.SetDebugSource(src)
	health := healthcheck.NewProxyHealthServer(clocktesting.NewFakeClock(time.Now()), time.Minute, nil)
	health.SyncLoopStarted(v1.IPv4Protocol) // the sync loop runs: the Sync above is one of its
	return &debugFixture{hns: g, rec: rec, source: src, servers: map[string]http.Handler{
		"/debug/hns": m, "/metrics": m, "/healthz": health.Handler(), "/livez": health.Handler(),
	}}
}

// TestDebugHandlersAnswerDuringBlockedSync: while a Sync is stuck in HNS
// (holding the reconciler's lock), /debug/hns shows the last published
// status and the health and metrics handlers answer. A handler that took
// the lock would wait for the gate, which opens only after it answered: the
// test would hang until go test's timeout.
func TestDebugHandlersAnswerDuringBlockedSync(t *testing.T) {
	f := newDebugFixture(t)
	synced := f.blockedSync()

	for path, h := range f.servers {
		rr := httptest.NewRecorder()
		h.ServeHTTP(rr, httptest.NewRequest(http.MethodGet, path, nil))
		if rr.Code != http.StatusOK {
			t.Errorf("%s during a blocked sync: %d %s", path, rr.Code, rr.Body)
		}
	}
	v := viewOf(t, f.source)
	if got := v.Services["default/first:http"]; len(got) != 1 || got[0].State != reconciler.StateDone {
		t.Errorf("first load balancer during the blocked sync: %+v, want done", got)
	}
	if got, ok := v.Services["default/second:http"]; ok {
		t.Errorf("second load balancer shown before the sync that realizes it returned: %+v", got)
	}

	close(f.hns.open)
	if res := <-synced; res.Failed+res.Pending != 0 {
		t.Fatalf("sync after the gate opened: %+v", res)
	}
	v = viewOf(t, f.source)
	if got := v.Services["default/second:http"]; len(got) != 1 || got[0].State != reconciler.StateDone || got[0].RealizedID == "" {
		t.Errorf("second load balancer after its sync: %+v, want done and realized", got)
	}
	if v.RemoteEndpoints == nil || len(v.RemoteEndpoints) != 0 {
		t.Errorf("remote endpoints: %#v, want none, as [] (not null)", v.RemoteEndpoints)
	}
}

// blockedSync starts a Sync that adds default/second's load balancer and
// returns once it is stuck in HNS; its result comes on the channel after
// f.hns.open is closed.
func (f *debugFixture) blockedSync() <-chan reconciler.SyncResult {
	f.hns.closed.Store(true)
	f.rec.Upsert(clusterIPLB("10.96.0.2", "default/second:http"))
	synced := make(chan reconciler.SyncResult)
	go func() { synced <- f.rec.Sync(context.Background()) }()
	<-f.hns.entered
	return synced
}

// A first look that meets a Sync stuck in HNS answers at once with no
// statuses, and says they are being gathered rather than that there are
// none; the look after that Sync has them.
func TestDebugSaysTheStatusIsGathering(t *testing.T) {
	f := newUnreadDebugFixture(t)
	synced := f.blockedSync()
	if v := viewOf(t, f.source); !v.StatusGathering || len(v.Services) != 0 {
		t.Errorf("the first look, during a blocked sync: statusGathering %v, %d Service ports; want true and none", v.StatusGathering, len(v.Services))
	}
	rr := httptest.NewRecorder()
	f.servers["/debug/hns"].ServeHTTP(rr, httptest.NewRequest(http.MethodGet, "/debug/hns", nil))
	if !strings.Contains(rr.Body.String(), `"statusGathering": true`) {
		t.Errorf("/debug/hns during the blocked sync: %s, want it to say statusGathering", rr.Body)
	}
	close(f.hns.open)
	<-synced
	v := viewOf(t, f.source)
	if v.StatusGathering || len(v.Services["default/first:http"])+len(v.Services["default/second:http"]) != 2 {
		t.Errorf("after the sync: statusGathering %v, Services %+v; want both load balancers", v.StatusGathering, v.Services)
	}
}

func viewOf(t *testing.T, src metrics.DebugSource) debugView {
	t.Helper()
	v, err := src(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return v.(debugView)
}

// TestDebugSourceStopsWithItsContext: a request whose client went away
// gets no view, and the server writes nothing for it.
func TestDebugSourceStopsWithItsContext(t *testing.T) {
	f := newDebugFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if v, err := f.source(ctx); !errors.Is(err, context.Canceled) || v != nil {
		t.Errorf("debug source with a cancelled context: %v, %v; want nil, context.Canceled", v, err)
	}

	rr := httptest.NewRecorder()
	f.servers["/debug/hns"].ServeHTTP(rr, httptest.NewRequest(http.MethodGet, "/debug/hns", nil).WithContext(ctx))
	if body := rr.Body.String(); strings.TrimSpace(body) != "" {
		t.Errorf("/debug/hns answered a client that went away: %s", body)
	}
}

// TestDebugBackendCap: /debug/hns shows the cap in use and why: the
// start-up default, a learned lower one, or the flag's, which learning
// never lowers.
func TestDebugBackendCap(t *testing.T) {
	def := Capabilities{Features: hnslb.Features{MaxBackends: 1024}, BackendCapReason: "OS build 10.0.20348.2227 >= 17763.2746"}
	if got := backendCapOf(def, 0); got.Max != 1024 || got.Reason != def.BackendCapReason {
		t.Errorf("default: %+v", got)
	}
	if got := backendCapOf(def, 64); got.Max != 64 || !strings.Contains(got.Reason, "learned") || !strings.Contains(got.Reason, def.BackendCapReason) {
		t.Errorf("learned: %+v", got)
	}
	fixed := Capabilities{Features: hnslb.Features{MaxBackends: 200}, BackendCapFixed: true, BackendCapReason: "--max-backends-per-lb"}
	if got := backendCapOf(fixed, 64); got.Max != 200 {
		t.Errorf("flag: %+v", got)
	}
}
