// Package doctest reads the project's Markdown for the tests that hold the
// docs to the code: one reading of a page's section for all of them.
package doctest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Read is the file at path, relative to the module's root.
func Read(t testing.TB, path string) string {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(root(t), path))
	if err != nil {
		t.Fatal(err)
	}
	return string(text)
}

// Section is the text of the Markdown file at path (relative to the module's
// root) under heading, a whole line such as "## Metrics", up to the next
// heading of its level or above. Lines in fenced code blocks are no
// headings: a shell comment there does not end the section.
func Section(t testing.TB, path, heading string) string {
	t.Helper()
	_, section, ok := strings.Cut(Read(t, path), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("%s has no %q section", path, heading)
	}
	level := strings.Index(heading, " ")
	fenced := false
	at := 0
	for _, line := range strings.SplitAfter(section, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "```"):
			fenced = !fenced
		case !fenced && headingLevel(line) > 0 && headingLevel(line) <= level:
			return section[:at]
		}
		at += len(line)
	}
	return section
}

// headingLevel is the number of #s opening a Markdown heading line, 0 if
// the line is none.
func headingLevel(line string) int {
	n := len(line) - len(strings.TrimLeft(line, "#"))
	if n == 0 || n >= len(line) || line[n] != ' ' {
		return 0
	}
	return n
}

// root is the module's root: the nearest folder above the working
// directory (a test's package) holding go.mod.
func root(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}
