//go:build !windows

package reconciler

import (
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/hnsproxy/hnsproxy/sim"
)

// TestStateReadsAreBounded (F8): a state file over maxStateFileSize, or a
// symlink to an endless file, or a FIFO, is refused without reading it and
// handled like a corrupt file: Start goes on.
func TestStateReadsAreBounded(t *testing.T) {
	for name, plant := range map[string]func(path string) error{
		"oversized": func(path string) error {
			f, err := os.Create(path)
			if err != nil {
				return err
			}
			defer f.Close()
			return f.Truncate(maxStateFileSize + 1) // sparse
		},
		"symlink to /dev/zero": func(path string) error { return os.Symlink("/dev/zero", path) },
		"fifo":                 func(path string) error { return syscall.Mkfifo(path, 0o600) },
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, sim.ProfileWS2022)
			want := e.threeServices()
			e.started(want...)
			for _, path := range []string{e.stateFile, journalPath(e.stateFile)} {
				os.Remove(path)
				if err := plant(path); err != nil {
					t.Fatalf("planting a %s at %s: %v", name, path, err)
				}
				_, err := loadState(e.stateFile)
				if path == e.stateFile && (err == nil || !strings.Contains(err.Error(), "larger than") && !strings.Contains(err.Error(), "not a regular file")) {
					t.Errorf("%s at the state file: %v; want refused", name, err)
				}
				e.start(e.hns, want...)
				e.assertStateFileMatchesHNS()
			}
		})
	}
}
