package docs_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/internal/doctest"
)

// TestArchitectureNamesEveryPackage: architecture.md's "Rooms" table,
// where a newcomer looks up what a folder owns, names every folder of the
// module that holds Go files, and names no folder that is gone.
// hack/controlplane is a module of its own (docs/e2e.md).
func TestArchitectureNamesEveryPackage(t *testing.T) {
	rooms := doctest.Section(t, "docs/architecture.md", "## Rooms")
	named := map[string]bool{}
	cellName := regexp.MustCompile("`([a-z][a-z0-9/_-]*)`")
	for _, line := range strings.Split(rooms, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 || !strings.HasPrefix(line, "| `") {
			continue
		}
		for _, m := range cellName.FindAllStringSubmatch(cells[1], -1) {
			named[m[1]] = true
		}
	}
	packages := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch {
			case rel == ".":
			case strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_") || d.Name() == "testdata" || rel == "hack/controlplane":
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(rel, ".go") && filepath.Dir(rel) != "." {
			packages[filepath.ToSlash(filepath.Dir(rel))] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(packages) < 30 {
		t.Fatalf("found %d Go folders; the walk no longer sees the module", len(packages))
	}
	for p := range packages {
		if !named[p] {
			t.Errorf("package folder %s is not in docs/architecture.md's Rooms table", p)
		}
	}
	for p := range named {
		if st, err := os.Stat(filepath.Join(root, p)); err != nil || !st.IsDir() {
			t.Errorf("docs/architecture.md's Rooms table names %s, which is no folder", p)
		}
	}
}
