package docs_test

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/internal/doctest"
)

// TestBenchmarksTargetsTableCitesTheNewestSession: benchmarks.md's targets
// table says where the targets stand against the latest figures, and each
// session that measures adds a dated section ("## ... (2026-12-01, session
// 42)") to the page. A session whose section the table does not link has
// measured figures the table calls latest without holding them: the table
// must link the newest session's section, whether its figures move a row
// or only join it.
func TestBenchmarksTargetsTableCitesTheNewestSession(t *testing.T) {
	const table = "## Issue 17: where the targets stand"
	page := filepath.Join(root, "docs", "benchmarks.md")
	dated := regexp.MustCompile(`\(\d{4}-\d{2}-\d{2}, sessions? ([0-9]+)(?: and ([0-9]+))?\)$`)
	newest, newestAnchor := 0, ""
	for _, l := range linesOf(t, page) {
		h := heading.FindStringSubmatch(l.text)
		if l.fenced || h == nil || len(h[1]) != 2 {
			continue
		}
		m := dated.FindStringSubmatch(h[2])
		if m == nil {
			continue
		}
		for _, n := range m[1:] {
			if k, err := strconv.Atoi(n); err == nil && k > newest {
				newest, newestAnchor = k, anchorOf(h[2])
			}
		}
	}
	if newest == 0 {
		t.Fatalf("%s has no dated session section; the pattern no longer matches its headings", page)
	}
	if !strings.Contains(doctest.Section(t, "docs/benchmarks.md", table), "](#"+newestAnchor+")") {
		t.Errorf("docs/benchmarks.md %q does not link session %d's section (#%s): the table calls its figures the latest, so add what that session measured to its rows", table, newest, newestAnchor)
	}
}
