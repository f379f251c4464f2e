package metrics

import (
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/internal/doctest"
)

// TestOperatorsGuideMetricTables: the operator guide's "## Metrics" tables
// list every metric hnsproxy registers, with the type and label names the
// scrape shows (wantFamilies, which TestScrapeNamesAndPromtool checks
// against a real scrape), and no other.
func TestOperatorsGuideMetricTables(t *testing.T) {
	if n := len(kubeProxyMetrics) + len(hnsProxyMetrics); n != len(wantFamilies) {
		t.Fatalf("%d metrics are registered, wantFamilies names %d: add the new one there", n, len(wantFamilies))
	}
	section := doctest.Section(t, "docs/operators.md", "## Metrics")
	documented := map[string]bool{}
	for _, row := range metricRows(section) {
		documented[row.name] = true
		want, ok := wantFamilies[row.name]
		if !ok {
			t.Errorf("docs/operators.md lists metric %s, which hnsproxy does not register", row.name)
			continue
		}
		if typ := strings.ToLower(want.typ.String()); row.typ != typ {
			t.Errorf("docs/operators.md: %s is a %s, the metric a %s", row.name, row.typ, typ)
		}
		if row.labels != want.labels {
			t.Errorf("docs/operators.md: %s has labels %q, the metric %q", row.name, row.labels, want.labels)
		}
	}
	for name := range wantFamilies {
		if !documented[name] {
			t.Errorf("metric %s is not in docs/operators.md's Metrics tables", name)
		}
	}
}

type metricRow struct{ name, typ, labels string }

var (
	backticked    = regexp.MustCompile("`([^`]+)`")
	parenthesized = regexp.MustCompile(`\([^)]*\)`)
)

// metricRows reads "| `name` | type | labels | meaning |" rows. A row may
// name several metrics: "`a`, `b`" of one type, or "`a` / `_suffix`" with
// "type / type", the suffix replacing a's last word. Label cells name each
// label in backticks, its values in parentheses.
func metricRows(section string) []metricRow {
	var rows []metricRow
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 5 || !strings.HasPrefix(line, "| `") {
			continue
		}
		var labels []string
		for _, m := range backticked.FindAllStringSubmatch(parenthesized.ReplaceAllString(cells[3], ""), -1) {
			labels = append(labels, m[1])
		}
		sort.Strings(labels)
		names := backticked.FindAllStringSubmatch(cells[1], -1)
		types := strings.Split(cells[2], "/")
		for i, m := range names {
			name := m[1]
			if strings.HasPrefix(name, "_") && i > 0 {
				prev := rows[len(rows)-1].name
				name = prev[:strings.LastIndex(prev, "_")] + name
			}
			typ := types[0]
			if len(types) == len(names) {
				typ = types[i]
			}
			rows = append(rows, metricRow{name, strings.TrimSpace(typ), strings.Join(labels, ",")})
		}
	}
	return rows
}
