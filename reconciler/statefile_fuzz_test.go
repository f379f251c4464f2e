package reconciler

import (
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"k8s.io/klog/v2/textlogger"
)

// saveFaults are the write failures FuzzStateSaves injects, one per save.
var saveFaults = []func(op, name string) error{
	nil,
	func(op, _ string) error { return failOn(op, syscall.ENOSPC, "write") },             // full disk, half-written
	func(op, _ string) error { return failOn(op, syscall.EIO, "sync") },                 // written, not durable
	func(op, _ string) error { return failOn(op, syscall.ENOSPC, "write", "truncate") }, // torn line left behind
	func(op, _ string) error { return failOn(op, syscall.EACCES, "rename") },            // snapshot not installed
	func(op, _ string) error { return failOn(op, syscall.EACCES, "remove") },            // old journal kept after a snapshot
	onJournal(syscall.EACCES, "open"),
	onJournal(syscall.ENOSPC, "write"),
}

func failOn(op string, err error, ops ...string) error {
	if slices.Contains(ops, op) {
		return err
	}
	return nil
}

// FuzzStateSaves drives the state layer through a script from the fuzzer's
// bytes: each step adds or removes an owned load balancer, sometimes asks
// for a snapshot, and saves (with an fsync or without) under one of
// saveFaults. A restart then loads
// every ID owned at the last successful save and not changed since, and
// nothing but those and IDs of saves that failed (pending); after one more
// save that succeeds, exactly the owned set.
func FuzzStateSaves(f *testing.F) {
	for _, seed := range [][]byte{nil, {0, 1, 8, 2, 24, 3, 0, 4}, {8, 1, 24, 2, 0, 3, 1, 1, 56, 5}, {4, 1, 44, 2, 40, 3, 1, 2, 0, 9},
		{2, 1, 18, 1, 2, 2, 16, 3, 3, 1, 0, 4}} { // appends without an fsync, then a failed fsync of them
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, script []byte) {
		path := filepath.Join(t.TempDir(), "state.json")
		faults := &faultFS{shortWrites: true}
		r := New(nil, Options{StateFile: path, Logger: textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(io.Discard)))})
		useStateFS(r, faults)
		durable := map[string]struct{}{} // owned at the last successful save
		pending := map[string]struct{}{} // added to or removed from the owned set since
		for i := 0; i+1 < len(script) && i < 400; i += 2 {
			op, id := script[i], fmt.Sprintf("lb-%d", script[i+1]%16)
			_, owned := r.ownedLBs[id]
			switch {
			case op&1 == 0 && !owned:
				r.ownedLBs[id] = struct{}{}
				r.journal(journalRecord{Add: true, Kind: recordLoadBalancer, ID: id})
				pending[id] = struct{}{}
			case op&1 == 1 && owned:
				delete(r.ownedLBs, id)
				r.journal(journalRecord{Kind: recordLoadBalancer, ID: id})
				pending[id] = struct{}{}
			}
			if op&4 != 0 {
				r.snapshotDue = true
			}
			faults.set(saveFaults[int(op>>3)%len(saveFaults)])
			save := r.saveState
			if op&2 != 0 {
				save = r.writeState // the end of a Sync: no fsync; the file holds it all the same
			}
			if err := save(); err == nil {
				durable, pending = maps.Clone(r.ownedLBs), map[string]struct{}{}
			}
		}
		faults.set(nil)
		// What this version wrote, under any fault, is no newer version's:
		// --cleanup must not refuse it (newerstate.go).
		if what := newerContent(osFS{}, path); what != "" {
			t.Fatalf("--cleanup would refuse this version's own state file: %s", what)
		}
		loaded := idSet(mustLoad(t, path).LoadBalancers)
		for id := range durable {
			_, still := r.ownedLBs[id]
			// An ID removed and added again since is pending: a save that
			// failed after installing its snapshot (the old journal not
			// removed) may have made the removal durable, and the add not.
			if _, changed := pending[id]; still && !changed {
				if _, ok := loaded[id]; !ok {
					t.Fatalf("durable owned ID %s lost; loaded %v", id, slices.Sorted(maps.Keys(loaded)))
				}
			}
		}
		for id := range loaded {
			_, d := durable[id]
			_, p := pending[id]
			if !d && !p {
				t.Fatalf("loaded ID %s that no save made durable or had pending", id)
			}
		}
		r.snapshotDue = r.snapshotDue || len(script)%2 == 1 // the last save: a snapshot or an append
		r.journal(journalRecord{Kind: recordLoadBalancer, ID: "lb-none"})
		if err := r.saveState(); err != nil {
			t.Fatalf("save without faults: %v", err)
		}
		if got := slices.Sorted(maps.Keys(idSet(mustLoad(t, path).LoadBalancers))); !slices.Equal(got, slices.Sorted(maps.Keys(r.ownedLBs))) {
			t.Fatalf("after a good save loaded %v, own %v", got, slices.Sorted(maps.Keys(r.ownedLBs)))
		}
	})
}

func mustLoad(t *testing.T, path string) *stateFile {
	t.Helper()
	s, err := loadState(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
