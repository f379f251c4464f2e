package reconciler

import (
	"path/filepath"
	"testing"

	"github.com/hnsproxy/hnsproxy/sim"
)

// TestKillLeavesNoSnapshotTempFile: a process killed while it writes a
// snapshot (after its temp file is made, before the rename) cannot remove
// the temp file; the restart does, wherever the crash script was killed,
// so a crash loop does not fill the state directory with snapshots.
func TestKillLeavesNoSnapshotTempFile(t *testing.T) {
	steps := newCrashRun(t, sim.ProfileWS2022, 0, true).ks.count()
	leftBehind := 0
	for kill := 1; kill <= steps+1; kill++ {
		c := newCrashRun(t, sim.ProfileWS2022, kill, true)
		before, _ := filepath.Glob(c.e.stateFile + ".tmp*")
		leftBehind += len(before)
		c.restart()
		if after, _ := filepath.Glob(c.e.stateFile + ".tmp*"); len(after) != 0 {
			t.Errorf("killed before step %d of %d: temp files after the restart: %v", kill, steps, after)
		}
	}
	if leftBehind == 0 {
		t.Fatal("no kill left a temp file: the script no longer kills a snapshot's write")
	}
}
