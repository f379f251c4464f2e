package metrics

import (
	"maps"
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// kubernetesMixinProxy is testdata/kubernetes-mixin-proxy.yaml: the queries
// of the kube-proxy dashboard and alert kube-prometheus installs, which a
// cluster replacing kube-proxy with hnsproxy already has.
type kubernetesMixinProxy struct {
	Selector  string              `json:"selector"`
	Variables map[string]string   `json:"variables"`
	Panels    map[string][]string `json:"panels"`
	Alerts    map[string]string   `json:"alerts"`
}

// mixinVariables stand for the mixin dashboard's variables: a cluster
// without the multi-cluster label, every instance.
var mixinVariables = strings.NewReplacer("$cluster", "", "$instance", ".+")

// mixinGaps are problems the mixin's queries have on kube-proxy itself,
// so hnsproxy's scrape may have them alike.
var mixinGaps = map[string]string{
	// client-go's request latency histogram is labelled verb and host;
	// the mixin groups it by a url label it no longer has, so the
	// panels' legend shows the verb alone, for kube-proxy as for hnsproxy.
	`aggregates by "url", which none of its series has`: "client-go has no url label",
}

func readKubernetesMixinProxy(t *testing.T) kubernetesMixinProxy {
	t.Helper()
	raw, err := os.ReadFile("testdata/kubernetes-mixin-proxy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var m kubernetesMixinProxy
	if err := yaml.UnmarshalStrict(raw, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Panels) == 0 || len(m.Alerts) == 0 || m.Selector == "" {
		t.Fatalf("testdata/kubernetes-mixin-proxy.yaml: %d panels, %d alerts, selector %q", len(m.Panels), len(m.Alerts), m.Selector)
	}
	return m
}

// TestKubernetesMixinProxyDashboardChartsHNSProxy: the kube-proxy dashboard
// and alert an operator already has select only series hnsproxy exposes,
// with the labels they match on, and use each as its kind allows (a rate
// of a counter, a quantile of buckets). Pointed at hnsproxy's scrape job
// (operators.md, "Monitoring"), they chart it as they charted kube-proxy.
func TestKubernetesMixinProxyDashboardChartsHNSProxy(t *testing.T) {
	mixin := readKubernetesMixinProxy(t)
	exposed := exposedSeries(t)
	// The mixin's cluster label is one Prometheus adds (external labels
	// or relabelling), like job and instance.
	for name, facts := range exposed {
		labels := map[string]bool{"cluster": true}
		maps.Copy(labels, facts.labels)
		facts.labels = labels
		exposed[name] = facts
	}
	check := func(where, expr string) {
		t.Helper()
		if !strings.Contains(expr, mixin.Selector) {
			t.Errorf("%s: %q does not use the mixin's selector %s", where, expr, mixin.Selector)
		}
		for _, p := range exprProblems(mixinVariables.Replace(expr), exposed) {
			if mixinGaps[p] == "" {
				t.Errorf("%s: %q %s", where, expr, p)
			}
		}
	}
	for name, selector := range mixin.Variables {
		check("variable "+name, selector)
	}
	for title, queries := range mixin.Panels {
		for _, q := range queries {
			check("panel "+title, q)
		}
	}
	for name, expr := range mixin.Alerts {
		check("alert "+name, expr)
	}
}
