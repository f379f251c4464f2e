//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
)

// dashboardQueries are the PromQL queries of deploy/monitoring's dashboard
// panels, by panel title (variable queries are Grafana's label_values, not PromQL).
func dashboardQueries(t *testing.T) map[string][]string {
	t.Helper()
	raw, err := os.ReadFile("../deploy/monitoring/hnsproxy-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	type panel struct {
		Title   string  `json:"title"`
		Panels  []panel `json:"panels"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	}
	var d struct {
		Panels []panel `json:"panels"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for _, tg := range p.Targets {
				out[p.Title] = append(out[p.Title], tg.Expr)
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return out
}

// mixinMayBeEmpty are kubernetes-mixin kube-proxy panels a healthy node's
// hnsproxy may leave empty, by title, with why.
var mixinMayBeEmpty = map[string]string{
	// The 3xx, 4xx and 5xx queries of "Kube API Request Rate" are the
	// panel's 2nd to 4th; the 2xx one must have data.
	"Kube API Request Rate #2": "no redirect from a healthy apiserver",
	"Kube API Request Rate #3": "no client error on a healthy cluster",
	"Kube API Request Rate #4": "no server error on a healthy cluster",
	// client-go times a request when it completes, and hnsproxy's only
	// reads are its informers', which list through a watch (client-go's
	// WatchListClient, on by default since 1.35): a stream, not a GET.
	"Get Request Latency 99th Quantile #1": "hnsproxy reads through watches alone",
	// Its only writes are events: as it starts (before the first scrape)
	// and on problems, none on a healthy cluster.
	"Post Request Latency 99th Quantile #1": "hnsproxy writes events alone, none while healthy",
}

// mixinProxyQueries are the panel queries of kubernetes-mixin's kube-proxy
// dashboard (metrics/testdata, with its source), by panel title and
// number, selecting the e2e scrape job instead of kube-proxy's, for a
// single cluster (no cluster label) and every instance.
func mixinProxyQueries(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile("../metrics/testdata/kubernetes-mixin-proxy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var mixin struct {
		Selector string              `json:"selector"`
		Panels   map[string][]string `json:"panels"`
	}
	if err := yaml.Unmarshal(raw, &mixin); err != nil {
		t.Fatal(err)
	}
	toHNSProxy := strings.NewReplacer(mixin.Selector, `job="hnsproxy"`, "$cluster", "", "$instance", ".+")
	out := map[string]string{}
	for title, queries := range mixin.Panels {
		for i, q := range queries {
			out[fmt.Sprintf("%s #%d", title, i+1)] = toHNSProxy.Replace(q)
		}
	}
	if len(out) == 0 {
		t.Fatal("the kubernetes-mixin fixture has no panels")
	}
	return out
}

// dashboardVariables stand for the dashboard's variables against the e2e
// Prometheus, whose scrape job is "hnsproxy" like the alerts' selector.
var dashboardVariables = strings.NewReplacer(
	"$__rate_interval", "1m", "$job", "hnsproxy", "$instance", ".+",
)

// mayBeEmpty are series the dashboard charts that a healthy cluster may
// not have, by a part of the query that selects them: failures, drift
// repairs, deletes HNS kept and node causes; and client-go's request
// latency, whose only requests that complete are hnsproxy's event writes
// (POST), made as it starts, before the first scrape, and on problems.
var mayBeEmpty = []string{`result!~"success|not_found"`, "hnsproxy_drift_repairs_total", "hnsproxy_hns_deletes_kept_total", "hnsproxy_node_cause_services",
	"rest_client_request_duration_seconds_bucket"}

func allowedEmpty(query string) bool {
	for _, m := range mayBeEmpty {
		if strings.Contains(query, m) {
			return true
		}
	}
	return false
}

// TestMonitoringQueries evaluates every dashboard query (variables
// substituted) and every alert expression against a real Prometheus
// scraping two nodes' hnsproxy: each parses and evaluates, and each
// dashboard query but those of series a healthy cluster may lack
// returns data. No query draws a warning or an info from Prometheus (a
// rate over a series that is not a counter, say; one such query shows the
// check is live). kube-prometheus's kube-proxy dashboard, pointed at
// hnsproxy's job, returns data in every panel, unannotated too.
func TestMonitoringQueries(t *testing.T) {
	ctx := context.Background()
	c, web, svc := webOnTwoNodes(t, l2bridgeSpec)
	for _, n := range c.Nodes {
		all := backends(local(onNode(web, n.Name())...), remote(notOnNode(web, n.Name())...))
		expectLBs(t, c, n, svc, lb("ClusterIP", frontend(svc.Spec.ClusterIP, 80, "TCP", 8080), flags("DSR"), all...))
	}
	prom, err := framework.StartPrometheus(ctx, c, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer prom.Stop()

	// A probe as the kubelet's: /livez has answered once on every node.
	for _, n := range c.Nodes {
		livez := strings.TrimSuffix(n.Proxy.HealthzURL(), "/healthz") + "/livez"
		if code, body, err := httpGet(ctx, livez); err != nil || code != http.StatusOK {
			t.Fatalf("node %s: %s: %d %s %v", n.Name(), livez, code, body, err)
		}
	}
	// Rates need two scrapes of every node in their window.
	warmUp := `sum by (node) (rate(kubeproxy_sync_proxy_rules_endpoint_changes_total{job="hnsproxy"}[1m]))`
	err = framework.Poll(ctx, framework.ConvergeWait, 500*time.Millisecond, func(ctx context.Context) error {
		samples, _, err := prom.Query(ctx, warmUp)
		if err != nil || len(samples) != len(c.Nodes) {
			return fmt.Errorf("%s: %v %v", warmUp, samples, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The annotations below are live: the rate of a gauge draws
	// Prometheus's "might not be a counter" info (Prometheus 2.x had no
	// such annotations, so this fails against one).
	notACounter := `rate(kubeproxy_sync_proxy_rules_last_timestamp_seconds{job="hnsproxy"}[1m])`
	if _, annotations, err := prom.Query(ctx, notACounter); err != nil {
		t.Fatal(err)
	} else if !slices.ContainsFunc(annotations, func(a string) bool { return strings.Contains(a, "might not be a counter") }) {
		t.Errorf("%s: Prometheus annotates it %q, want its \"might not be a counter\" info", notACounter, annotations)
	}
	changeInTheWindow(t, c, web, svc)
	for title, queries := range dashboardQueries(t) {
		for _, q := range queries {
			q = dashboardVariables.Replace(q)
			if strings.Contains(q, "$") {
				t.Errorf("panel %q: %q has a variable the test does not know", title, q)
				continue
			}
			// A series born since the warm-up (livez) needs its own two scrapes.
			err := framework.Poll(ctx, framework.ConvergeWait, time.Second, func(ctx context.Context) error {
				samples, annotations, err := prom.Query(ctx, q)
				if err != nil {
					return err
				}
				if len(annotations) > 0 {
					return fmt.Errorf("%q: Prometheus annotates it: %v", q, annotations)
				}
				if !hasData(samples) && !allowedEmpty(q) {
					return fmt.Errorf("%q returns no data: %v", q, samples)
				}
				return nil
			})
			if err != nil {
				t.Errorf("panel %q: %v", title, err)
			}
		}
	}

	// kube-prometheus's kube-proxy dashboard (kubernetes-mixin), pointed at
	// hnsproxy's job as operators.md says: every panel charts it.
	mixinQueries := mixinProxyQueries(t)
	for title := range mixinMayBeEmpty {
		if _, ok := mixinQueries[title]; !ok {
			t.Errorf("mixinMayBeEmpty names %q, which the kubernetes-mixin fixture has not", title)
		}
	}
	for title, q := range mixinQueries {
		if why, ok := mixinMayBeEmpty[title]; ok {
			if _, _, err := prom.Query(ctx, q); err != nil {
				t.Errorf("kubernetes-mixin panel %q (may be empty: %s): %v", title, why, err)
			}
			continue
		}
		err := framework.Poll(ctx, framework.ConvergeWait, time.Second, func(ctx context.Context) error {
			samples, annotations, err := prom.Query(ctx, q)
			if err != nil {
				return err
			}
			if len(annotations) > 0 {
				return fmt.Errorf("%q: Prometheus annotates it: %v", q, annotations)
			}
			if !hasData(samples) {
				return fmt.Errorf("%q returns no data: %v", q, samples)
			}
			return nil
		})
		if err != nil {
			t.Errorf("kubernetes-mixin panel %q: %v", title, err)
		}
	}

	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert string `json:"alert"`
				Expr  string `json:"expr"`
			} `json:"rules"`
		} `json:"groups"`
	}
	raw, err := os.ReadFile("../deploy/monitoring/hnsproxy-alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &rules); err != nil {
		t.Fatal(err)
	}
	// On this healthy cluster, scraped, converged, no alert condition holds.
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			samples, annotations, err := prom.Query(ctx, r.Expr)
			if err != nil {
				t.Errorf("alert %s: %v", r.Alert, err)
			} else if len(annotations) > 0 {
				t.Errorf("alert %s: Prometheus annotates its expression: %v", r.Alert, annotations)
			} else if len(samples) > 0 {
				t.Errorf("alert %s would fire on a healthy cluster: %v", r.Alert, samples)
			}
		}
	}
}

// hasData reports whether a query's result holds a number: a quantile of
// buckets that did not move in its window is NaN, a panel with no line,
// which is no data however many series carry it.
func hasData(samples model.Vector) bool {
	return slices.ContainsFunc(samples, func(s *model.Sample) bool { return !math.IsNaN(float64(s.Value)) })
}

// changeInTheWindow makes, once Prometheus scrapes every node, the changes
// the latency panels chart: everything before was programmed before the
// first scrape, so their buckets would not move in any window. A pod joins
// web (its EndpointSlice stamped with the change's trigger time, as the
// controller does: network programming latency on both nodes) and each
// Node's zone changes (a full sync on each).
func changeInTheWindow(t *testing.T, c *framework.Cluster, web []framework.Pod, svc *corev1.Service) {
	t.Helper()
	ctx := context.Background()
	web = append(slices.Clone(web), wire(t, c.Nodes[0], "web-late", 1)...)
	if err := framework.UpdateEndpoints(ctx, c, svc, framework.Backends(web)); err != nil {
		t.Fatal(err)
	}
	for _, n := range c.Nodes {
		all := backends(local(onNode(web, n.Name())...), remote(notOnNode(web, n.Name())...))
		expectLBs(t, c, n, svc, lb("ClusterIP", frontend(svc.Spec.ClusterIP, 80, "TCP", 8080), flags("DSR"), all...))
		patch := []byte(`{"metadata":{"labels":{"topology.kubernetes.io/zone":"monitoring-` + n.Name() + `"}}}`)
		if _, err := c.Admin.CoreV1().Nodes().Patch(ctx, n.Name(), types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}
