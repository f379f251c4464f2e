package reconciler

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/windows"
)

// TestWindowsAReadOnlyLockFileIsLockedAllTheSame: a lock file with the
// read-only attribute (a restored backup, a copy from read-only media,
// attrib +r) is locked as any other, and a second lock is refused. Windows
// refuses write access to a read-only file, and the lock was opened for
// writing: every start failed to take it and ran without it (lockState),
// so a second hnsproxy, or --cleanup, ran beside the first. LockFileEx
// needs only read access. Wine does not refuse the write access, so this
// test reads the access the lock's handle was granted.
func TestWindowsAReadOnlyLockFileIsLockedAllTheSame(t *testing.T) {
	prev := checkStateDir
	t.Cleanup(func() { checkStateDir = prev })
	checkStateDir = func(string) error { return nil } // Wine keeps no security descriptors
	state := filepath.Join(scratchDir(t), "state", "state.json")
	first, err := LockStateFile(state)
	if err != nil {
		t.Fatal(err)
	}
	first.Release()
	if err := os.Chmod(state+".lock", 0o400); err != nil { // FILE_ATTRIBUTE_READONLY
		t.Fatal(err)
	}
	lock, err := LockStateFile(state)
	if err != nil {
		t.Fatalf("lock of a read-only lock file: %v, want it taken", err)
	}
	defer lock.Release()
	if granted := grantedAccess(t, lock.f); granted&(windows.FILE_WRITE_DATA|windows.FILE_APPEND_DATA) != 0 {
		t.Errorf("the lock's handle has access %#x, with write access that Windows refuses on a read-only file", granted)
	}
	if second, err := LockStateFile(state); !errors.Is(err, ErrStateFileLocked) {
		second.Release()
		t.Errorf("a second lock while the first is held: %v, want ErrStateFileLocked", err)
	}
}
