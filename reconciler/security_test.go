package reconciler

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/klog/v2/ktesting"

	"github.com/hnsproxy/hnsproxy/sim"
)

// TestStateFileIsReplacedAtomically: every write is a new owner-only file
// renamed over the old one, never the old file rewritten in place (a crash
// mid-write then leaves the previous state whole), and no temp file stays.
// A state file left with loose permissions is replaced by a 0600 one; a
// missing directory is created owner-only.
func TestStateFileIsReplacedAtomically(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	e.stateFile = filepath.Join(t.TempDir(), "var", "lib", "hnsproxy", "state.json")
	want := e.threeServices()
	r := e.started(want[:2]...)
	dir := filepath.Dir(e.stateFile)
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("state directory: %v, %v; want mode 0700", fi.Mode(), err)
	}
	if err := os.Chmod(e.stateFile, 0o644); err != nil {
		t.Fatal(err)
	}
	old := holdFile(t, e.stateFile)

	// A change goes to the journal, owner-only too; the next start folds it
	// into a new snapshot.
	upsert(r, want[2])
	e.converge(r)
	if fi, err := os.Stat(journalPath(e.stateFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("state journal: %v, %v; want mode 0600", fi, err)
	}
	e.start(e.hns, want...)
	now, err := os.Stat(e.stateFile)
	if err != nil {
		t.Fatal(err)
	}
	if os.SameFile(old, now) {
		t.Error("the state file was rewritten in place, not replaced")
	}
	if now.Mode().Perm() != 0o600 {
		t.Errorf("state file mode %v, want 0600", now.Mode().Perm())
	}
	if s := readState(t, e.stateFile); len(s.LoadBalancers) != 3 {
		t.Errorf("state %+v, want three load balancers", s)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, entry := range entries {
		if name := entry.Name(); name != filepath.Base(e.stateFile) && name != filepath.Base(journalPath(e.stateFile)) {
			t.Errorf("state directory holds %s; want only the state file and its journal (no temp files)", name)
		}
	}
	if n := journalRecords(t, e.stateFile); n != 0 {
		t.Errorf("the journal applies %d records after Start; want them folded into the snapshot", n)
	}
}

// holdFile keeps path's file open until the test ends and returns its
// info: the inode then cannot be reused by a later temp file, so SameFile
// really tells a replaced file from one rewritten in place.
func holdFile(t *testing.T, path string) os.FileInfo {
	t.Helper()
	held, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { held.Close() })
	fi, err := held.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

// TestStateFileSymlinkIsNotFollowed: a symlink planted at the state path is
// replaced by the state file; the file it pointed to is never written.
func TestStateFileSymlinkIsNotFollowed(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, e.stateFile); err != nil {
		t.Fatal(err)
	}
	e.started(e.threeServices()...)
	if b, err := os.ReadFile(victim); err != nil || string(b) != "precious" {
		t.Fatalf("symlink target written: %q, %v", b, err)
	}
	fi, err := os.Lstat(e.stateFile)
	if err != nil || fi.Mode()&os.ModeSymlink != 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("state path %v, %v; want a regular 0600 file", fi.Mode(), err)
	}
	e.assertStateFileMatchesHNS()
}

// TestCorruptStateFileIsLoggedAndRebuilt: a corrupt or unknown-version
// state file is reported in the log with its path, does not stop Start,
// and is rewritten from what HNS holds after the first Sync.
func TestCorruptStateFileIsLoggedAndRebuilt(t *testing.T) {
	for name, content := range map[string]string{
		"truncated":       `{"version":1,"loadBalan`,
		"binary":          "\x00\x01\x02\xff",
		"unknown version": `{"version":7,"loadBalancers":[]}`,
		"empty":           ``,
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, sim.ProfileWS2022)
			want := e.threeServices()
			e.started(want...)
			if err := os.WriteFile(e.stateFile, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
			e.tweak = func(o *Options) { o.Logger = logger }
			_, res := e.start(e.hns, want...)
			if res.Failed != 0 {
				t.Fatalf("sync after a corrupt state file: %+v", res)
			}
			log := logger.GetSink().(ktesting.Underlier).GetBuffer().String()
			if !strings.Contains(log, "Ignoring hnsproxy state file") || !strings.Contains(log, e.stateFile) {
				t.Errorf("corrupt state file not logged with its path; log:\n%s", log)
			}
			e.assertRealized(want)
			e.assertStateFileMatchesHNS()
		})
	}
}
