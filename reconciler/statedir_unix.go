//go:build !windows

package reconciler

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// privateDirText is how hnsproxy makes its state directory here.
const privateDirText = "mode 0700"

// checkPrivateDir refuses dir unless it is a directory (not a symlink to
// one) that root or this process's user owns and that neither group nor
// others may write.
func checkPrivateDir(dir string) error {
	info, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		return notPrivate(dir, "it is a symlink")
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok && st.Uid != 0 && int(st.Uid) != os.Geteuid() {
		return notPrivate(dir, fmt.Sprintf("user %d owns it", st.Uid))
	}
	if perm := info.Mode().Perm(); perm&0o022 != 0 {
		return notPrivate(dir, fmt.Sprintf("its mode %#o lets group or others write it", perm))
	}
	return nil
}
