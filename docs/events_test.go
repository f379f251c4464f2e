package docs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestOperatorsGuideListsEveryEventReason: an operator who finds an event
// of hnsproxy's (kubectl get events) looks its reason up in the guide's
// "Events" paragraph, which names every reason and no other. The reasons are the
// Reason... constants of the packages that raise events.
func TestOperatorsGuideListsEveryEventReason(t *testing.T) {
	guide, err := os.ReadFile(filepath.Join(root, "docs", "operators.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, events, ok := strings.Cut(string(guide), "\n**Events.**")
	if !ok {
		t.Fatal(`docs/operators.md has no "**Events.**" paragraph`)
	}
	events, _, _ = strings.Cut(events, "\n**")
	reason := regexp.MustCompile(`(?m)^\s*(?:const\s+)?Reason\w*\s*=\s*"(\w+)"`)
	var files []string
	for _, dir := range []string{"events", "proxier", "proxier/desired"} {
		m, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	n := 0
	raised := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range reason.FindAllStringSubmatch(string(src), -1) {
			n++
			raised[m[1]] = true
			if !strings.Contains(events, "`"+m[1]+"`") {
				t.Errorf("event reason %s (%s) is not in docs/operators.md's Events paragraph", m[1], f)
			}
		}
	}
	if n < 20 {
		t.Errorf("found %d event reasons in the sources; the pattern no longer matches their constants", n)
	}
	// And the paragraph names no reason hnsproxy no longer raises: every
	// name in code there is one of the constants.
	for _, m := range regexp.MustCompile("`([A-Za-z]+)`").FindAllStringSubmatch(events, -1) {
		if !raised[m[1]] {
			t.Errorf("docs/operators.md's Events paragraph names %s, which is no Reason constant of the packages that raise events", m[1])
		}
	}
}
