package reconciler

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// moreServices is n load balancers beyond threeServices, on the same local backend.
func moreServices(n int) []intent.LB {
	out := make([]intent.LB, n)
	for i := range out {
		out[i] = lb(fmt.Sprintf("10.96.1.%d", i+1), 80, loc("10.244.1.10"), rem(fmt.Sprintf("10.244.4.%d", i+1), "192.168.0.4"))
	}
	return out
}

// assertNothingLeaked restarts hnsproxy (the old reconciler is dropped as a
// SIGKILL would) with nothing desired: the first Sync deletes every object
// it owns, so whatever HNS still holds is an object whose ownership was lost.
func (e *env) assertNothingLeaked() {
	e.t.Helper()
	e.tweak = nil
	e.start(e.hns)
	snap := e.snapshot()
	remotes := 0
	for _, ep := range snap.Endpoints {
		if ep.IsRemote() {
			remotes++
		}
	}
	if len(snap.LoadBalancers)+remotes != 0 {
		e.t.Errorf("after a restart %d load balancers and %d remote endpoints are left: ownership lost", len(snap.LoadBalancers), remotes)
	}
}

// writeFailures counts what Options.StateWriteFailed is told.
type writeFailures struct{ failures, streaks int }

func (w *writeFailures) options(o *Options) {
	o.StateWriteFailed = func(err error, streakStart bool) {
		w.failures++
		if streakStart {
			w.streaks++
		}
	}
}

// TestStateFileSurvivesAFullDisk (F3): the disk fills up while load
// balancers are wanted, appends fail half-written, so nothing is created
// (what cannot be recorded could leak); the disk frees, everything is
// created, then hnsproxy is killed and restarts: it still owns every
// object. A failed append is cut back; when the cut fails too, replay
// skips the torn line and keeps what follows. After a failed append the
// saves alternate between a snapshot and an append. The
// failures are reported, one streak for the whole outage.
func TestStateFileSurvivesAFullDisk(t *testing.T) {
	for _, cutFails := range []bool{false, true} {
		t.Run(fmt.Sprintf("cutFails=%v", cutFails), func(t *testing.T) {
			e := newEnv(t, sim.ProfileWS2022)
			var w writeFailures
			e.tweak = w.options
			r := e.started(e.threeServices()...)
			faults := &faultFS{shortWrites: true}
			useStateFS(r, faults)
			faults.set(func(op, name string) error {
				if op == "write" || cutFails && op == "truncate" {
					return syscall.ENOSPC
				}
				return nil
			})
			more := moreServices(12)
			for _, l := range more[:6] {
				upsert(r, l)
				r.Sync(ctx)
			}
			if len(r.unsaved) == 0 {
				t.Fatal("records of failed writes were dropped")
			}
			if w.failures < 6 || w.streaks != 1 {
				t.Errorf("during the outage: %d failures reported in %d streaks, want >= 6 in 1", w.failures, w.streaks)
			}
			if n := len(e.snapshot().LoadBalancers); n != 3 {
				t.Errorf("%d load balancers while the state file could not record them, want the 3 from before", n)
			}
			faults.set(nil)
			for _, l := range more[6:] {
				upsert(r, l)
				r.Sync(ctx)
			}
			e.clock.Step(DefaultRetryMax)
			e.converge(r)
			if len(r.unsaved) != 0 || r.store.failing {
				t.Errorf("after the disk freed: %d records unsaved, failing %v", len(r.unsaved), r.store.failing)
			}
			s, err := loadState(e.stateFile)
			if err != nil || len(s.LoadBalancers) != 15 || s.journalStopped != nil && !cutFails {
				t.Errorf("state before the crash: %d load balancers, journal damage %v, %v; want 15, damage only if the cut failed", len(s.LoadBalancers), s.journalStopped, err)
			}
			e.assertNothingLeaked()
		})
	}
}

// TestStateReadErrorFailsStartTransiently (F4): a state file or journal
// that cannot be read (EIO; on Windows antivirus or a backup holding it)
// makes Start fail with a transient error after a few tries; neither file
// is touched, and once the read works the ownership is all there.
func TestStateReadErrorFailsStartTransiently(t *testing.T) {
	defer func(old []time.Duration) { stateReadBackoff = old }(stateReadBackoff)
	stateReadBackoff = []time.Duration{time.Millisecond, time.Millisecond}
	for _, target := range []string{".json", ".journal"} {
		t.Run(target, func(t *testing.T) {
			e := newEnv(t, sim.ProfileWS2022)
			r := e.started(e.threeServices()...)
			upsert(r, moreServices(1)[0])
			e.converge(r)
			snapshot, journal := holdBytes(t, e.stateFile), holdBytes(t, journalPath(e.stateFile))
			reads := 0
			restarted := e.reconciler()
			useStateFS(restarted, &faultFS{fault: func(op, name string) error {
				if op == "read" && strings.HasSuffix(name, target) {
					reads++
					return syscall.EIO
				}
				return nil
			}})
			err := restarted.Start(ctx)
			if err == nil || !hnslb.IsTransient(err) || reads != 3 {
				t.Fatalf("Start over an unreadable state file: %v (transient %v) after %d reads; want a transient error after 3", err, hnslb.IsTransient(err), reads)
			}
			if !bytes.Equal(holdBytes(t, e.stateFile), snapshot) || !bytes.Equal(holdBytes(t, journalPath(e.stateFile)), journal) {
				t.Fatal("the state file changed after a read error")
			}
			e.assertNothingLeaked()
		})
	}
}

func holdBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCorruptStateFileIsSetAside: a corrupt state file is renamed to
// <file>.corrupt-<time>, not destroyed, and only the newest few are kept.
func TestCorruptStateFileIsSetAside(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	want := e.threeServices()
	e.started(want...)
	for i := range keptCorrupt + 2 {
		garbage := fmt.Sprintf("garbage %d", i)
		if err := os.WriteFile(e.stateFile, []byte(garbage), 0o600); err != nil {
			t.Fatal(err)
		}
		e.clock.Step(time.Second)
		e.start(e.hns, want...)
		kept, _ := filepath.Glob(e.stateFile + ".corrupt-*")
		if len(kept) != min(i+1, keptCorrupt) || string(holdBytes(t, kept[len(kept)-1])) != garbage {
			t.Fatalf("after %d corrupt files: kept %v", i+1, kept)
		}
	}
	e.assertStateFileMatchesHNS()
}

// TestJournalSymlinkIsNotFollowed (F8): a symlink planted at the journal
// is never written through, the failed append is reported, and the next
// save writes a snapshot, which removes the link (not its target).
func TestJournalSymlinkIsNotFollowed(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	var w writeFailures
	e.tweak = w.options
	want := e.threeServices()
	r := e.started(want...)
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(journalPath(e.stateFile))
	if err := os.Symlink(victim, journalPath(e.stateFile)); err != nil {
		t.Fatal(err)
	}
	upsert(r, moreServices(1)[0])
	e.converge(r)
	if w.failures == 0 {
		t.Error("the refused append was not reported")
	}
	if fi, err := os.Lstat(journalPath(e.stateFile)); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		t.Error("the symlinked journal is still there")
	}
	e.start(e.hns, want...)
	if b, err := os.ReadFile(victim); err != nil || string(b) != "precious" {
		t.Fatalf("symlink target written: %q, %v", b, err)
	}
	e.assertStateFileMatchesHNS()
}
