package reconciler

import (
	"fmt"
	"testing"
	"time"
)

// handOverKept reports whether the reconciler keeps statuses for readers
// (the hand-over is on), and what it keeps.
func handOverKept(r *Reconciler) (on bool, deltas, ids int, latest bool) {
	p := &r.published
	r.mu.Lock()
	defer r.mu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.merging.Lock()
	defer p.merging.Unlock()
	return p.read.Load(), len(p.lbDelta) + len(p.epDelta), len(p.ipOfID), p.latest != nil
}

// One look at the status must not have the reconciler keep every object's
// status for the rest of its life: a flush statusReaderIdle after the last
// read drops what the hand-over keeps, and later Syncs hand nothing over.
// A reader after that is a first reader again: idle, it gets the current
// status; meeting a Sync, an empty snapshot that says it is Gathering,
// then the whole status once that Sync ended.
func TestTheHandOverStopsWhenNobodyReads(t *testing.T) {
	e, lbs := fiftyWithOneRemoteEach(t)
	r := e.started(lbs...)
	assertSnapshotIsFullStatus(t, r)
	n := 0
	change := func() {
		l := lbs[n%len(lbs)]
		n++
		l.Backends = append(l.Backends, rem(fmt.Sprintf("10.244.3.%d", n), "192.168.0.3"))
		upsert(r, l)
		r.Sync(ctx)
	}

	// Reads closer together than statusReaderIdle keep it on.
	for range 3 {
		e.clock.Step(statusReaderIdle - time.Second)
		change()
		if on, deltas, ids, latest := handOverKept(r); !on || deltas == 0 || ids == 0 || !latest {
			t.Fatalf("%v after the last read: hand-over on %v, %d deltas, %d IDs, a snapshot %v; want it on with the Sync's objects", statusReaderIdle-time.Second, on, deltas, ids, latest)
		}
		assertSnapshotIsFullStatus(t, r)
	}

	e.clock.Step(statusReaderIdle)
	change()
	if on, deltas, ids, latest := handOverKept(r); on || deltas != 0 || ids != 0 || latest {
		t.Fatalf("%v after the last read: hand-over on %v, %d deltas, %d IDs, a snapshot %v; want it off and nothing kept", statusReaderIdle, on, deltas, ids, latest)
	}
	for range 3 {
		change()
	}
	if on, deltas, _, _ := handOverKept(r); on || deltas != 0 {
		t.Fatalf("Syncs with no reader: hand-over on %v, %d deltas; want off, none", on, deltas)
	}
	lbsNow, epsNow := r.Statuses(), r.EndpointStatuses()
	if got, want := r.ObjectCounts(), countsOf(lbsNow, epsNow); got != want {
		t.Fatalf("with the hand-over off, ObjectCounts %+v, full walk %+v", got, want)
	}

	// A reader that meets a Sync, then one after it.
	upsert(r, lb("10.96.9.9", 80, loc("10.244.1.10")))
	r.mu.Lock()
	during := r.StatusSnapshot()
	r.mu.Unlock()
	if !during.Gathering || len(during.LoadBalancers)+len(during.RemoteEndpoints) != 0 {
		t.Fatalf("the first look after the hand-over stopped, during a Sync: Gathering %v, %d load balancers, %d endpoints; want an empty snapshot that says it is Gathering",
			during.Gathering, len(during.LoadBalancers), len(during.RemoteEndpoints))
	}
	r.Sync(ctx)
	r.mu.Lock()
	after := r.StatusSnapshot()
	r.mu.Unlock()
	if after.Gathering {
		t.Fatal("during the Sync after the one a look met: still Gathering")
	}
	assertSnapshotIs(t, "during the Sync after the one a look met", after, r.Statuses(), r.EndpointStatuses())
	assertSnapshotIsFullStatus(t, r)

	// Stopped again, an idle reader gets the current status at once.
	e.clock.Step(statusReaderIdle)
	change()
	if on, _, _, _ := handOverKept(r); on {
		t.Fatal("the hand-over did not stop a second time")
	}
	r.Delete(lbs[3].Key)
	upsert(r, lb("10.96.9.10", 80, loc("10.244.1.10")))
	s := r.StatusSnapshot()
	if s.Gathering {
		t.Fatal("an idle reader's look: Gathering")
	}
	assertSnapshotIsFullStatus(t, r)
}

// A reader folding while a flush finds the last read statusReaderIdle ago
// keeps the hand-over on: the flush stops it only when it can take the
// readers' lock.
func TestAReaderFoldingKeepsTheHandOver(t *testing.T) {
	e, lbs := fiftyWithOneRemoteEach(t)
	r := e.started(lbs...)
	assertSnapshotIsFullStatus(t, r)
	e.clock.Step(statusReaderIdle)
	r.published.merging.Lock()
	upsert(r, lb("10.96.9.9", 80, loc("10.244.1.10")))
	r.Sync(ctx)
	r.published.merging.Unlock()
	if on, deltas, _, latest := handOverKept(r); !on || deltas == 0 || !latest {
		t.Fatalf("a reader folding as the flush ran: hand-over on %v, %d deltas, a snapshot %v; want it kept", on, deltas, latest)
	}
	assertSnapshotIsFullStatus(t, r)
	if got := len(r.StatusSnapshot().LoadBalancers); got != len(lbs)+1 {
		t.Fatalf("%d load balancers in the snapshot, want %d", got, len(lbs)+1)
	}
}
