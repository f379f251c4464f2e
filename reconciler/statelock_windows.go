package reconciler

import (
	"errors"
	"io/fs"
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

// openLockFile opens an existing lock file for reading only, and creates
// one that is missing. LockFileEx needs read or write access, and Windows
// refuses write access to a file with the read-only attribute (a restored
// backup, a copy from read-only media, attrib +r); Go asks for write
// access whenever it may create the file. Opened for writing, such a lock
// file was never taken, and every start ran without the lock.
func openLockFile(path string) (*os.File, error) {
	f, err := openNoFollow(path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return openNoFollow(path, os.O_RDWR|os.O_CREATE, 0o600)
	}
	return f, err
}
