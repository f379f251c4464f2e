// Package atomicfile owns writing a small file so that a crash or a power
// loss leaves either the old content or the new one, never an empty or
// half-written file: the new content goes to a temporary file beside it,
// reaches the disk (fsync), and only then replaces the old by a rename.
// The reconciler's state file opens through its own file-system seam
// (fault injection), fills its file with Fill and renames it with Replace.
package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// File is what Fill needs of an open file (*os.File has it).
type File interface {
	io.WriteCloser
	Chmod(fs.FileMode) error
	Sync() error
}

// Fill writes data to a new temporary file f, gives it mode perm (whatever
// the umask), makes it reach the disk and closes it: what must happen
// before the rename that puts it in place.
func Fill(f File, data []byte, perm fs.FileMode) error {
	_, err := f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Write replaces path's content with data, atomically and durably, leaving
// the file with mode perm (whatever the umask). Without the fsync a power
// loss after the rename can leave the renamed file empty on NTFS and ext4
// alike: the rename reached the disk before the data did.
func Write(path string, data []byte, perm fs.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after a successful rename
	if err := Fill(f, data, perm); err != nil {
		return err
	}
	return Replace(tmp, path)
}

// Replace renames from to to, replacing what to names. Windows refuses to
// replace a read-only file (the read-only attribute: a restored backup, a
// copy from read-only media, attrib +r), where a POSIX rename looks only at
// the directory: every write would fail until someone cleared it. The
// file is the caller's to replace, so, as os.Remove does before a delete
// on Windows, a regular read-only file there is made writable and the
// rename tried once more. A link is never changed.
func Replace(from, to string) error {
	err := rename(from, to)
	if err == nil || !errors.Is(err, fs.ErrPermission) {
		return err
	}
	info, lerr := os.Lstat(to)
	if lerr != nil || !info.Mode().IsRegular() || info.Mode().Perm()&0o200 != 0 {
		return err
	}
	if os.Chmod(to, info.Mode().Perm()|0o200) != nil {
		return err
	}
	return rename(from, to)
}

// rename is os.Rename; a variable so that a test can refuse as Windows does.
var rename = os.Rename
