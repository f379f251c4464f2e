//go:build !windows

package reconciler

import (
	"errors"
	"os"
	"syscall"
)

// lockExclusive takes flock's exclusive lock on f without waiting. The lock
// belongs to the open file, so a second open of the path, in this process
// or another, cannot take it while f is open.
func lockExclusive(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

func lockHeld(err error) bool { return errors.Is(err, syscall.EWOULDBLOCK) }

// openLockFile opens the lock file, creating it if missing.
func openLockFile(path string) (*os.File, error) {
	return openNoFollow(path, os.O_RDWR|os.O_CREATE, 0o600)
}
