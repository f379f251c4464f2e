//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
	"github.com/hnsproxy/hnsproxy/sim"
)

// TestOperations runs hnsproxy the way an operator does and checks what
// they rely on: least privilege, /healthz, health-check node ports,
// metrics as Prometheus scrapes them, restarts and crashes that leave HNS
// alone, repair of load balancers deleted behind its back, and an
// apiserver restart that does not flush HNS.
func TestOperations(t *testing.T) {
	ctx := context.Background()
	started := time.Now()
	c := framework.StartClusterForTest(t, repairOnlySpec())
	a, b := c.Nodes[0], c.Nodes[1]
	w := startWebAndIngress(t, c, 0)
	web, ing, webSvc, lbSvc, want := w.web, w.ing, w.webSvc, w.lbSvc, w.want
	if t.Failed() {
		t.FailNow()
	}

	t.Run("least privilege", func(t *testing.T) { checkLeastPrivilege(t, c) })
	t.Run("healthz and debug endpoint", func(t *testing.T) {
		for _, n := range c.Nodes {
			checkHealthz(t, n)
			checkDebug(t, n, "web/web:p")
		}
	})
	t.Run("health-check node port", func(t *testing.T) { checkHealthCheckNodePort(t, c, lbSvc, len(ing)) })
	t.Run("prometheus", func(t *testing.T) { checkPrometheus(t, c, started) })
	t.Run("restart without HNS writes", func(t *testing.T) {
		checkRestartsWithoutWrites(t, c, a, b, "hnsproxy", webSvc, want)
	})
	t.Run("drift repair", func(t *testing.T) { checkDriftRepair(t, c, a, webSvc, want[a]) })
	// Before the apiserver restart: while it starts, RBAC answers are not
	// ready yet and clients may log a transient "forbidden".
	for _, n := range c.Nodes {
		checkLogClean(t, n)
	}
	t.Run("apiserver restart", func(t *testing.T) {
		before := statsOf(t, c)
		if err := c.CP.RestartAPIServer(ctx); err != nil {
			t.Fatal(err)
		}
		// Programmed after the restart: the watches came back.
		late := apply(t, c, service("web", "after-restart", "", 81, 8080), framework.Backends(web))
		for _, n := range c.Nodes {
			all := backends(local(onNode(web, n.Name())...), remote(notOnNode(web, n.Name())...))
			expectLBs(t, c, n, late, lb("ClusterIP", frontend(late.Spec.ClusterIP, 81, "TCP", 8080), flags("DSR"), all...))
			expectLBs(t, c, n, webSvc, want[n]...)
		}
		after := statsOf(t, c)
		for _, n := range c.Nodes {
			if d := after[n].Count(sim.OpDeleteLoadBalancer) - before[n].Count(sim.OpDeleteLoadBalancer); d != 0 {
				t.Errorf("node %s: %d load balancers deleted across the apiserver restart, want none (HNS flushed?)", n.Name(), d)
			}
			if d := after[n].CountResult(sim.OpCreateLoadBalancer, sim.ResultOK) - before[n].CountResult(sim.OpCreateLoadBalancer, sim.ResultOK); d != 1 {
				t.Errorf("node %s: %d load balancers created across the apiserver restart, want 1 (the new Service's)", n.Name(), d)
			}
		}
	})
}

func statsOf(t *testing.T, c *framework.Cluster) map[*framework.Node]sim.Counters {
	t.Helper()
	out := map[*framework.Node]sim.Counters{}
	for _, n := range c.Nodes {
		s, err := n.Sim.Stats(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		out[n] = s
	}
	return out
}

// quiescent waits until the node's HNS sees no writes for a few polls in a
// row, so that a before/after comparison is not polluted by a sync still
// under way.
func quiescent(t *testing.T, n *framework.Node) sim.Counters {
	t.Helper()
	var last sim.Counters
	still := 0
	err := framework.Poll(context.Background(), framework.ConvergeWait, 500*time.Millisecond, func(ctx context.Context) error {
		s, err := n.Sim.Stats(ctx)
		if err != nil {
			return err
		}
		if s.Writes() == last.Writes() && last.Calls != nil {
			still++
		} else {
			still = 0
		}
		last = s
		if still < 4 {
			return fmt.Errorf("HNS writes still changing (%d)", s.Writes())
		}
		return nil
	})
	if err != nil {
		t.Fatalf("node %s: %v", n.Name(), err)
	}
	return last
}

// checkRestartsWithoutWrites restarts a's proxy (SIGTERM and start) and
// kills b's (kill -9 and start), proving each wrote nothing to HNS, then
// that every node still has the load balancers it wants for svc.
func checkRestartsWithoutWrites(t *testing.T, c *framework.Cluster, a, b *framework.Node, proxy string, svc *corev1.Service, want map[*framework.Node][]string) {
	t.Helper()
	ctx := context.Background()
	checkNoWrites(t, c, a, "SIGTERM of "+proxy+" and start", func() error { return a.Proxy.Restart(ctx) })
	checkNoWrites(t, c, b, "kill -9 of "+proxy+" and start", func() error {
		if err := b.Proxy.Kill(); err != nil {
			return err
		}
		return b.Proxy.Start(ctx)
	})
	for _, n := range c.Nodes {
		expectLBs(t, c, n, svc, want[n]...)
	}
}

// checkNoWrites restarts a node's hnsproxy with nothing changed and
// proves it wrote nothing to HNS: it adopted what it had programmed.
func checkNoWrites(t *testing.T, c *framework.Cluster, n *framework.Node, how string, restart func() error) {
	t.Helper()
	before := quiescent(t, n)
	if err := restart(); err != nil {
		t.Fatalf("node %s: %s: %v", n.Name(), how, err)
	}
	// The new process has synced once it reported a sync in /metrics.
	err := framework.Poll(context.Background(), framework.ConvergeWait, pollEvery, func(ctx context.Context) error {
		v, err := scrapeValue(ctx, n.Proxy.MetricsURL(), "kubeproxy_sync_proxy_rules_duration_seconds_count")
		if err != nil {
			return err
		}
		if v < 1 {
			return fmt.Errorf("no sync yet")
		}
		return nil
	})
	if err != nil {
		t.Fatalf("node %s after %s: %v", n.Name(), how, err)
	}
	after := quiescent(t, n)
	if d := after.Writes() - before.Writes(); d != 0 {
		t.Errorf("node %s: %s made %d HNS writes with nothing changed, want 0\nbefore: %v\nafter:  %v", n.Name(), how, d, before.Calls, after.Calls)
	}
	if after.Lists() == before.Lists() {
		t.Errorf("node %s: %s: the new process never listed HNS (did it restart?)", n.Name(), how)
	}
}

// checkDriftRepair deletes a load balancer behind hnsproxy's back and
// waits for the drift repair (--drift-repair-period 2s; full syncs are 1h
// apart) to recreate it.
func checkDriftRepair(t *testing.T, c *framework.Cluster, n *framework.Node, svc *corev1.Service, want []string) {
	ctx := context.Background()
	snap, err := n.Sim.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var victim string
	for _, l := range snap.LoadBalancers {
		if len(l.FrontendVIPs) > 0 && l.FrontendVIPs[0] == svc.Spec.ClusterIP {
			victim = l.ID
		}
	}
	if victim == "" {
		t.Fatalf("node %s: no load balancer for %s", n.Name(), svc.Spec.ClusterIP)
	}
	before := quiescent(t, n)
	repairsBefore := driftRepairs(t, n)
	if err := n.Sim.Client.DeleteLoadBalancer(ctx, victim); err != nil {
		t.Fatal(err)
	}
	expectLBs(t, c, n, svc, want...)
	after := quiescent(t, n)
	// Counted where the operators' alert and dashboard look.
	if d := driftRepairs(t, n) - repairsBefore; d != 1 {
		t.Errorf("node %s: hnsproxy_drift_repairs_total rose by %v, want 1", n.Name(), d)
	}
	if d := after.CountResult(sim.OpCreateLoadBalancer, sim.ResultOK) - before.CountResult(sim.OpCreateLoadBalancer, sim.ResultOK); d != 1 {
		t.Errorf("node %s: %d load balancers created by the repair, want 1", n.Name(), d)
	}
	// Ours is the only delete.
	if d := after.Count(sim.OpDeleteLoadBalancer) - before.Count(sim.OpDeleteLoadBalancer); d != 1 {
		t.Errorf("node %s: %d load balancer deletes, want only the out-of-band one", n.Name(), d)
	}
}

// driftRepairs is a node's hnsproxy_drift_repairs_total (every kind), 0
// before its first repair.
func driftRepairs(t *testing.T, n *framework.Node) float64 {
	t.Helper()
	v, err := scrapeValue(context.Background(), n.Proxy.MetricsURL(), "hnsproxy_drift_repairs_total")
	if err != nil && !strings.Contains(err.Error(), "no sample") {
		t.Fatal(err)
	}
	return v
}

func checkHealthz(t *testing.T, n *framework.Node) {
	t.Helper()
	code, body, err := httpGet(context.Background(), n.Proxy.HealthzURL())
	if err != nil {
		t.Fatal(err)
	}
	var h struct {
		Healthy     bool      `json:"healthy"`
		LastUpdated time.Time `json:"lastUpdated"`
	}
	if err := json.Unmarshal(body, &h); err != nil {
		t.Fatalf("node %s /healthz: %v: %s", n.Name(), err, body)
	}
	if code != http.StatusOK || !h.Healthy || h.LastUpdated.IsZero() {
		t.Errorf("node %s /healthz: %d %s, want 200 healthy with lastUpdated", n.Name(), code, body)
	}
}

// checkDebug reads /debug/hns: the node's desired and realized load
// balancers per Service port. A first look that met a sync says the
// statuses are being gathered; they come with that sync's end.
func checkDebug(t *testing.T, n *framework.Node, servicePort string) {
	t.Helper()
	var d struct {
		Node      string                       `json:"node"`
		Services  map[string][]json.RawMessage `json:"services"`
		Gathering bool                         `json:"statusGathering"`
	}
	for look := 0; look == 0 || d.Gathering && look < 50; look++ {
		if look > 0 {
			time.Sleep(100 * time.Millisecond)
		}
		code, body, err := httpGet(context.Background(), n.Proxy.DebugURL())
		if err != nil {
			t.Fatal(err)
		}
		d.Gathering = false
		if err := json.Unmarshal(body, &d); err != nil || code != http.StatusOK {
			t.Fatalf("node %s /debug/hns: %d %v: %.300s", n.Name(), code, err, body)
		}
	}
	if d.Node != n.Name() || len(d.Services[servicePort]) == 0 {
		t.Errorf("node %s /debug/hns: node %q, %d entries for %s; want this node and its load balancer", n.Name(), d.Node, len(d.Services[servicePort]), servicePort)
	}
}

// checkHealthCheckNodePort asks the LoadBalancer's healthCheckNodePort
// over HTTP, on each node in turn. Every hnsproxy on this one machine tries
// to listen on it; the answer must match the node that holds it: 200 with
// the local endpoint count where pods are (win-a), 503 elsewhere. Then the
// holder's hnsproxy stops, and the other node's takes the port on its next
// sync (a port that could not be opened is retried on every sync) and must
// answer for itself.
func checkHealthCheckNodePort(t *testing.T, c *framework.Cluster, svc *corev1.Service, podsOnA int) {
	ctx := context.Background()
	port := int(svc.Spec.HealthCheckNodePort)
	if port == 0 {
		t.Fatalf("%s/%s has no healthCheckNodePort", svc.Namespace, svc.Name)
	}
	first := askHealthCheck(t, c, svc, port, nil, podsOnA)
	if err := first.Proxy.Stop(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := first.Proxy.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}()
	// Any change makes every node sync.
	apply(t, c, service("web", "health-check-nudge", "", 82, 8080), nil)
	if second := askHealthCheck(t, c, svc, port, first, podsOnA); second == first {
		t.Errorf("health check node port %d still held by stopped %s", port, first.Name())
	}
}

// askHealthCheck waits until a node other than not holds port and checks
// its answer; it returns that node.
func askHealthCheck(t *testing.T, c *framework.Cluster, svc *corev1.Service, port int, not *framework.Node, podsOnA int) *framework.Node {
	t.Helper()
	var owner *framework.Node
	var code int
	var body []byte
	err := framework.Poll(context.Background(), framework.ConvergeWait, pollEvery, func(ctx context.Context) error {
		var err error
		if owner, err = c.ListenerOwner(port); err != nil {
			return err
		}
		if owner == not {
			return fmt.Errorf("port %d still held by %s", port, owner.Name())
		}
		code, body, err = httpGet(ctx, fmt.Sprintf("http://127.0.0.1:%d/", port))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var h struct {
		Service             struct{ Namespace, Name string } `json:"service"`
		LocalEndpoints      int                              `json:"localEndpoints"`
		ServiceProxyHealthy bool                             `json:"serviceProxyHealthy"`
	}
	if err := json.Unmarshal(body, &h); err != nil {
		t.Fatalf("health check %d: %v: %s", port, err, body)
	}
	wantCode, wantLocal := http.StatusServiceUnavailable, 0
	if owner == c.Nodes[0] {
		wantCode, wantLocal = http.StatusOK, podsOnA
	}
	if code != wantCode || h.LocalEndpoints != wantLocal || h.Service.Name != svc.Name || h.Service.Namespace != svc.Namespace || !h.ServiceProxyHealthy {
		t.Errorf("health check node port %d (held by %s): %d %s, want %d with %d local endpoints", port, owner.Name(), code, body, wantCode, wantLocal)
	}
	t.Logf("health check node port %d is held by %s: %d, %d local endpoints", port, owner.Name(), code, h.LocalEndpoints)
	return owner
}

// checkPrometheus scrapes every hnsproxy with a real Prometheus and checks
// the sync-latency series.
func checkPrometheus(t *testing.T, c *framework.Cluster, started time.Time) {
	ctx := context.Background()
	prom, err := framework.StartPrometheus(ctx, c, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer prom.Stop()
	check := func(query string, ok func(v float64) bool, what string) {
		t.Helper()
		var last model.Vector
		err := framework.Poll(ctx, framework.ConvergeWait, 500*time.Millisecond, func(ctx context.Context) error {
			samples, _, err := prom.Query(ctx, query)
			if err != nil {
				return err
			}
			last = samples
			nodes := map[model.LabelValue]bool{}
			for _, s := range samples {
				if !ok(float64(s.Value)) {
					return fmt.Errorf("%s = %s on %s, want %s", query, s.Value, s.Metric["node"], what)
				}
				nodes[s.Metric["node"]] = true
			}
			if len(nodes) != len(c.Nodes) {
				return fmt.Errorf("%s: series for %v, want every node", query, nodes)
			}
			return nil
		})
		if err != nil {
			t.Errorf("%v (last result %v)", err, last)
		}
	}
	check("kubeproxy_sync_proxy_rules_duration_seconds_count", func(v float64) bool { return v > 0 }, "> 0")
	check(`histogram_quantile(0.99, sum by (node, le) (kubeproxy_sync_proxy_rules_duration_seconds_bucket))`,
		func(v float64) bool { return v > 0 && v < 300 }, "a positive duration")
	lo, hi := float64(started.Add(-time.Minute).Unix()), float64(time.Now().Add(time.Hour).Unix())
	check("kubeproxy_sync_proxy_rules_last_timestamp_seconds", func(v float64) bool { return v >= lo && v <= hi }, "a time during this test")
	check("hnsproxy_state_file_sync_duration_seconds_count", func(v float64) bool { return v > 0 }, "> 0 (declarations before creates)")
	// hnssim keeps remote endpoint names, and every node made remote
	// endpoints: their creates need no declaration.
	check(`hnsproxy_hns_feature_enabled{feature="Remote endpoint names kept (creates need no state file fsync)"}`, func(v float64) bool { return v == 1 }, "1")
	check(`up{job="hnsproxy"}`, func(v float64) bool { return v == 1 }, "1")
	// The dashboard's Versions panel: the build's version, stamped by hack/build.sh.
	check(`hnsproxy_build_info{version!=""}`, func(v float64) bool { return v == 1 }, "1, with the build's version")
}

// checkLeastPrivilege proves hnsproxy runs as deploy/'s ServiceAccount
// and that this identity can read what it needs and nothing more.
func checkLeastPrivilege(t *testing.T, c *framework.Cluster) {
	ctx := context.Background()
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Identity.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := review.Status.UserInfo.Username; got != "system:serviceaccount:kube-system:hnsproxy" {
		t.Errorf("hnsproxy's identity is %q", got)
	}
	for _, tc := range []struct {
		group, resource, verb, ns string
		allowed                   bool
	}{
		{"", "services", "list", "", true},
		{"", "services", "watch", "", true},
		{"discovery.k8s.io", "endpointslices", "watch", "", true},
		{"", "nodes", "get", "", true},
		{"events.k8s.io", "events", "create", "default", true},
		{"", "services", "get", "default", false},
		{"discovery.k8s.io", "endpointslices", "get", "default", false},
		{"", "services", "update", "default", false},
		{"", "services", "create", "default", false},
		{"discovery.k8s.io", "endpointslices", "delete", "default", false},
		{"", "secrets", "get", "kube-system", false},
		{"", "pods", "list", "", false},
		{"", "nodes", "patch", "", false},
		{"", "configmaps", "list", "", false},
	} {
		r, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Group: tc.group, Resource: tc.resource, Verb: tc.verb, Namespace: tc.ns},
		}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Status.Allowed != tc.allowed {
			t.Errorf("%s %s.%s in %q: allowed %v, want %v", tc.verb, tc.resource, tc.group, tc.ns, r.Status.Allowed, tc.allowed)
		}
	}
}

// checkLogClean fails on authorization errors in hnsproxy's log: with
// least privilege a missing rule shows up there first.
func checkLogClean(t *testing.T, n *framework.Node) {
	t.Helper()
	b, err := os.ReadFile(n.Proxy.LogPath())
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, "is forbidden") || strings.Contains(line, "Unauthorized") {
			t.Errorf("node %s: hnsproxy log: %s", n.Name(), line)
		}
	}
}

func httpGet(ctx context.Context, url string) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, body, err
}

// scrapeValue sums a metric's samples (any labels) on a /metrics page.
func scrapeValue(ctx context.Context, url, name string) (float64, error) {
	code, body, err := httpGet(ctx, url)
	if err != nil {
		return 0, err
	}
	if code != http.StatusOK {
		return 0, fmt.Errorf("GET %s: %d", url, code)
	}
	sum, found := 0.0, false
	for _, line := range strings.Split(string(body), "\n") {
		rest, ok := strings.CutPrefix(line, name)
		if !ok || (!strings.HasPrefix(rest, " ") && !strings.HasPrefix(rest, "{")) {
			continue
		}
		fields := strings.Fields(rest[strings.LastIndex(rest, "}")+1:])
		if len(fields) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %q: %w", url, line, err)
		}
		sum, found = sum+v, true
	}
	if !found {
		return 0, fmt.Errorf("%s: no sample %s", url, name)
	}
	return sum, nil
}
