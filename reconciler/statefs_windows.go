package reconciler

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// stateDirSDDL grants SYSTEM and Administrators full control, inherited by
// what is created inside, and nothing to anyone else (P: no inherited ACEs).
const stateDirSDDL = "D:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)"

// readNonBlocking: Windows opens nothing that waits for a writer.
const readNonBlocking = 0

// keepJournalOpen: on Windows each append opens and closes the journal. A
// file Go opens there cannot be deleted or renamed while it is open (no
// FILE_SHARE_DELETE), and os.SameFile on an Lstat result opens the file
// anyway, so holding it would save little; the per-change cost was
// measured on Linux.
const keepJournalOpen = false

// openNoFollow refuses a reparse point (symlink, junction, mount point) at
// name, then opens it. Between the check and the open only SYSTEM and
// Administrators can replace the file: the directory's ACL (mkdirPrivate
// makes it so, and LockStateFile refuses an existing one that is not).
func openNoFollow(name string, flag int, perm fs.FileMode) (*os.File, error) {
	info, err := os.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	case isReparsePoint(info):
		return nil, fmt.Errorf("%s: %w (a reparse point)", name, errNotRegular)
	}
	if flag&os.O_APPEND == 0 {
		return os.OpenFile(name, flag, perm)
	}
	// Go opens an O_APPEND file here with FILE_APPEND_DATA but without
	// FILE_WRITE_DATA, and Windows refuses to set the end of a file
	// through such a handle: the cut-back of a failed append (journal.go)
	// was refused, and the refused append's bytes stayed. So the file is
	// opened for writing and each write goes to its end: the journal is
	// opened for each append (keepJournalOpen) and only the holder of the
	// state file's lock writes it, so its end does not move meanwhile.
	f, err := os.OpenFile(name, flag&^os.O_APPEND, perm)
	if err != nil {
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func isReparsePoint(info fs.FileInfo) bool {
	if info.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0 {
		return true
	}
	d, ok := info.Sys().(*syscall.Win32FileAttributeData)
	return ok && d.FileAttributes&syscall.FILE_ATTRIBUTE_REPARSE_POINT != 0
}

// mkdirPrivate creates dir's parents as os.MkdirAll does and dir itself
// with stateDirSDDL. An existing dir is left as it is (LockStateFile
// refuses one others can write: checkPrivateDir).
func mkdirPrivate(dir string) error {
	if info, err := os.Stat(dir); err == nil && info.IsDir() {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return err
	}
	sd, err := windows.SecurityDescriptorFromString(stateDirSDDL)
	if err != nil {
		return err
	}
	sa := &windows.SecurityAttributes{SecurityDescriptor: sd}
	sa.Length = uint32(unsafe.Sizeof(*sa))
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return err
	}
	if err := windows.CreateDirectory(p, sa); err != nil && !errors.Is(err, windows.ERROR_ALREADY_EXISTS) {
		return &fs.PathError{Op: "mkdir", Path: dir, Err: err}
	}
	return nil
}
