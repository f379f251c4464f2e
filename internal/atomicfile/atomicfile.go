// Package atomicfile owns writing a small file so that a crash or a power
// loss leaves either the old content or the new one, never an empty or
// half-written file: the new content goes to a temporary file beside it,
// reaches the disk (fsync), and only then replaces the old by a rename.
// The reconciler's state file opens and renames through its own
// file-system seam (fault injection) and fills its file with Fill.
package atomicfile

import (
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
	return os.Rename(tmp, path)
}
