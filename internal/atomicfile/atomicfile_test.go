package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestWriteReplacesAndLeavesNoTemporaryFile: the file ends with the mode
// asked for, here not the 0600 a temporary file is made with.
func TestWriteReplacesAndLeavesNoTemporaryFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "record.json")
	for _, content := range []string{"first", "second, longer than the first"} {
		if err := Write(path, []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(path); err != nil || string(got) != content {
			t.Fatalf("read %q, %v; want %q", got, err, content)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the file: %v", len(entries), entries)
	}
	if runtime.GOOS != "windows" {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o640 {
			t.Errorf("mode %v, %v; want 0640", fi.Mode().Perm(), err)
		}
	}
}

func TestFailedWriteLeavesNoTemporaryFile(t *testing.T) {
	dir := t.TempDir()
	// A directory where the file should be: the rename fails.
	occupied := filepath.Join(dir, "record.json")
	if err := os.MkdirAll(filepath.Join(occupied, "inside"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := Write(occupied, []byte("new"), 0o600); err == nil {
		t.Error("Write over a directory: no error")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "record.json" {
		t.Errorf("directory holds %v after the failed write, want only what was there", entries)
	}
}

// TestWriteReplacesAReadOnlyFile: a read-only file at the path is replaced
// where Windows refuses a rename over it (access denied), which a POSIX
// rename never does, so the refusal is played through rename.
func TestWriteReplacesAReadOnlyFile(t *testing.T) {
	rename = func(from, to string) error {
		if info, err := os.Stat(to); err == nil && info.Mode().Perm()&0o200 == 0 {
			return &os.LinkError{Op: "rename", Old: from, New: to, Err: fs.ErrPermission}
		}
		return os.Rename(from, to)
	}
	t.Cleanup(func() { rename = os.Rename })
	path := filepath.Join(t.TempDir(), "record.json")
	if err := os.WriteFile(path, []byte("old"), 0o400); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("new"), 0o600); err != nil {
		t.Fatalf("Write over a read-only file: %v", err)
	}
	if got, err := os.ReadFile(path); err != nil || string(got) != "new" {
		t.Errorf("read %q, %v; want the new content", got, err)
	}
}
