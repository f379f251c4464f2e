//go:build !windows

package reconciler

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// openNoFollow opens name with O_NOFOLLOW: a symlink at name fails (ELOOP)
// instead of redirecting the read or the append.
func openNoFollow(name string, flag int, perm fs.FileMode) (*os.File, error) {
	f, err := os.OpenFile(name, flag|syscall.O_NOFOLLOW, perm)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s: %w (a symlink)", name, errNotRegular)
	}
	return f, err
}

// readNonBlocking keeps the open of a FIFO planted at a state path from
// waiting for a writer; the read then refuses it as not a regular file.
const readNonBlocking = syscall.O_NONBLOCK

// mkdirPrivate creates dir 0700 (and missing parents).
func mkdirPrivate(dir string) error { return os.MkdirAll(dir, 0o700) }

// keepJournalOpen: the journal stays open between appends (openJournal).
const keepJournalOpen = true
