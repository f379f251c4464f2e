package reconciler

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/hnsproxy/hnsproxy/internal/atomicfile"
)

// The file-system seam of the state layer (statefile.go, journal.go): the
// few operations it uses, so tests can inject short writes, a full disk and
// read errors. osFS, the default, refuses symlinks (and, on Windows, any
// reparse point) at the files it opens, and makes the state directory
// readable by its owner only (on Windows: SYSTEM and Administrators).

// stateFS is what the state layer does with files.
type stateFS interface {
	// OpenFile is os.OpenFile, except that a symlink at name is refused
	// with an error matching errNotRegular, never followed.
	OpenFile(name string, flag int, perm fs.FileMode) (stateHandle, error)
	// MkdirAll creates dir and its parents; dir itself owner-only.
	MkdirAll(dir string) error
	// Rename is os.Rename, except that a read-only file at to is
	// replaced too, as a POSIX rename does (atomicfile.Replace).
	Rename(from, to string) error
	Remove(name string) error
	// Lstat is os.Lstat: what name itself is, a link not followed.
	Lstat(name string) (fs.FileInfo, error)
}

// stateHandle is the part of *os.File the state layer uses.
type stateHandle interface {
	io.ReadWriteCloser
	Stat() (fs.FileInfo, error)
	Chmod(fs.FileMode) error
	Sync() error
	Truncate(size int64) error
}

// maxStateFileSize bounds what a read of the snapshot or the journal takes
// in. A real snapshot holds one 36-byte GUID (about 40 bytes in JSON) per
// owned object, plus about 100 bytes per pending create; a journal holds at
// most compactAfter (max(4096, owned)) lines of about 100 bytes before it is
// folded. Even 100,000 owned objects, far beyond what one node's HNS holds,
// stay near 10 MiB; 64 MiB leaves room for that and stops a file that
// never ends.
const maxStateFileSize = 64 << 20

// errNotRegular marks a state path that is a symlink, a reparse point, a
// directory or a device: content hnsproxy did not write, handled like a
// corrupt file.
var errNotRegular = errors.New("not a regular file")

// errTooLarge marks a state file over maxStateFileSize.
var errTooLarge = fmt.Errorf("larger than %d bytes", maxStateFileSize)

type osFS struct{}

func (osFS) OpenFile(name string, flag int, perm fs.FileMode) (stateHandle, error) {
	f, err := openNoFollow(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (osFS) MkdirAll(dir string) error    { return mkdirPrivate(dir) }
func (osFS) Rename(from, to string) error { return atomicfile.Replace(from, to) }
func (osFS) Remove(name string) error     { return os.Remove(name) }

func (osFS) Lstat(name string) (fs.FileInfo, error) { return os.Lstat(name) }

// readStateFile reads a whole regular file of at most maxStateFileSize.
func readStateFile(fsys stateFS, name string) ([]byte, error) {
	f, err := fsys.OpenFile(name, os.O_RDONLY|readNonBlocking, 0)
	if errors.Is(err, syscall.ENOTDIR) {
		// A file where a directory should be: nothing can exist at name.
		return nil, fmt.Errorf("%w: %w", fs.ErrNotExist, err)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w (%v)", name, errNotRegular, info.Mode().Type())
	}
	if info.Size() > maxStateFileSize {
		return nil, fmt.Errorf("%s: %w: %d bytes", name, errTooLarge, info.Size())
	}
	// The limit again: a file may grow while it is read.
	raw, err := io.ReadAll(io.LimitReader(f, maxStateFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > maxStateFileSize {
		return nil, fmt.Errorf("%s: %w", name, errTooLarge)
	}
	return raw, nil
}
