package metrics

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"k8s.io/component-base/metrics/legacyregistry"
	"sigs.k8s.io/yaml"
)

// The dashboard and alerting rules operators drop in (deploy/monitoring)
// may only chart and alert on series hnsproxy exposes: a renamed metric
// fails here, not on an operator's empty panel or silent alert.

const monitoringDir = "../deploy/monitoring"

// prometheusSeries are the series Prometheus itself adds to every target:
// up, a gauge.
var prometheusSeries = scrapedSeries{"up": {}}

// targetLabels are the labels the scrape adds to every series: the queries
// may select and group by these beside a metric's own.
var targetLabels = map[string]bool{"job": true, "instance": true}

// scrapedSeries maps each series name a scrape of hnsproxy carries to
// what the checks know of it.
type scrapedSeries map[string]seriesFacts

// seriesFacts are a series' label names and whether it only rises: a
// counter, or a histogram's or summary's _bucket, _sum or _count.
type seriesFacts struct {
	labels  map[string]bool
	counter bool
}

// exposedSeries are the series a scrape of hnsproxy carries, with every
// metric touched: histograms as their _bucket (with le), _sum and _count,
// and Prometheus' own.
func exposedSeries(t *testing.T) scrapedSeries {
	t.Helper()
	Register()
	RegisterFeatureGates(testFeatureGates(t))
	touchAll()
	oneAPIRequest(t) // client-go's rest_client_* get their samples
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	series := maps.Clone(prometheusSeries)
	for _, f := range families {
		labelNames := map[string]bool{}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				labelNames[l.GetName()] = true
			}
		}
		series[f.GetName()] = seriesFacts{labels: labelNames, counter: f.GetType() == dto.MetricType_COUNTER}
		var suffixes []string
		switch f.GetType() {
		case dto.MetricType_HISTOGRAM:
			suffixes = []string{"_bucket", "_sum", "_count"}
		case dto.MetricType_SUMMARY:
			suffixes = []string{"_sum", "_count"}
		}
		for _, suffix := range suffixes {
			series[f.GetName()+suffix] = seriesFacts{labels: maps.Clone(labelNames), counter: true}
		}
		if f.GetType() == dto.MetricType_HISTOGRAM {
			series[f.GetName()+"_bucket"].labels["le"] = true
		}
	}
	return series
}

// labelsOf are the label names series name has, the target's included.
func (s scrapedSeries) labelsOf(name string) map[string]bool {
	out := maps.Clone(targetLabels)
	maps.Copy(out, s[name].labels)
	return out
}

// promQL parses as a Prometheus server with its default flags does: no
// experimental functions, no unquoted UTF-8 names.
var promQL = parser.NewParser(parser.Options{})

// seriesNamesIn parses a PromQL expression and returns the metric names it selects.
func seriesNamesIn(expr string) ([]string, error) {
	node, err := promQL.ParseExpr(expr)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, vs := range selectorsIn(node) {
		names = append(names, selectedName(vs))
	}
	return names, nil
}

func selectorsIn(node parser.Node) []*parser.VectorSelector {
	var out []*parser.VectorSelector
	parser.Inspect(node, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			out = append(out, vs)
		}
		return nil
	})
	return out
}

func selectedName(vs *parser.VectorSelector) string {
	name := vs.Name
	for _, m := range vs.LabelMatchers {
		if m.Name == model.MetricNameLabel && m.Type == labels.MatchEqual {
			name = m.Value
		}
	}
	return name
}

// checkExpr reports exprProblems as test errors.
func checkExpr(t *testing.T, where, expr string, exposed scrapedSeries) {
	t.Helper()
	for _, p := range exprProblems(expr, exposed) {
		t.Errorf("%s: %q %s", where, expr, p)
	}
}

// counterFunctions read a counter's rises (resets included): over a gauge
// they answer nonsense, and newer Prometheus annotates the query.
var counterFunctions = map[string]bool{"rate": true, "irate": true, "increase": true, "resets": true}

// exprProblems are what is wrong with a dashboard or alert expression: it
// does not parse, selects a series hnsproxy does not expose, matches on a
// label that series lacks, aggregates by a label none of its series has,
// takes a counter's rate of a series that is not one, or takes a
// quantile of what is not a histogram's buckets by le. A renamed metric
// or label would otherwise leave a panel empty or an alert silent, while
// the promtool tests, which write their own series, still pass; a wrong
// function would chart nonsense, which Prometheus 3 annotates (the e2e
// suite's TestMonitoringQueries fails on any annotation) but 2.x, still
// in use, evaluates without a word.
func exprProblems(expr string, exposed scrapedSeries) []string {
	node, err := promQL.ParseExpr(expr)
	if err != nil {
		return []string{fmt.Sprintf("does not parse: %v", err)}
	}
	var problems []string
	selectors := selectorsIn(node)
	if len(selectors) == 0 {
		problems = append(problems, "selects no series")
	}
	for _, vs := range selectors {
		n := selectedName(vs)
		if _, ok := exposed[n]; n == "" || !ok {
			problems = append(problems, fmt.Sprintf("selects %q, which hnsproxy does not expose", n))
			continue
		}
		has := exposed.labelsOf(n)
		for _, m := range vs.LabelMatchers {
			if m.Name != model.MetricNameLabel && !has[m.Name] {
				problems = append(problems, fmt.Sprintf("matches %s on label %q, which it does not have", n, m.Name))
			}
		}
	}
	parser.Inspect(node, func(n parser.Node, _ []parser.Node) error {
		switch n := n.(type) {
		case *parser.AggregateExpr:
			if n.Without {
				return nil
			}
			inner := map[string]bool{}
			for _, vs := range selectorsIn(n.Expr) {
				maps.Copy(inner, exposed.labelsOf(selectedName(vs)))
			}
			for _, l := range n.Grouping {
				if !inner[l] {
					problems = append(problems, fmt.Sprintf("aggregates by %q, which none of its series has", l))
				}
			}
		case *parser.Call:
			problems = append(problems, callProblems(n, exposed)...)
		}
		return nil
	})
	return problems
}

// callProblems are a function call's arguments of the wrong kind: a
// counter function over a series that only rises is right, and a
// quantile needs buckets with le kept through every aggregation. A series
// hnsproxy does not expose is exprProblems' to report, once.
func callProblems(call *parser.Call, exposed scrapedSeries) []string {
	var problems []string
	switch {
	case counterFunctions[call.Func.Name]:
		for _, vs := range selectorsIn(call.Args[0]) {
			n := selectedName(vs)
			if facts, known := exposed[n]; known && !facts.counter {
				problems = append(problems, fmt.Sprintf("takes %s of %s, which is not a counter", call.Func.Name, n))
			}
		}
	case call.Func.Name == "histogram_quantile":
		buckets := call.Args[1]
		for _, vs := range selectorsIn(buckets) {
			n := selectedName(vs)
			if _, known := exposed[n]; known && !strings.HasSuffix(n, "_bucket") {
				problems = append(problems, fmt.Sprintf("takes a quantile of %s, which is not a histogram's buckets", n))
			}
		}
		parser.Inspect(buckets, func(n parser.Node, _ []parser.Node) error {
			if agg, ok := n.(*parser.AggregateExpr); ok && slices.Contains(agg.Grouping, "le") == agg.Without {
				problems = append(problems, fmt.Sprintf("takes a quantile after %s drops le", agg.Op))
			}
			return nil
		})
	}
	return problems
}

// grafanaDashboard is the part of Grafana's dashboard model the checks read.
type grafanaDashboard struct {
	UID           string         `json:"uid"`
	Title         string         `json:"title"`
	SchemaVersion int            `json:"schemaVersion"`
	Panels        []grafanaPanel `json:"panels"`
	Templating    struct {
		List []grafanaVariable `json:"list"`
	} `json:"templating"`
}

type grafanaDatasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type grafanaPanel struct {
	ID         int                      `json:"id"`
	Type       string                   `json:"type"`
	Title      string                   `json:"title"`
	Datasource *grafanaDatasource       `json:"datasource"`
	GridPos    struct{ H, W, X, Y int } `json:"gridPos"`
	Targets    []struct {
		RefID      string             `json:"refId"`
		Expr       string             `json:"expr"`
		Datasource *grafanaDatasource `json:"datasource"`
	} `json:"targets"`
	Panels []grafanaPanel `json:"panels"` // a collapsed row's
}

type grafanaVariable struct {
	Name       string             `json:"name"`
	Type       string             `json:"type"`
	Query      variableQuery      `json:"query"`
	Datasource *grafanaDatasource `json:"datasource"`
}

// variableQuery is a variable's query: a string (datasource variables, older
// dashboards) or an object with the query in its "query" field.
type variableQuery string

func (q *variableQuery) UnmarshalJSON(raw []byte) error {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		*q = variableQuery(s)
		return nil
	}
	var obj struct {
		Query string `json:"query"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return err
	}
	*q = variableQuery(obj.Query)
	return nil
}

// sampleValues stand for the dashboard's variables and Grafana's built-in
// intervals when a query is parsed.
var sampleValues = map[string]string{
	"__rate_interval": "5m", "__interval": "1m", "__range": "1h",
	"job": "hnsproxy", "instance": "n1:10249",
}

var variableRef = regexp.MustCompile(`\$\{(\w+)\}|\$(\w+)`)

// substitute replaces $var and ${var} with sampleValues; an unknown variable is an error.
func substitute(q string) (string, error) {
	var unknown []string
	out := variableRef.ReplaceAllStringFunc(q, func(ref string) string {
		name := strings.Trim(ref, "${}")
		v, ok := sampleValues[name]
		if !ok {
			unknown = append(unknown, name)
		}
		return v
	})
	if len(unknown) > 0 {
		return "", fmt.Errorf("unknown variables %v (add sample values to the test)", unknown)
	}
	return out, nil
}

// labelValues is Grafana's label_values(selector, label) variable query.
var labelValues = regexp.MustCompile(`^label_values\((.+),\s*(\w+)\)$`)

var panelTypes = map[string]bool{"row": true, "stat": true, "timeseries": true, "table": true}

func TestDashboard(t *testing.T) {
	exposed := exposedSeries(t)
	raw, err := os.ReadFile(filepath.Join(monitoringDir, "hnsproxy-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d grafanaDashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("dashboard JSON: %v", err)
	}
	if d.UID == "" || d.Title == "" || d.SchemaVersion < 36 {
		t.Errorf("dashboard uid %q title %q schemaVersion %d: want both set and a schema of Grafana 9 or later", d.UID, d.Title, d.SchemaVersion)
	}

	vars := map[string]bool{}
	for _, v := range d.Templating.List {
		vars[v.Name] = true
		if v.Type != "query" {
			continue
		}
		m := labelValues.FindStringSubmatch(string(v.Query))
		if m == nil {
			t.Errorf("variable %s: query %q is not label_values(selector, label)", v.Name, v.Query)
			continue
		}
		q, err := substitute(m[1])
		if err != nil {
			t.Errorf("variable %s: %v", v.Name, err)
			continue
		}
		checkExpr(t, "variable "+v.Name, q, exposed)
	}
	if !vars["datasource"] {
		t.Error("the dashboard has no datasource variable: every panel should query the data source the operator picks")
	}

	ids := map[int]bool{}
	queries := 0
	var walk func(panels []grafanaPanel)
	walk = func(panels []grafanaPanel) {
		for _, p := range panels {
			where := fmt.Sprintf("panel %d %q", p.ID, p.Title)
			if ids[p.ID] {
				t.Errorf("%s: id used twice", where)
			}
			ids[p.ID] = true
			if !panelTypes[p.Type] {
				t.Errorf("%s: type %q is not one of %v", where, p.Type, slices.Sorted(maps.Keys(panelTypes)))
			}
			if g := p.GridPos; g.W < 1 || g.H < 1 || g.X < 0 || g.X+g.W > 24 {
				t.Errorf("%s: gridPos %+v is outside Grafana's 24 columns", where, g)
			}
			walk(p.Panels)
			if p.Type == "row" {
				continue
			}
			if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
				t.Errorf("%s: datasource %+v, want the ${datasource} variable", where, p.Datasource)
			}
			if len(p.Targets) == 0 {
				t.Errorf("%s: no queries", where)
			}
			refs := map[string]bool{}
			for _, tg := range p.Targets {
				if tg.RefID == "" || refs[tg.RefID] {
					t.Errorf("%s: refId %q empty or used twice", where, tg.RefID)
				}
				refs[tg.RefID] = true
				q, err := substitute(tg.Expr)
				if err != nil {
					t.Errorf("%s: %v", where, err)
					continue
				}
				checkExpr(t, where, q, exposed)
				queries++
			}
		}
	}
	walk(d.Panels)
	if queries == 0 {
		t.Fatal("the dashboard has no queries")
	}
}

// alertRules is the Prometheus rule file format, as far as read here.
type alertRules struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []struct {
			Alert       string            `json:"alert"`
			Expr        string            `json:"expr"`
			Labels      map[string]string `json:"labels"`
			Annotations map[string]string `json:"annotations"`
		} `json:"rules"`
	} `json:"groups"`
}

// alertTests is promtool's rule test file format, as far as read here.
type alertTests struct {
	Tests []struct {
		AlertRuleTest []struct {
			Alertname string            `json:"alertname"`
			ExpAlerts []json.RawMessage `json:"exp_alerts"`
		} `json:"alert_rule_test"`
	} `json:"tests"`
}

func TestAlertRules(t *testing.T) {
	exposed := exposedSeries(t)
	var rules alertRules
	readYAML(t, "hnsproxy-alerts.yaml", &rules)
	alerts := map[string]bool{}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			where := "alert " + r.Alert
			alerts[r.Alert] = true
			checkExpr(t, where, r.Expr, exposed)
			if s := r.Labels["severity"]; s != "critical" && s != "warning" && s != "info" {
				t.Errorf("%s: severity %q, want critical, warning or info (kube-prometheus mixin convention)", where, s)
			}
			for _, a := range []string{"summary", "description", "runbook_url"} {
				if r.Annotations[a] == "" {
					t.Errorf("%s: no %s annotation", where, a)
				}
			}
			if !strings.HasPrefix(r.Alert, "HNSProxy") {
				t.Errorf("%s: alert names start with the component, HNSProxy", where)
			}
		}
	}
	if len(alerts) == 0 {
		t.Fatal("no alerts")
	}
	checkRunbooks(t, rules)

	// Every alert is unit tested both firing and quiet.
	var tests alertTests
	readYAML(t, "hnsproxy-alerts.test.yaml", &tests)
	fires, quiet := map[string]bool{}, map[string]bool{}
	for _, tc := range tests.Tests {
		for _, at := range tc.AlertRuleTest {
			if len(at.ExpAlerts) > 0 {
				fires[at.Alertname] = true
			} else {
				quiet[at.Alertname] = true
			}
		}
	}
	for a := range alerts {
		if !fires[a] || !quiet[a] {
			t.Errorf("alert %s: promtool tests it firing %v, quiet %v; want both", a, fires[a], quiet[a])
		}
	}

	for _, args := range [][]string{
		{"check", "rules", "hnsproxy-alerts.yaml"},
		{"test", "rules", "hnsproxy-alerts.test.yaml"},
	} {
		cmd := exec.Command(promtool(t), args...)
		cmd.Dir = monitoringDir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

func readYAML(t *testing.T, name string, into any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(monitoringDir, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, into); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// runbookPrefix is where the alerts' runbooks live: sections of the
// operator guide, "### Alert: <name>", whose anchors GitHub derives from
// the heading.
const runbookPrefix = "https://github.com/hnsproxy/hnsproxy/blob/main/docs/operators.md#"

func checkRunbooks(t *testing.T, rules alertRules) {
	t.Helper()
	guide, err := os.ReadFile("../docs/operators.md")
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	for _, line := range strings.Split(string(guide), "\n") {
		if name, ok := strings.CutPrefix(line, "### Alert: "); ok {
			anchors["alert-"+strings.ToLower(strings.TrimSpace(name))] = true
		}
	}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			anchor, ok := strings.CutPrefix(r.Annotations["runbook_url"], runbookPrefix)
			if !ok || !anchors[anchor] || anchor != "alert-"+strings.ToLower(r.Alert) {
				t.Errorf("alert %s: runbook_url %q is not its section in docs/operators.md (%salert-%s)", r.Alert, r.Annotations["runbook_url"], runbookPrefix, strings.ToLower(r.Alert))
			}
		}
	}
}

// The dashboard's job picker offers hnsproxy's scrape jobs alone. Linux
// kube-proxy exports every kubeproxy_* series too, so a picker reading one
// of them also lists the cluster's kube-proxy job, and picks it by default
// wherever its name sorts first (kube-prometheus's "kube-proxy" before a
// PodMonitor's "kube-system/hnsproxy"): the dashboard then opens on the
// Linux proxies, its HNS panels empty. A series only hnsproxy exports
// (hnsproxy_*) names no other job.
func TestDashboardJobVariableSelectsOnlyHNSProxy(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(monitoringDir, "hnsproxy-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d grafanaDashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	for _, v := range d.Templating.List {
		if v.Name != "job" {
			continue
		}
		m := labelValues.FindStringSubmatch(string(v.Query))
		if m == nil || m[2] != "job" {
			t.Fatalf("variable job: query %q is not label_values(selector, job)", v.Query)
		}
		names, err := seriesNamesIn(m[1])
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if !strings.HasPrefix(n, namespace+"_") {
				t.Errorf("variable job selects %q, which kube-proxy exports too: the picker offers (and may default to) kube-proxy's job", n)
			}
		}
		return
	}
	t.Fatal("the dashboard has no job variable")
}

// TestExprProblemsFindWhatChartsNonsense holds the checks the dashboard and
// alerts pass to the mistakes they are there for, on hnsproxy's own series.
func TestExprProblemsFindWhatChartsNonsense(t *testing.T) {
	exposed := exposedSeries(t)
	for _, tc := range []struct {
		expr string
		want string // a part of the one problem; "" for none
	}{
		{`sum by (instance) (rate(hnsproxy_hns_operations_total{result="unavailable"}[2m]))`, ""},
		{`histogram_quantile(0.99, sum by (instance, le) (rate(kubeproxy_sync_proxy_rules_duration_seconds_bucket[5m])))`, ""},
		{`histogram_quantile(0.5, rate(kubeproxy_sync_proxy_rules_duration_seconds_bucket[5m]))`, ""},
		{`time() - kubeproxy_sync_proxy_rules_last_timestamp_seconds > 300`, ""},
		{`rate(kubeproxy_sync_proxy_rules_duration_seconds_count[5m])`, ""},
		{`up == 0`, ""},
		{`rate(hnsproxy_objects[5m])`, "takes rate of hnsproxy_objects, which is not a counter"},
		{`increase(kubeproxy_sync_proxy_rules_last_timestamp_seconds[1h])`, "takes increase of kubeproxy_sync_proxy_rules_last_timestamp_seconds"},
		{`irate(up[1m])`, "takes irate of up"},
		{`histogram_quantile(0.99, rate(hnsproxy_hns_operations_total[5m]))`, "not a histogram's buckets"},
		{`histogram_quantile(0.99, sum by (instance) (rate(kubeproxy_sync_proxy_rules_duration_seconds_bucket[5m])))`, "after sum drops le"},
		{`histogram_quantile(0.99, sum without (le) (rate(kubeproxy_sync_proxy_rules_duration_seconds_bucket[5m])))`, "after sum drops le"},
		{`rate(hnsproxy_no_such_total[5m])`, "which hnsproxy does not expose"},
		{`hnsproxy_hns_operations_total{verb="create"}`, `on label "verb"`},
		{`sum by (verb) (hnsproxy_hns_operations_total)`, `aggregates by "verb"`},
		{`rate(`, "does not parse"},
	} {
		problems := exprProblems(tc.expr, exposed)
		switch {
		case tc.want == "" && len(problems) > 0:
			t.Errorf("%q: %v, want no problem", tc.expr, problems)
		case tc.want != "" && (len(problems) != 1 || !strings.Contains(problems[0], tc.want)):
			t.Errorf("%q: %v, want one problem with %q", tc.expr, problems, tc.want)
		}
	}
}
