package reconciler

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// lockExclusive takes LockFileEx's exclusive lock on f's first byte without
// waiting (LOCKFILE_FAIL_IMMEDIATELY: ERROR_LOCK_VIOLATION while another
// handle holds it, in this process or another). Windows releases the locks
// of a process that ends.
func lockExclusive(f *os.File) error {
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY,
		0, 1, 0, new(windows.Overlapped))
}

func lockHeld(err error) bool { return errors.Is(err, windows.ERROR_LOCK_VIOLATION) }
