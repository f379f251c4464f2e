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

// ErrStateDirNotPrivate is returned by LockStateFile when the state
// directory is one someone other than SYSTEM, Administrators (root) or
// this process's user can write: one made before hnsproxy by another
// user (C:\ProgramData lets every user make folders), one whose ACL or
// mode lets others write, or a link to elsewhere. Whoever can write it can
// plant a state file that names another program's HNS objects as
// hnsproxy's (the daemon and --cleanup then delete them), hold the lock,
// or swap a file for a link between hnsproxy's check and its open.
var ErrStateDirNotPrivate = errors.New("the state directory is not private to hnsproxy")

// notPrivate is ErrStateDirNotPrivate for dir, saying why and what to do.
func notPrivate(dir, why string) error {
	return fmt.Errorf("%s: %w: %s; a state file there could have been written by someone else. "+
		"Remove the directory (hnsproxy makes it anew, %s) or point --state-file into a directory of its own", dir, ErrStateDirNotPrivate, why, privateDirText)
}

// checkStateDir is checkPrivateDir; a variable so that a test can make the
// check itself fail.
var checkStateDir = checkPrivateDir

// StateLock is this process's hold on a state file.
type StateLock struct{ f *os.File }

// LockStateFile takes the lock of stateFile without waiting: an error
// matching ErrStateFileLocked while another process holds it. The state
// directory is created (owner-only) if missing; one that exists and others
// can write, or whose owner and ACL cannot be read, is refused with
// ErrStateDirNotPrivate, before any file in it is opened. Every reader and writer of the state file runs under this
// lock, so the check covers them all.
func LockStateFile(stateFile string) (*StateLock, error) {
	path := stateFile + ".lock"
	dir := filepath.Dir(path)
	if err := mkdirPrivate(dir); err != nil {
		return nil, err
	}
	if err := checkStateDir(dir); err != nil {
		if !errors.Is(err, ErrStateDirNotPrivate) {
			// Not known private is not private: the directory's maker may
			// deny SYSTEM the right to read its ACL and still let it read
			// a state file planted there, and any other lock failure lets
			// the caller run on without the lock.
			err = notPrivate(dir, fmt.Sprintf("who may write it cannot be read (%v)", err))
		}
		return nil, err
	}
	f, err := openLockFile(path)
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
