package doctest

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSectionEndsAtItsLevelOutsideCode(t *testing.T) {
	dir := t.TempDir()
	page := "# Title\n\n## A\n\ntext\n\n```sh\n# a shell comment\n## not a heading\n```\n\n### A.1\n\nmore\n\n## B\n\nother\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "page.md"), []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	want := "\ntext\n\n```sh\n# a shell comment\n## not a heading\n```\n\n### A.1\n\nmore\n\n"
	if got := Section(t, "page.md", "## A"); got != want {
		t.Errorf("section A:\n%q\nwant\n%q", got, want)
	}
	if got := Section(t, "page.md", "### A.1"); got != "\nmore\n\n" {
		t.Errorf("section A.1: %q", got)
	}
	if got := Section(t, "page.md", "## B"); got != "\nother\n" {
		t.Errorf("section B (the last): %q", got)
	}
}
