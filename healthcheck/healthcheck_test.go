package healthcheck

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/component-base/metrics/testutil"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/hnsproxy/hnsproxy/internal/klogtest"
	"github.com/hnsproxy/hnsproxy/metrics"
)

type fixedNode struct{ node *v1.Node }

func (f *fixedNode) Node() *v1.Node { return f.node }

func readyNode() *v1.Node { return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-1"}} }

const timeout = time.Minute // 2x a 30s sync period

func newProxyHealth(t *testing.T, nodes NodeSource) (*ProxyHealthServer, *clocktesting.FakeClock, string) {
	t.Helper()
	metrics.Register()
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC))
	hs := NewProxyHealthServer(clk, timeout, nodes)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return hs, clk, "http://" + ln.Addr().String()
}

type answer struct {
	code   int
	header http.Header
	raw    string
	health ProxyHealth
}

func fetch(t *testing.T, url string) answer {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	a := answer{code: resp.StatusCode, header: resp.Header, raw: string(raw)}
	if strings.HasSuffix(url, "z") {
		if err := json.Unmarshal(raw, &a.health); err != nil {
			t.Fatalf("%s body %q: %v", url, raw, err)
		}
	}
	return a
}

func healthzCount(t *testing.T, code string) float64 {
	t.Helper()
	v, err := testutil.GetCounterMetricValue(metrics.ProxyHealthzTotal.WithLabelValues(code))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func livezCount(t *testing.T, code string) float64 {
	t.Helper()
	v, err := testutil.GetCounterMetricValue(metrics.ProxyLivezTotal.WithLabelValues(code))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// kube-proxy on Windows creates its proxier, which waits for the HNS
// network (winkernel getNetworkInfo), before it serves /healthz at all: a
// node without its network, where nothing can be programmed, is never
// reported healthy. hnsproxy serves from the start, for /livez, so /healthz
// answers 503 until the sync loop starts, and /livez 200.
func TestHealthzUnhealthyUntilTheSyncLoopStarts(t *testing.T) {
	hs, _, base := newProxyHealth(t, &fixedNode{readyNode()})
	if a := fetch(t, base+"/healthz"); a.code != http.StatusServiceUnavailable || a.health.Healthy {
		t.Errorf("/healthz before the sync loop started = %d %s, want 503", a.code, a.raw)
	}
	if a := fetch(t, base+"/livez"); a.code != http.StatusOK || !a.health.Healthy {
		t.Errorf("/livez before the sync loop started = %d %s, want 200", a.code, a.raw)
	}
	hs.SyncLoopStarted(v1.IPv4Protocol)
	if a := fetch(t, base+"/healthz"); a.code != http.StatusOK || !a.health.Healthy {
		t.Errorf("/healthz once the sync loop started = %d %s, want 200", a.code, a.raw)
	}
}

func TestHealthyWhileStartingUp(t *testing.T) {
	hs, clk, base := newProxyHealth(t, &fixedNode{readyNode()})
	hs.SyncLoopStarted(v1.IPv4Protocol)
	before := healthzCount(t, "200")
	a := fetch(t, base+"/healthz")
	if a.code != 200 || !a.health.Healthy || a.health.NodeEligible == nil || !*a.health.NodeEligible {
		t.Fatalf("/healthz at start = %d %s", a.code, a.raw)
	}
	if !a.health.CurrentTime.Equal(clk.Now()) || !a.health.LastUpdated.Equal(clk.Now()) {
		t.Errorf("times = %s: want currentTime and (healthy) lastUpdated = the fake clock", a.raw)
	}
	if a.header.Get("Content-Type") != "application/json" || a.header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("headers = %v, want kube-proxy's Content-Type and X-Content-Type-Options", a.header)
	}
	if got := healthzCount(t, "200") - before; got != 1 {
		t.Errorf("kubeproxy_proxy_healthz_total{code=200} moved by %v", got)
	}
}

func TestUnhealthyWhenAQueuedUpdateIsNotSyncedInTime(t *testing.T) {
	hs, clk, base := newProxyHealth(t, &fixedNode{readyNode()})
	hs.Updated(v1.IPv4Protocol)
	synced := clk.Now()
	clk.Step(10 * time.Second)
	hs.QueuedUpdate(v1.IPv4Protocol)
	clk.Step(timeout - time.Second)
	hs.QueuedUpdate(v1.IPv4Protocol) // a later change must not restart the timer
	if a := fetch(t, base+"/livez"); a.code != 200 {
		t.Fatalf("/livez just inside the timeout = %d %s", a.code, a.raw)
	}
	clk.Step(time.Second)
	before503z, before503l := healthzCount(t, "503"), livezCount(t, "503")
	for _, path := range []string{"/healthz", "/livez"} {
		a := fetch(t, base+path)
		if a.code != http.StatusServiceUnavailable || a.health.Healthy {
			t.Fatalf("%s after the timeout = %d %s", path, a.code, a.raw)
		}
		st := a.health.Status[v1.IPv4Protocol]
		if st.Healthy || !st.LastUpdated.Equal(synced) || !a.health.LastUpdated.Equal(synced) {
			t.Errorf("%s status = %s: want IPv4 unhealthy, lastUpdated = the last sync", path, a.raw)
		}
	}
	if healthzCount(t, "503")-before503z != 1 || livezCount(t, "503")-before503l != 1 {
		t.Error("503 answers not counted")
	}
	hs.Updated(v1.IPv4Protocol)
	if a := fetch(t, base+"/healthz"); a.code != 200 {
		t.Fatalf("/healthz after a sync = %d %s", a.code, a.raw)
	}
}

func TestOneStaleFamilyMakesTheProxyUnhealthy(t *testing.T) {
	hs, clk, base := newProxyHealth(t, nil)
	hs.Updated(v1.IPv4Protocol)
	hs.Updated(v1.IPv6Protocol)
	hs.QueuedUpdate(v1.IPv6Protocol)
	hs.QueuedUpdate(v1.IPv4Protocol)
	clk.Step(timeout)
	hs.Updated(v1.IPv4Protocol)
	a := fetch(t, base+"/healthz")
	if a.code != 503 || !a.health.Status[v1.IPv4Protocol].Healthy || a.health.Status[v1.IPv6Protocol].Healthy {
		t.Fatalf("/healthz = %d %s", a.code, a.raw)
	}
	if !a.health.LastUpdated.Equal(clk.Now()) {
		t.Errorf("lastUpdated = %v, want the newest family's sync %v", a.health.LastUpdated, clk.Now())
	}
}

func TestNodeEligibility(t *testing.T) {
	deleting := readyNode()
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	tainted := readyNode()
	tainted.Spec.Taints = []v1.Taint{{Key: ToBeDeletedTaint, Effect: v1.TaintEffectNoSchedule}}
	otherTaint := readyNode()
	otherTaint.Spec.Taints = []v1.Taint{{Key: "node.kubernetes.io/unschedulable", Effect: v1.TaintEffectNoSchedule}}
	cases := []struct {
		name     string
		node     *v1.Node
		eligible bool
	}{
		{"ready", readyNode(), true},
		{"unknown yet", nil, false},
		{"being deleted", deleting, false},
		{"autoscaler taint", tainted, false},
		{"other taint", otherTaint, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hs, _, base := newProxyHealth(t, &fixedNode{c.node})
			hs.SyncLoopStarted(v1.IPv4Protocol)
			hz := fetch(t, base+"/healthz")
			if (hz.code == 200) != c.eligible || hz.health.NodeEligible == nil || *hz.health.NodeEligible != c.eligible {
				t.Errorf("/healthz = %d %s", hz.code, hz.raw)
			}
			lz := fetch(t, base+"/livez")
			if lz.code != 200 || strings.Contains(lz.raw, "nodeEligible") {
				t.Errorf("/livez must ignore the node: %d %s", lz.code, lz.raw)
			}
		})
	}
}

// --- service health checks ---

type fakeProxyHealth struct{ healthy bool }

func (f *fakeProxyHealth) Health() ProxyHealth { return ProxyHealth{Healthy: f.healthy} }

var web = types.NamespacedName{Namespace: "shop", Name: "web"}

func serviceURL(t *testing.T, s *ServiceHealthServer, nsn types.NamespacedName) string {
	t.Helper()
	addrs := s.Addrs(nsn)
	if len(addrs) != 1 {
		t.Fatalf("%s listens on %v", nsn, addrs)
	}
	return "http://" + addrs[0].String() + "/"
}

func TestServiceHealthCheck(t *testing.T) {
	proxy := &fakeProxyHealth{healthy: true}
	s := NewServiceHealthServer("win-1", nil, []string{"127.0.0.1"}, proxy)
	t.Cleanup(s.Close)
	if err := s.SyncServices(map[types.NamespacedName]uint16{web: 0}); err != nil {
		t.Fatal(err)
	}
	url := serviceURL(t, s, web)

	a := fetch(t, url)
	if a.code != 503 || !strings.Contains(a.raw, `"localEndpoints": 0`) {
		t.Errorf("no local endpoints: %d %s", a.code, a.raw)
	}

	if err := s.SyncEndpoints(map[types.NamespacedName]LocalEndpoints{web: {IPv4: 2}, {Namespace: "x", Name: "unknown"}: {IPv4: 5}}); err != nil {
		t.Fatal(err)
	}
	a = fetch(t, url)
	want := "{\n\t\"service\": {\n\t\t\"namespace\": \"shop\",\n\t\t\"name\": \"web\"\n\t},\n\t\"localEndpoints\": 2,\n\t\"serviceProxyHealthy\": true\n}"
	if a.code != 200 || a.raw != want {
		t.Errorf("two local endpoints: %d\n%s\nwant kube-proxy's body\n%s", a.code, a.raw, want)
	}
	if a.header.Get("X-Load-Balancing-Endpoint-Weight") != "2" {
		t.Errorf("weight header = %q", a.header.Get("X-Load-Balancing-Endpoint-Weight"))
	}
	if a.header.Get("Content-Type") != "application/json" || a.header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("headers = %v, want kube-proxy's Content-Type and X-Content-Type-Options", a.header)
	}

	proxy.healthy = false
	if a = fetch(t, url); a.code != 503 || !strings.Contains(a.raw, `"serviceProxyHealthy": false`) {
		t.Errorf("unhealthy proxy: %d %s", a.code, a.raw)
	}
	proxy.healthy = true

	if err := s.SyncEndpoints(map[types.NamespacedName]LocalEndpoints{}); err != nil {
		t.Fatal(err)
	}
	if a = fetch(t, url); a.code != 503 {
		t.Errorf("endpoints gone: %d %s", a.code, a.raw)
	}

	if err := s.SyncServices(nil); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(url); err == nil {
		t.Error("the health check still answers after its service went away")
	}
}

func TestServiceHealthCheckPortChangeAndConflict(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	takenPort := uint16(taken.Addr().(*net.TCPAddr).Port)

	rec := events.NewFakeRecorder(10)
	s := NewServiceHealthServer("win-1", rec, []string{"127.0.0.1"}, &fakeProxyHealth{healthy: true})
	t.Cleanup(s.Close)
	db := types.NamespacedName{Namespace: "shop", Name: "db"}
	if err := s.SyncServices(map[types.NamespacedName]uint16{web: 0, db: takenPort}); err != nil {
		t.Fatal(err)
	}
	if s.Addrs(db) != nil {
		t.Error("a health check opened on a taken port")
	}
	select {
	case ev := <-rec.Events:
		if !strings.HasPrefix(ev, "Warning FailedToStartServiceHealthcheck node win-1 failed to start healthcheck \"shop/db\"") {
			t.Errorf("event = %q", ev)
		}
	default:
		t.Error("no event for the failed health check")
	}
	oldURL := serviceURL(t, s, web)

	// Moving web to the freed port closes the old server and opens the new one.
	taken.Close()
	if err := s.SyncServices(map[types.NamespacedName]uint16{web: takenPort}); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(oldURL); err == nil {
		t.Error("the old port still answers")
	}
	if got := s.Addrs(web); len(got) != 1 || got[0].(*net.TCPAddr).Port != int(takenPort) {
		t.Errorf("web listens on %v, want port %d", got, takenPort)
	}
	if a := fetch(t, serviceURL(t, s, web)); a.code != 503 {
		t.Errorf("moved health check: %d %s", a.code, a.raw)
	}
}

// A port that stays taken is retried every sync but reported once: an
// event (and an error in the log) when it first fails or fails anew, not on
// every sync.
func TestATakenHealthCheckPortIsReportedOnce(t *testing.T) {
	takeFreePort := func() (net.Listener, uint16) {
		t.Helper()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		return ln, uint16(ln.Addr().(*net.TCPAddr).Port)
	}
	drain := func(rec *events.FakeRecorder) int {
		n := 0
		for {
			select {
			case <-rec.Events:
				n++
			default:
				return n
			}
		}
	}
	syncServices := func(s *ServiceHealthServer, want map[types.NamespacedName]uint16) {
		t.Helper()
		if err := s.SyncServices(want); err != nil {
			t.Fatal(err)
		}
	}

	log := klogtest.Capture(t, 2) // the level the deploy manifests run at
	taken, port := takeFreePort()
	rec := events.NewFakeRecorder(10)
	s := NewServiceHealthServer("win-1", rec, []string{"127.0.0.1"}, &fakeProxyHealth{healthy: true})
	t.Cleanup(s.Close)
	for range 3 {
		syncServices(s, map[types.NamespacedName]uint16{web: port})
	}
	if n := drain(rec); n != 1 {
		t.Errorf("three syncs with the port taken raised %d events, want 1", n)
	}
	for _, line := range []string{"Failed to start healthcheck", "Opening healthcheck"} {
		if n := log.Count(line); n != 1 {
			t.Errorf("three syncs with the port taken logged %q %d times at --v=2, want once", line, n)
		}
	}

	// Another port, also taken: a new failure, reported.
	_, other := takeFreePort()
	syncServices(s, map[types.NamespacedName]uint16{web: other})
	syncServices(s, map[types.NamespacedName]uint16{web: other})
	if n := drain(rec); n != 1 {
		t.Errorf("moving to another taken port raised %d events, want 1", n)
	}

	// Back on the first port, freed: the retry opens it, without an event.
	taken.Close()
	syncServices(s, map[types.NamespacedName]uint16{web: port})
	if s.Addrs(web) == nil {
		t.Fatal("the freed port was not opened on the next sync")
	}
	if n := drain(rec); n != 0 {
		t.Errorf("opening the freed port raised %d events", n)
	}

	// A Service gone while its port was taken, and back on that port:
	// reported again, since its failure was forgotten with it.
	db := types.NamespacedName{Namespace: "shop", Name: "db"}
	syncServices(s, map[types.NamespacedName]uint16{web: port, db: other})
	syncServices(s, map[types.NamespacedName]uint16{web: port})
	syncServices(s, map[types.NamespacedName]uint16{web: port, db: other})
	if n := drain(rec); n != 2 {
		t.Errorf("a Service's failure, then its return to the taken port, raised %d events, want 2", n)
	}

	// web failed on other before it opened on port: moving back to other,
	// still taken, is a new failure, reported again (audit HC27).
	syncServices(s, map[types.NamespacedName]uint16{web: other, db: other})
	if n := drain(rec); n != 1 {
		t.Errorf("returning to a taken port after one that opened raised %d events, want 1", n)
	}

	// Another failure on the same port and listen IP (a port that Windows
	// reserves, say, after one that another process held) is new too
	// (audit HC21).
	s.mu.Lock()
	s.reportOpenFailure(listenKey{nsn: db, ip: "127.0.0.1"}, other, errors.New("bind: An attempt was made to access a socket in a way forbidden by its access permissions."))
	s.mu.Unlock()
	if n := drain(rec); n != 1 {
		t.Errorf("another error on the same port raised %d events, want 1", n)
	}
}

// Each listen IP is served on its own, as kube-proxy's per-family servers
// are: a port another process holds on one listen IP (here ::1) leaves the
// Service served on the others (127.0.0.1), is reported for that IP, and is
// opened on a later sync once freed. Removing the Service closes them all.
func TestATakenPortOnOneListenIPLeavesTheOthersServing(t *testing.T) {
	// A port free on 127.0.0.1 and taken on ::1.
	var taken net.Listener
	var port uint16
	for range 20 {
		ln6, err := net.Listen("tcp6", "[::1]:0")
		if err != nil {
			t.Fatalf("this test needs IPv6 loopback: %v", err)
		}
		p := ln6.Addr().(*net.TCPAddr).Port
		ln4, err := net.Listen("tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			ln6.Close()
			continue
		}
		ln4.Close()
		taken, port = ln6, uint16(p)
		break
	}
	if taken == nil {
		t.Fatal("found no port free on both 127.0.0.1 and ::1")
	}
	t.Cleanup(func() { taken.Close() })
	url4 := "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(int(port))) + "/"
	url6 := "http://" + net.JoinHostPort("::1", strconv.Itoa(int(port))) + "/"

	rec := events.NewFakeRecorder(10)
	s := NewServiceHealthServer("win-1", rec, []string{"127.0.0.1", "::1"}, &fakeProxyHealth{healthy: true})
	t.Cleanup(s.Close)
	for range 2 { // the second sync retries ::1, without a second report
		if err := s.SyncServices(map[types.NamespacedName]uint16{web: port}); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.Addrs(web); len(got) != 1 || got[0].String() != net.JoinHostPort("127.0.0.1", strconv.Itoa(int(port))) {
		t.Fatalf("with the port taken on ::1, web listens on %v, want 127.0.0.1:%d only", got, port)
	}
	if err := s.SyncEndpoints(map[types.NamespacedName]LocalEndpoints{web: {IPv4: 1, IPv6: 1}}); err != nil {
		t.Fatal(err)
	}
	if a := fetch(t, url4); a.code != 200 {
		t.Errorf("IPv4 health check with ::1 taken = %d %s, want 200", a.code, a.raw)
	}
	var reported []string
	for done := false; !done; {
		select {
		case ev := <-rec.Events:
			reported = append(reported, ev)
		default:
			done = true
		}
	}
	if len(reported) != 1 || !strings.HasPrefix(reported[0], "Warning FailedToStartServiceHealthcheck node win-1 failed to start healthcheck \"shop/web\"") ||
		!strings.Contains(reported[0], "[::1]") {
		t.Errorf("events = %q, want one FailedToStartServiceHealthcheck naming [::1]", reported)
	}

	// Freed, ::1 is opened on the next sync; 127.0.0.1 stays as it was.
	taken.Close()
	if err := s.SyncServices(map[types.NamespacedName]uint16{web: port}); err != nil {
		t.Fatal(err)
	}
	if got := s.Addrs(web); len(got) != 2 {
		t.Fatalf("with ::1 freed, web listens on %v, want 127.0.0.1 and ::1", got)
	}
	for _, url := range []string{url4, url6} {
		if a := fetch(t, url); a.code != 200 || !strings.Contains(a.raw, `"localEndpoints": 1`) {
			t.Errorf("%s = %d %s, want 200 with one local endpoint", url, a.code, a.raw)
		}
	}

	// The Service gone: every listener closes.
	if err := s.SyncServices(nil); err != nil {
		t.Fatal(err)
	}
	for _, url := range []string{url4, url6} {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			t.Errorf("%s still answers after its Service went away", url)
		}
	}
}

// kube-proxy 1.37 runs a health check server per IP family, on 0.0.0.0
// (IPv4 only) and :: (IPv6 only), each counting its own family's local
// endpoints: a probe over IPv4 is answered with the IPv4 count, one over
// IPv6 with the IPv6 count, so a node with local endpoints in one family
// only is drained from the other family's load balancer, whose node
// traffic it could not serve locally.
func TestServiceHealthCheckAnswersPerFamily(t *testing.T) {
	s := NewServiceHealthServer("win-1", nil, []string{"127.0.0.1", "::1"}, &fakeProxyHealth{healthy: true})
	t.Cleanup(s.Close)
	if err := s.SyncServices(map[types.NamespacedName]uint16{web: 0}); err != nil {
		t.Fatal(err)
	}
	addrs := s.Addrs(web)
	if len(addrs) != 2 {
		t.Fatalf("web listens on %v, want 127.0.0.1 and ::1 (this test needs IPv6 loopback)", addrs)
	}
	if err := s.SyncEndpoints(map[types.NamespacedName]LocalEndpoints{web: {IPv4: 0, IPv6: 2}}); err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		code   int
		weight string
	}{{http.StatusServiceUnavailable, "0"}, {http.StatusOK, "2"}} {
		a := fetch(t, "http://"+addrs[i].String()+"/")
		if a.code != want.code || !strings.Contains(a.raw, `"localEndpoints": `+want.weight) ||
			a.header.Get("X-Load-Balancing-Endpoint-Weight") != want.weight {
			t.Errorf("%s = %d, weight %q, %s; want %d with %s local endpoints", addrs[i], a.code,
				a.header.Get("X-Load-Balancing-Endpoint-Weight"), a.raw, want.code, want.weight)
		}
	}
}

func TestListenNetworkPinsTheFamily(t *testing.T) {
	// tcp4 and tcp6 let 0.0.0.0 and :: share a port (a plain "tcp" :: socket is dual-stack and would take both).
	for ip, want := range map[string]string{"0.0.0.0": "tcp4", "127.0.0.1": "tcp4", "::": "tcp6", "::1": "tcp6", "": "tcp"} {
		if got := networkFor(ip); got != want {
			t.Errorf("networkFor(%q) = %q, want %q", ip, got, want)
		}
	}
	// No listen IPs is kube-proxy's default, the IPv4 any-address (audit HC24).
	if got := NewServiceHealthServer("win-1", nil, nil, &fakeProxyHealth{}).listenIPs; len(got) != 1 || got[0] != "0.0.0.0" {
		t.Errorf("listen IPs without any given = %v, want [0.0.0.0]", got)
	}
}

// fakeHNSActivity is the sync loop's HNS calls as the reconciler reports them.
type fakeHNSActivity struct {
	waiting   bool
	lastEnded time.Time
}

func (f *fakeHNSActivity) HNSActivity() (bool, time.Time) { return f.waiting, f.lastEnded }

// F7: while HNS hangs, syncs still finish (their HNS calls time out), so
// /healthz drains the node but /livez stays 200: restarting hnsproxy would
// not unhang HNS.
func TestLivezStaysHealthyWhileSyncsFinishWithoutHNS(t *testing.T) {
	hs, clk, base := newProxyHealth(t, &fixedNode{readyNode()})
	hs.SetHNSActivity(&fakeHNSActivity{lastEnded: clk.Now().Add(-time.Hour)})
	hs.Updated(v1.IPv4Protocol)
	hs.QueuedUpdate(v1.IPv4Protocol)
	for range 10 { // ten minutes of syncs that HNS never takes
		clk.Step(timeout)
		hs.SyncRan(v1.IPv4Protocol)
		hs.QueuedUpdate(v1.IPv4Protocol)
	}
	clk.Step(timeout - time.Second)
	if a := fetch(t, base+"/healthz"); a.code != http.StatusServiceUnavailable {
		t.Errorf("/healthz with HNS hung = %d %s, want 503", a.code, a.raw)
	}
	if a := fetch(t, base+"/livez"); a.code != http.StatusOK || !a.health.Healthy {
		t.Errorf("/livez while syncs finish = %d %s, want 200", a.code, a.raw)
	}
}

// /livez fails when the sync loop stops: a change waits past the timeout,
// no sync finishes and no HNS call is under way or ended lately. A loop
// waiting on an HNS call (which has a deadline), or whose last call ended
// within the timeout, is alive.
func TestLivezFailsOnlyWhenTheLoopStops(t *testing.T) {
	hs, clk, base := newProxyHealth(t, &fixedNode{readyNode()})
	hns := &fakeHNSActivity{lastEnded: clk.Now()}
	hs.SetHNSActivity(hns)
	hs.Updated(v1.IPv4Protocol)
	hs.QueuedUpdate(v1.IPv4Protocol)
	clk.Step(timeout)
	if a := fetch(t, base+"/livez"); a.code != http.StatusServiceUnavailable || a.health.Status[v1.IPv4Protocol].Healthy {
		t.Fatalf("/livez with the loop stopped = %d %s, want 503", a.code, a.raw)
	}
	hns.waiting = true
	if a := fetch(t, base+"/livez"); a.code != http.StatusOK {
		t.Errorf("/livez while the loop waits on HNS = %d %s, want 200", a.code, a.raw)
	}
	hns.waiting, hns.lastEnded = false, clk.Now().Add(-time.Second)
	if a := fetch(t, base+"/livez"); a.code != http.StatusOK {
		t.Errorf("/livez just after an HNS call ended = %d %s, want 200", a.code, a.raw)
	}
	hs.SyncRan(v1.IPv4Protocol)
	hns.lastEnded = time.Time{}
	if a := fetch(t, base+"/livez"); a.code != http.StatusOK {
		t.Errorf("/livez after a sync finished = %d %s, want 200", a.code, a.raw)
	}
}
