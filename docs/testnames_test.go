package docs_test

import (
	"io/fs"
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
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "_output") {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case strings.HasSuffix(path, "_test.go"):
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range def.FindAllStringSubmatch(string(src), -1) {
				defined[m[1]] = true
			}
		case strings.HasSuffix(path, ".md") && d.Name() != "benchmarks-history.md":
			text, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, name := range cite.FindAllString(string(text), -1) {
				if name != "FuzzXxx" { // reliability.md's placeholder for any fuzz target
					cited[name] = append(cited[name], path)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
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
