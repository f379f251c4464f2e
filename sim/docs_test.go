package sim

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestSimulatorPageListsEveryVariant: docs/simulator.md's tables of the
// simulator's variants, which tests and operators pick by name, match the
// code: a row of the OS-build table per profile with its HNS version,
// build, backend cap and bugs, a row of the echo table per echo option and
// a row of the restart table per restart loss, and no row for a variant
// that does not exist.
func TestSimulatorPageListsEveryVariant(t *testing.T) {
	page, err := os.ReadFile("../docs/simulator.md")
	if err != nil {
		t.Fatal(err)
	}
	builds := firstCells(t, string(page), "## OS builds, backend caps and OS-bug profiles")
	var names []string
	for _, p := range Profiles() {
		names = append(names, p.Name)
		row, ok := builds[p.Name]
		if !ok {
			t.Errorf("profile %s has no row in simulator.md's OS-build table", p.Name)
			continue
		}
		bugs := "—"
		if len(p.Bugs) > 0 {
			var b []string
			for _, bug := range p.Bugs {
				b = append(b, "`"+string(bug)+"`")
			}
			bugs = strings.Join(b, ", ")
		}
		want := []string{p.Version.String(), p.OSBuild.String(), strconv.Itoa(p.Features().MaxBackends), bugs}
		if got := row[1:5]; !slices.Equal(got, want) {
			t.Errorf("simulator.md's OS-build row of %s says HNS, build, backends, bugs = %q, the profile %q", p.Name, got, want)
		}
	}
	checkNamed(t, "OS-build table", builds, names)
	checkNamed(t, "echo table", firstCells(t, string(page), "## Echo profiles"), EchoNames())
	var losses []string
	for _, l := range RestartLosses {
		losses = append(losses, string(l))
	}
	restarts := firstCells(t, string(page), "## What a restart drops: restart variants")
	restarts[""] = restarts[`""`] // the keep-all row writes its empty name quoted
	delete(restarts, `""`)
	checkNamed(t, "restart table", restarts, losses)
}

var firstCode = regexp.MustCompile("^`([^`]*)`")

// firstCells reads the table of a section: each row by the name its first
// cell starts with in backticks, with its trimmed cells; not the header.
func firstCells(t *testing.T, page, heading string) map[string][]string {
	t.Helper()
	_, section, ok := strings.Cut(page, "\n"+heading+"\n")
	if !ok {
		t.Fatalf("docs/simulator.md has no %q section", heading)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	rows := map[string][]string{}
	lines := strings.Split(section, "\n")
	for i, line := range lines {
		if !strings.HasPrefix(line, "| `") || i+1 < len(lines) && strings.HasPrefix(lines[i+1], "| ---") { // a header
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if m := firstCode.FindStringSubmatch(cells[0]); m != nil {
			rows[m[1]] = cells
		}
	}
	if len(rows) == 0 {
		t.Fatalf("docs/simulator.md %q: no table rows found", heading)
	}
	return rows
}

func checkNamed(t *testing.T, table string, rows map[string][]string, names []string) {
	t.Helper()
	for _, n := range names {
		if _, ok := rows[n]; !ok {
			t.Errorf("%q has no row in simulator.md's %s", n, table)
		}
	}
	for n := range rows {
		if !slices.Contains(names, n) {
			t.Errorf("simulator.md's %s has a row for %q, which the simulator does not have", table, n)
		}
	}
}
