//go:build !windows

package reconciler

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestStateDirOthersCanWriteIsRefused: the lock refuses a state directory
// that was there before hnsproxy and that someone else can write: one
// another user owns, one group or others may write, or a symlink. Whoever
// can write it can plant a state file that makes hnsproxy's load balancers
// of another program's, or hold the lock. A directory only its owner can
// write is taken as it is.
func TestStateDirOthersCanWriteIsRefused(t *testing.T) {
	for name, c := range map[string]struct {
		plant func(dir string) error
		ok    bool
	}{
		"owner-only":        {plant: func(dir string) error { return os.Mkdir(dir, 0o700) }, ok: true},
		"others may read":   {plant: func(dir string) error { return os.Mkdir(dir, 0o755) }, ok: true},
		"others may write":  {plant: func(dir string) error { return mkdirMode(dir, 0o777) }},
		"group may write":   {plant: func(dir string) error { return mkdirMode(dir, 0o770) }},
		"sticky, all write": {plant: func(dir string) error { return mkdirMode(dir, os.ModeSticky|0o777) }},
		"a symlink": {plant: func(dir string) error {
			real := dir + ".real"
			if err := os.Mkdir(real, 0o700); err != nil {
				return err
			}
			return os.Symlink(real, dir)
		}},
		"another user's": {plant: func(dir string) error {
			if os.Geteuid() != 0 {
				return errors.New("this case needs root, to give the directory to another user")
			}
			if err := os.Mkdir(dir, 0o700); err != nil {
				return err
			}
			return os.Chown(dir, 12345, 12345)
		}},
	} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			if err := c.plant(dir); err != nil {
				t.Fatal(err)
			}
			lock, err := LockStateFile(filepath.Join(dir, "state.json"))
			if c.ok {
				if err != nil {
					t.Fatalf("lock in a private directory: %v", err)
				}
				lock.Release()
				return
			}
			if !errors.Is(err, ErrStateDirNotPrivate) {
				lock.Release()
				t.Fatalf("lock in a directory others can write: %v, want ErrStateDirNotPrivate", err)
			}
			if _, serr := os.Lstat(filepath.Join(dir, "state.json.lock")); serr == nil {
				t.Errorf("the refused directory got a lock file")
			}
		})
	}
}

// mkdirMode makes dir with exactly mode, whatever the umask.
func mkdirMode(dir string, mode os.FileMode) error {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return err
	}
	return os.Chmod(dir, mode)
}
