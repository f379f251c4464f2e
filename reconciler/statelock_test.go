package reconciler

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// The state file's lock: one holder at a time (another open of the path
// is refused at once), given back by Release, and a lock file left by a
// process that ended (a crash leaves the file, never the lock) holds nobody
// off. The state directory is created if missing.
func TestStateFileLockHasOneHolder(t *testing.T) {
	// Removed best-effort: Wine fails t.TempDir's removal of the lock file.
	dir, err := os.MkdirTemp("", "hnsproxy-lock")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	stateFile := filepath.Join(dir, "missing dir", "state.json")
	first, err := LockStateFile(stateFile)
	if err != nil {
		t.Fatalf("first lock: %v", err)
	}
	if _, err := LockStateFile(stateFile); !errors.Is(err, ErrStateFileLocked) {
		t.Fatalf("second lock while the first holds it: %v, want ErrStateFileLocked", err)
	}
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	second, err := LockStateFile(stateFile)
	if err != nil {
		t.Fatalf("lock after the release: %v", err)
	}
	second.Release()

	// What a crashed holder leaves: the file, with whatever it held.
	if err := os.WriteFile(stateFile+".lock", []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	third, err := LockStateFile(stateFile)
	if err != nil {
		t.Fatalf("lock over a file a crashed holder left: %v", err)
	}
	third.Release()
}
