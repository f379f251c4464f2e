package docs_test

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/internal/doctest"
)

// TestWindowsTestingNamesEveryWindowsOnlyPackage: windows-testing.md opens
// by saying which code is Windows-only: the code that on Linux only the
// runs under Wine test. It names, in a code span, every package folder holding a
// *_windows.go file; a page that said "only hcnclient" while the SCM
// integration and the state file's lock were Windows-only too would send a
// newcomer looking for their tests in the wrong place.
func TestWindowsTestingNamesEveryWindowsOnlyPackage(t *testing.T) {
	page := doctest.Read(t, "docs/windows-testing.md")
	_, opening, _ := strings.Cut(page, "\n")
	opening, _, _ = strings.Cut(opening, "\n## ")
	folders := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, "_windows.go") {
			rel, err := filepath.Rel(root, filepath.Dir(path))
			if err != nil {
				return err
			}
			folders[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(folders) < 2 {
		t.Fatalf("found %d folders with *_windows.go files; the walk no longer sees them", len(folders))
	}
	for f := range folders {
		if !strings.Contains(opening, "`"+f+"`") {
			t.Errorf("%s holds Windows-only code, which docs/windows-testing.md's opening does not name (`%s`)", f, f)
		}
	}
}
