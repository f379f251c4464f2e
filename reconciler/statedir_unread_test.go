package reconciler

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestStateDirThatCannotBeCheckedIsRefused: a state directory whose owner
// and ACL cannot be read is not known to be private. On Windows whoever
// made C:\ProgramData\hnsproxy first owns it and may deny SYSTEM the right
// to read its ACL while letting it read a state file planted there; were
// that failure taken as any other lock failure (hnsproxy runs on without
// the lock), the planted file would be read as hnsproxy's. It stops the
// start as a directory others can write does.
func TestStateDirThatCannotBeCheckedIsRefused(t *testing.T) {
	prev := checkStateDir
	t.Cleanup(func() { checkStateDir = prev })
	checkStateDir = func(dir string) error {
		return fmt.Errorf("reading the ACL of the state directory %s: %w", dir, fs.ErrPermission)
	}
	dir := filepath.Join(t.TempDir(), "state")
	lock, err := LockStateFile(filepath.Join(dir, "state.json"))
	if !errors.Is(err, ErrStateDirNotPrivate) {
		lock.Release()
		t.Fatalf("lock in a directory whose ACL cannot be read: %v, want ErrStateDirNotPrivate", err)
	}
	if _, serr := os.Lstat(filepath.Join(dir, "state.json.lock")); serr == nil {
		t.Error("the unchecked directory got a lock file")
	}
}
