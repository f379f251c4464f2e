package docs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCommandsNameWhatTheRepositoryHas: what the pages give a reader to
// run, in code (a code span or a fenced block), names what a fresh clone
// has: each `make X` a target of the Makefile, each script or folder under
// hack/ or deploy/ a path of the repository, each package a `go test` (run,
// build, vet, list) names a folder of it, each `_output/bin/X` a binary
// hack/build.sh builds. The link check sees only links; a command that
// names a target since renamed, or a tool that lives outside the
// repository, would otherwise reach the reader unchecked.
// benchmarks-history.md records earlier sessions' commands as they ran.
func TestCommandsNameWhatTheRepositoryHas(t *testing.T) {
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^([a-z0-9-]+):`).FindAllStringSubmatch(string(makefile), -1) {
		targets[m[1]] = true
	}
	buildScript, err := os.ReadFile(filepath.Join(root, "hack/build.sh"))
	if err != nil {
		t.Fatal(err)
	}
	binaries := map[string]bool{}
	all := regexp.MustCompile(`(?m)^\[.*\|\| names=\(([^)]*)\)`).FindSubmatch(buildScript)
	if all == nil {
		t.Fatal("hack/build.sh lists its binaries no longer in its default names=(...)")
	}
	for _, name := range strings.Fields(string(all[1])) {
		binaries[name] = true
	}
	makeCmd := regexp.MustCompile(`(?:^|[\s(;&|])make ([a-z0-9-]+)`)
	repoPath := regexp.MustCompile(`(?:^|[\s(;&|"'=])((?:hack|deploy)/[A-Za-z0-9_./-]*[A-Za-z0-9_])`)
	built := regexp.MustCompile(`_output/bin/([a-z0-9-]+)(?:/([a-z0-9-]+))?`)
	goCmd := regexp.MustCompile(`\bgo (?:test|run|build|vet|list)\b[^;&|#]*`)
	goPkg := regexp.MustCompile(`(?:^|\s)(\./[A-Za-z0-9_./-]*)`)
	platform := regexp.MustCompile(`^(?:windows|linux|darwin)-(?:amd64|arm64)$`)
	checked := 0
	for _, f := range repoFiles(t, ".md") {
		if filepath.Base(f) == "benchmarks-history.md" {
			continue // earlier sessions' commands, as they were run then
		}
		for _, c := range codeOf(t, f) {
			for _, m := range makeCmd.FindAllStringSubmatch(c.text, -1) {
				checked++
				if !targets[m[1]] {
					t.Errorf("%s:%d: `make %s`: the Makefile has no target %q", f, c.line, m[1], m[1])
				}
			}
			for _, m := range repoPath.FindAllStringSubmatch(c.text, -1) {
				checked++
				if _, err := os.Stat(filepath.Join(root, strings.TrimSuffix(m[1], "."))); err != nil {
					t.Errorf("%s:%d: %s is no path of the repository", f, c.line, m[1])
				}
			}
			for _, cmd := range goCmd.FindAllString(c.text, -1) {
				for _, m := range goPkg.FindAllStringSubmatch(cmd, -1) {
					checked++
					if _, err := os.Stat(filepath.Join(root, strings.TrimSuffix(m[1], "..."))); err != nil {
						t.Errorf("%s:%d: %s: %s is no folder of the repository", f, c.line, strings.TrimSpace(cmd), m[1])
					}
				}
			}
			for _, m := range built.FindAllStringSubmatch(c.text, -1) {
				name := m[1]
				if platform.MatchString(name) { // another platform's folder
					name = m[2]
				}
				checked++
				if name != "" && !binaries[name] {
					t.Errorf("%s:%d: _output/bin/%s is no binary hack/build.sh builds", f, c.line, name)
				}
			}
		}
	}
	if checked < 100 {
		t.Fatalf("checked %d commands; the patterns no longer match the pages", checked)
	}
}

// code is one piece of a page's code: a code span's text, or a line of a
// fenced block.
type code struct {
	line int
	text string
}

// codeOf lists the code of the Markdown file at path.
func codeOf(t *testing.T, path string) []code {
	t.Helper()
	var out []code
	for _, l := range linesOf(t, path) {
		if l.fenced {
			out = append(out, code{l.n, l.text})
			continue
		}
		for _, span := range codeSpan.FindAllString(l.text, -1) {
			out = append(out, code{l.n, strings.Trim(span, "`")})
		}
	}
	return out
}
