package docs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/internal/doctest"
)

// TestE2EPageNamesEveryE2ETest: e2e.md's "What the suite checks" is where a
// newcomer learns what the end-to-end suite covers, and where to look
// before writing another test; each top-level test of e2e/ is named on the
// page, in that table or beside it (TestDemo under "make demo").
func TestE2EPageNamesEveryE2ETest(t *testing.T) {
	page := doctest.Read(t, "docs/e2e.md")
	files, err := filepath.Glob(filepath.Join(root, "e2e", "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	def := regexp.MustCompile(`(?m)^func (Test\w+)\(t \*testing\.T\)`)
	n := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range def.FindAllStringSubmatch(string(src), -1) {
			n++
			if !strings.Contains(page, "`"+m[1]+"`") {
				t.Errorf("%s (%s) is not named in docs/e2e.md; add it to \"What the suite checks\"", m[1], filepath.Base(f))
			}
		}
	}
	if n < 20 {
		t.Fatalf("found %d e2e tests; the pattern no longer matches them", n)
	}
}
