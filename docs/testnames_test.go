package docs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCitedTestsExist: the pages cite tests by name as the proof of what
// they say (simulator.md's rule tables, reliability.md, cni.md...); each
// cited Test, Fuzz or Benchmark function exists. benchmarks-history.md
// records earlier sessions, whose tests may since have been renamed.
func TestCitedTestsExist(t *testing.T) {
	defined := map[string]bool{}
	cited := map[string][]string{}
	def := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Benchmark)\w+)\(`)
	cite := regexp.MustCompile(`\b(?:Test|Fuzz|Benchmark)[A-Z]\w*`)
	for _, path := range repoFiles(t, "_test.go", ".md") {
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.HasSuffix(path, "_test.go"):
			for _, m := range def.FindAllStringSubmatch(string(text), -1) {
				defined[m[1]] = true
			}
		case filepath.Base(path) != "benchmarks-history.md":
			for _, name := range cite.FindAllString(string(text), -1) {
				if name != "FuzzXxx" { // reliability.md's placeholder for any fuzz target
					cited[name] = append(cited[name], path)
				}
			}
		}
	}
	if len(defined) < 500 || len(cited) < 100 {
		t.Fatalf("found %d test functions and %d cited names; the patterns no longer match", len(defined), len(cited))
	}
	for name, pages := range cited {
		if !defined[name] {
			t.Errorf("%s, cited in %v, is no test function of the repository", name, pages)
		}
	}
}
