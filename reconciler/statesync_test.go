package reconciler

import (
	"syscall"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// TestStateFileSyncsAreReported: every fsync the state layer makes, of the
// journal or of a snapshot, failed or not, reaches Options.StateFileSynced
// once, and nothing else does: the count matches the file system's.
func TestStateFileSyncsAreReported(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	reported := 0
	e.tweak = func(o *Options) {
		o.StateFileSynced = func(took time.Duration) {
			if took < 0 {
				t.Errorf("an fsync reported as taking %v", took)
			}
			reported++
		}
	}
	e.declaringEndpoints() // each change below declares its new endpoint
	e.local("10.244.1.11")
	a := lb("10.96.0.10", 80, loc("10.244.1.11"), rem("10.244.2.20", "192.168.0.2"))
	r := e.started(a)
	if reported < 2 { // Start's snapshot, the new journal's head, the first Sync's declaration
		t.Fatalf("a start and a first Sync reported %d fsyncs, want at least 2", reported)
	}
	seen, failing := 0, false
	faults := &faultFS{}
	faults.set(func(op, _ string) error {
		if op != "sync" {
			return nil
		}
		seen++
		if failing {
			return syscall.EIO
		}
		return nil
	})
	useStateFS(r, faults)
	reported = 0
	for i, ip := range []string{"10.244.2.21", "10.244.2.22"} { // a declaration each
		a.Backends = []intent.Backend{loc("10.244.1.11"), rem(ip, "192.168.0.2")}
		upsert(r, a)
		r.Sync(ctx)
		if reported != i+1 {
			t.Fatalf("change %d: %d fsyncs reported, want %d", i, reported, i+1)
		}
	}
	r.Sync(ctx) // the withdrawal of the last endpoint declaration: an fsync alone
	failing = true
	a.Backends = []intent.Backend{loc("10.244.1.11"), rem("10.244.2.23", "192.168.0.2")}
	upsert(r, a)
	r.Sync(ctx) // its declaration's fsync fails
	failing = false
	r.Sync(ctx) // a snapshot: its own fsync, then the new journal's head
	if reported != seen || seen < 5 {
		t.Errorf("%d fsyncs reported, the file system saw %d (want the same, at least 5)", reported, seen)
	}
}
