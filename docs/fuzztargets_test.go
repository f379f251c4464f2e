package docs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/internal/doctest"
)

// TestReliabilityPageTablesEveryFuzzTarget: reliability.md's table of fuzz
// targets says, for each, what input it draws and what must hold; CI fuzzes
// every target it finds (hack/fuzz.sh), so a target missing from the table
// runs with nobody told what it proves. Each Fuzz function has a row there.
func TestReliabilityPageTablesEveryFuzzTarget(t *testing.T) {
	section := doctest.Section(t, "docs/reliability.md", "## Fuzzing")
	// The targets' table comes before the section's subsections (long runs,
	// findings), whose rows name targets too.
	table, _, _ := strings.Cut(section, "\n### ")
	def := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(f \*testing\.F\)`)
	n := 0
	for _, path := range repoFiles(t, "_test.go") {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range def.FindAllStringSubmatch(string(src), -1) {
			n++
			if !strings.Contains(table, "\n| `"+m[1]+"`") {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s (%s) has no row in docs/reliability.md's table of fuzz targets", m[1], rel)
			}
		}
	}
	if n < 10 {
		t.Fatalf("found %d fuzz targets; the pattern no longer matches them", n)
	}
}
