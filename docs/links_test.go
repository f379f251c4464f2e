// Package docs_test checks the project's Markdown as a reader follows it:
// every relative link names a file or folder of the repository, and every
// #anchor a heading of the page it points into, derived as GitHub derives
// a heading's anchor. Sections move between pages (benchmarks.md keeps the
// current figures, benchmarks-history.md every earlier one); this is what
// tells a moved section from a dangling link.
package docs_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// The repository's root, seen from this package's folder.
const root = ".."

var (
	heading  = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	fence    = regexp.MustCompile("^\\s*(```|~~~)")
	codeSpan = regexp.MustCompile("`[^`]*`")
	// A link's target: [text](target) with no space in the target.
	link     = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	linkText = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// page is one Markdown file: its anchors and the links it makes.
type page struct {
	anchors map[string]bool
	links   []pageLink
}

type pageLink struct {
	line   int
	target string
}

// anchorOf is the anchor GitHub gives a heading: the rendered text (a
// link's text, no code or emphasis markers) lower-cased, every character
// but letters, digits, marks, '_' and '-' dropped, spaces made '-'.
func anchorOf(text string) string {
	text = linkText.ReplaceAllString(text, "$1")
	text = strings.NewReplacer("`", "", "*", "").Replace(text)
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// readPage reads path's headings and links, outside fenced code; a
// heading met again gets GitHub's -1, -2, ... suffix.
func readPage(t *testing.T, path string) page {
	t.Helper()
	p := page{anchors: map[string]bool{}}
	seen := map[string]int{}
	for _, l := range linesOf(t, path) {
		if l.fenced {
			continue
		}
		if m := heading.FindStringSubmatch(l.text); m != nil {
			a := anchorOf(m[2])
			if k, dup := seen[a]; dup {
				seen[a] = k + 1
				a += "-" + strconv.Itoa(k+1)
			} else {
				seen[a] = 0
			}
			p.anchors[a] = true
		}
		for _, m := range link.FindAllStringSubmatch(codeSpan.ReplaceAllString(l.text, ""), -1) {
			p.links = append(p.links, pageLink{line: l.n, target: m[1]})
		}
	}
	return p
}

// mdLine is a line of a Markdown page, numbered from 1; fenced when it is
// inside a fenced code block.
type mdLine struct {
	n      int
	text   string
	fenced bool
}

// linesOf lists the Markdown file at path's lines, less the fences
// themselves.
func linesOf(t *testing.T, path string) []mdLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []mdLine
	inFence := ""
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if m := fence.FindStringSubmatch(line); m != nil {
			switch inFence {
			case "":
				inFence = m[1]
			case m[1]:
				inFence = ""
			}
			continue
		}
		lines = append(lines, mdLine{n, line, inFence != ""})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

func TestRelativeLinksAndAnchorsResolve(t *testing.T) {
	files := repoFiles(t, ".md")
	if len(files) < 10 {
		t.Fatalf("found %d Markdown files under %s, want the docs and the READMEs", len(files), root)
	}
	pages := map[string]page{}
	for _, f := range files {
		pages[filepath.Clean(f)] = readPage(t, f)
	}
	checked := 0
	for _, f := range files {
		for _, l := range pages[filepath.Clean(f)].links {
			target, anchor, _ := strings.Cut(l.target, "#")
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path := filepath.Clean(f)
			if target != "" {
				path = filepath.Join(filepath.Dir(f), target)
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s:%d: link to %q: no such file", f, l.line, l.target)
					continue
				}
			}
			checked++
			if anchor == "" || !strings.HasSuffix(path, ".md") {
				continue
			}
			if !pages[path].anchors[anchor] {
				t.Errorf("%s:%d: link to %q: no heading of %s has the anchor %q", f, l.line, l.target, path, anchor)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative link checked")
	}
}

// The anchors GitHub gives headings of the kinds these pages have.
func TestAnchorOf(t *testing.T) {
	for heading, want := range map[string]string{
		"Issue 17: an overlay backend's node in one probe (2026-11-28, session 14)": "issue-17-an-overlay-backends-node-in-one-probe-2026-11-28-session-14",
		"What `rss_mib` contains":                      "what-rss_mib-contains",
		"The real process at scale (`make bench-e2e`)": "the-real-process-at-scale-make-bench-e2e",
		"Scaled 10→50, *p99* ≤ 1 ms":                   "scaled-1050-p99--1-ms",
		"See [the unit](#the-unit)":                    "see-the-unit",
	} {
		if got := anchorOf(heading); got != want {
			t.Errorf("anchorOf(%q) = %q, want %q", heading, got, want)
		}
	}
}

// A heading met again gets GitHub's numbered anchor, and a line in fenced
// code is neither a heading nor a link.
func TestReadPageNumbersRepeatedHeadingsAndSkipsCode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "page.md")
	text := "# Page\n\n## What is left\n\n## What is left\n\n```sh\n# not a heading\n[not](a-link.md)\n```\n\nSee [it](#what-is-left-1).\n"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	p := readPage(t, path)
	for _, a := range []string{"page", "what-is-left", "what-is-left-1"} {
		if !p.anchors[a] {
			t.Errorf("no anchor %q in %v", a, p.anchors)
		}
	}
	if p.anchors["not-a-heading"] || len(p.anchors) != 3 {
		t.Errorf("anchors %v, want the three headings only", p.anchors)
	}
	if len(p.links) != 1 || p.links[0].target != "#what-is-left-1" || p.links[0].line != 12 {
		t.Errorf("links %+v, want the one outside the code", p.links)
	}
}
