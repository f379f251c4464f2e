package reconciler

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// One process at a time may use a state file. Two would each write it from
// their own memory (a snapshot of one drops what the other recorded), and
// --cleanup beside a running daemon would delete what the daemon serves.
// The lock is the operating system's on <state file>.lock (flock on Unix,
// LockFileEx on Windows): it ends with the process that holds it, however
// that process ends, so a crash leaves no stale lock, only the empty file.

// ErrStateFileLocked is returned by LockStateFile while another process
// holds the state file's lock.
var ErrStateFileLocked = errors.New("another hnsproxy process holds the state file's lock")

// StateLock is this process's hold on a state file.
type StateLock struct{ f *os.File }

// LockStateFile takes the lock of stateFile without waiting: an error
// matching ErrStateFileLocked while another process holds it. The state
// directory is created (owner-only) if missing.
func LockStateFile(stateFile string) (*StateLock, error) {
	path := stateFile + ".lock"
	if err := mkdirPrivate(filepath.Dir(path)); err != nil {
		return nil, err
	}
	f, err := openNoFollow(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := lockExclusive(f); err != nil {
		f.Close()
		if lockHeld(err) {
			return nil, fmt.Errorf("%s: %w", path, ErrStateFileLocked)
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return &StateLock{f: f}, nil
}

// Release gives the lock up; closing the file releases it. A nil lock
// holds nothing.
func (l *StateLock) Release() error {
	if l == nil {
		return nil
	}
	return l.f.Close()
}
