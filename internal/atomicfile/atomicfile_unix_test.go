//go:build !windows

package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestReplaceLeavesALinkAlone: a refused rename over a link to a read-only
// file changes neither the link nor its target.
func TestReplaceLeavesALinkAlone(t *testing.T) {
	rename = func(from, to string) error {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: fs.ErrPermission}
	}
	t.Cleanup(func() { rename = os.Rename })
	dir := t.TempDir()
	target, link := filepath.Join(dir, "target"), filepath.Join(dir, "link")
	if err := os.WriteFile(target, []byte("theirs"), 0o400); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := Write(link, []byte("new"), 0o600); err == nil {
		t.Error("the refused rename reported no error")
	}
	if info, err := os.Stat(target); err != nil || info.Mode().Perm() != 0o400 {
		t.Errorf("target mode %v, %v; want it left 0400", info.Mode().Perm(), err)
	}
}
