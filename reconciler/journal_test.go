package reconciler

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

func writeJournal(t testing.TB, statePath string, records ...journalRecord) []byte {
	t.Helper()
	lines := encodeRecords(records)
	if err := os.WriteFile(journalPath(statePath), lines, 0o600); err != nil {
		t.Fatal(err)
	}
	return lines
}

// TestJournalReplaysOverTheSnapshot: a snapshot in the old (version 1,
// journal-less) format loads as it is, and a journal's records apply over
// it in order, for every kind of record.
func TestJournalReplaysOverTheSnapshot(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	if err := os.WriteFile(path, []byte(`{"version":1,"loadBalancers":["lb-1","lb-2"],"remoteEndpoints":["ep-1"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := loadState(path)
	if err != nil || !slices.Equal(s.LoadBalancers, []string{"lb-1", "lb-2"}) || s.journalStopped != nil {
		t.Fatalf("old-format file: %+v, %v", s, err)
	}
	key := intent.LBKey{Family: intent.IPv4, VIP: "10.96.0.10", Protocol: 6, Port: 80}
	writeJournal(t, path,
		journalRecord{Add: true, Kind: recordLoadBalancer, ID: "lb-3"},
		journalRecord{Kind: recordLoadBalancer, ID: "lb-1"},
		journalRecord{Add: true, Kind: recordRemoteEndpoint, ID: "ep-2"},
		journalRecord{Add: true, Kind: recordCreatingLB, Key: &key},
		journalRecord{Add: true, Kind: recordCreatingEndpoint, ID: "10.244.2.5"},
		journalRecord{Add: true, Kind: recordCreatingEndpoint, ID: "10.244.2.6"},
		journalRecord{Kind: recordCreatingEndpoint, ID: "10.244.2.5"},
	)
	s, err = loadState(path)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(s.LoadBalancers)
	slices.Sort(s.RemoteEndpoints)
	if !slices.Equal(s.LoadBalancers, []string{"lb-2", "lb-3"}) || !slices.Equal(s.RemoteEndpoints, []string{"ep-1", "ep-2"}) ||
		!slices.Equal(s.CreatingLoadBalancers, []intent.LBKey{key}) || !slices.Equal(s.CreatingRemoteEndpoints, []string{"10.244.2.6"}) {
		t.Errorf("replayed state %+v", s)
	}
}

// TestJournalTornTailIsDropped: a last line cut short, a flipped byte, or a
// record without a kind end the replay there; what came before counts, and
// loading never fails for it. (A record of a kind this version does not
// know is a newer hnsproxy's, not damage: TestStateFileFixtures.)
func TestJournalTornTailIsDropped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	good := journalRecord{Add: true, Kind: recordLoadBalancer, ID: "lb-1"}
	lost := journalRecord{Add: true, Kind: recordLoadBalancer, ID: "lb-2"}
	for name, mangle := range map[string]func(first, second []byte) []byte{
		"cut short":  func(first, second []byte) []byte { return append(first, second[:len(second)-5]...) },
		"no newline": func(first, second []byte) []byte { return append(first, second[:len(second)-1]...) },
		"flipped byte": func(first, second []byte) []byte {
			return append(first, bytes.Replace(second, []byte("lb-2"), []byte("lb-9"), 1)...)
		},
		"no checksum": func(first, second []byte) []byte { return append(first, second[9:]...) },
		"no kind": func(first, second []byte) []byte {
			odd := encodeRecords([]journalRecord{{Add: true, ID: "lb-2"}})
			return append(first, odd...)
		},
	} {
		first := encodeRecords([]journalRecord{good})
		second := encodeRecords([]journalRecord{lost})
		if err := os.WriteFile(journalPath(path), mangle(first, second), 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := loadState(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !slices.Equal(s.LoadBalancers, []string{"lb-1"}) || s.journalStopped == nil {
			t.Errorf("%s: state %+v, want lb-1 only and the stop reported", name, s)
		}
	}
}

// TestJournalAfterAnInterruptedCompaction: a crash after the new snapshot
// but before the old journal went leaves both; replaying the old journal
// over the new snapshot changes nothing.
func TestJournalAfterAnInterruptedCompaction(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	want := e.threeServices()
	r := e.started(want[:2]...)
	upsert(r, want[2])
	e.converge(r)
	journal, err := os.ReadFile(journalPath(e.stateFile))
	if err != nil || len(journal) == 0 {
		t.Fatalf("no journal after a change: %v", err)
	}
	before := readState(t, e.stateFile)
	if err := r.compactState(); err != nil {
		t.Fatal(err)
	}
	if n := journalRecords(t, e.stateFile); n != 0 {
		t.Fatalf("%d journal records left after compaction", n)
	}
	if err := os.WriteFile(journalPath(e.stateFile), journal, 0o600); err != nil {
		t.Fatal(err)
	}
	if after := readState(t, e.stateFile); !slices.Equal(after.LoadBalancers, before.LoadBalancers) || !slices.Equal(after.RemoteEndpoints, before.RemoteEndpoints) {
		t.Errorf("state %+v, want %+v", after, before)
	}
}

// TestJournalIsFoldedOnceItOutgrowsTheOwnedSet: a Sync whose journal would
// pass compactAfter writes a snapshot instead, and the journal starts over.
func TestJournalIsFoldedOnceItOutgrowsTheOwnedSet(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	want := e.threeServices()
	r := e.started(want...)
	full := compactAfter(len(r.ownedLBs) + len(r.ownedEPs))
	r.journalLines = full
	old := holdFile(t, e.stateFile)
	want[0] = lb(want[0].Key.VIP, want[0].Key.Port, loc("10.244.1.10"))
	upsert(r, want[0]) // ws2022: delete and create, a new ID to record
	e.converge(r)
	now, err := os.Stat(e.stateFile)
	if err != nil || os.SameFile(old, now) || r.journalLines >= full {
		t.Errorf("journal not folded into a new snapshot: %v, %d lines counted", err, r.journalLines)
	}
	s := readState(t, e.stateFile)
	if id := e.hnsLB(want[0].Key).ID; !slices.Contains(s.LoadBalancers, id) {
		t.Errorf("snapshot %+v lacks the new load balancer %s", s, id)
	}
}

// TestAQueueAJournalWouldNotTakeIsDropped: a queue of records longer than
// half of what the journal takes is not kept (the next save writes a
// snapshot from memory instead), and the snapshot holds every object of
// the Sync that dropped them.
func TestAQueueAJournalWouldNotTakeIsDropped(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2025)
	r := e.started()
	peak := 0
	for i := range compactAfter(0) + 100 {
		r.journal(journalRecord{Add: true, Kind: recordRemoteEndpoint, ID: fmt.Sprintf("ep-%d", i)})
		peak = max(peak, len(r.unsaved))
	}
	if peak > compactAfter(0)/2 || len(r.unsaved) != 0 || !r.snapshotDue {
		t.Fatalf("queue peaked at %d records (half what the journal takes: %d), %d left, snapshot due %v", peak, compactAfter(0)/2, len(r.unsaved), r.snapshotDue)
	}
	r.snapshotDue = false
	clear(r.unsaved)

	// A cold start of 3,000 load balancers queues more than a journal takes.
	want := e.bigCluster(3000)
	for i := range want {
		upsert(r, want[i])
	}
	e.converge(r)
	s := readState(t, e.stateFile)
	if len(s.LoadBalancers) != len(want) {
		t.Fatalf("snapshot holds %d load balancers, want %d", len(s.LoadBalancers), len(want))
	}
	for _, d := range want[:10] {
		if id := e.hnsLB(d.Key).ID; !slices.Contains(s.LoadBalancers, id) {
			t.Errorf("snapshot lacks %s (%s)", id, d.Key)
		}
	}
	if len(s.CreatingLoadBalancers) != 0 {
		t.Errorf("snapshot keeps %d declarations after every create settled", len(s.CreatingLoadBalancers))
	}
}

// FuzzStateJournal feeds arbitrary bytes as the journal beside a valid
// snapshot: loading never fails or panics for the journal's sake, and the
// loaded state holds only IDs the snapshot or a well-formed record named.
func FuzzStateJournal(f *testing.F) {
	valid := encodeRecords([]journalRecord{
		{Add: true, Kind: recordLoadBalancer, ID: "lb-2"},
		{Kind: recordLoadBalancer, ID: "lb-1"},
		{Add: true, Kind: recordCreatingLB, Key: &intent.LBKey{Family: intent.IPv6, VIP: "fd00::10", Protocol: 17, Port: 53}},
	})
	glued := append(append([]byte{}, valid[:30]...), valid...) // a torn line glued to good ones
	for _, seed := range [][]byte{nil, valid, valid[:len(valid)/2], glued, []byte("00000000 {}\n"), []byte("zz\n\n\n"), bytes.Repeat([]byte("a"), 5000)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, journal []byte) {
		path := filepath.Join(t.TempDir(), "state.json")
		if err := os.WriteFile(path, []byte(`{"version":1,"loadBalancers":["lb-1"]}`), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(journalPath(path), journal, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := loadState(path)
		if err != nil {
			t.Fatalf("journal %q made loading fail: %v", journal, err)
		}
		for _, id := range append(s.LoadBalancers, s.RemoteEndpoints...) {
			if id != "lb-1" && !bytes.Contains(journal, []byte(`"`+id+`"`)) {
				t.Fatalf("loaded ID %q that neither the snapshot nor the journal names", id)
			}
		}
	})
}

// TestJournalAppliesBatchesAtTheirCommit: a batch whose commit never made it
// to disk (a failed write whose cut-back failed too) applies not even in
// part; a journal without commits (an older hnsproxy's) applies every line.
func TestJournalAppliesBatchesAtTheirCommit(t *testing.T) {
	lines := func(recs ...journalRecord) []byte { return encodeRecords(recs) }
	add := func(id string) journalRecord { return journalRecord{Add: true, Kind: recordLoadBalancer, ID: id} }
	drop := func(id string) journalRecord { return journalRecord{Kind: recordLoadBalancer, ID: id} }
	for name, tc := range map[string]struct {
		journal []byte
		want    []string
	}{
		"committed":           {lines(commitRecord, add("lb-1"), commitRecord, drop("lb-0"), add("lb-2"), commitRecord), []string{"lb-1", "lb-2"}},
		"half a batch":        {lines(commitRecord, add("lb-1"), commitRecord, drop("lb-0")), []string{"lb-0", "lb-1"}},
		"sent again in full":  {append(lines(commitRecord, drop("lb-0")), lines(drop("lb-0"), add("lb-0"), commitRecord)...), []string{"lb-0"}},
		"without any commits": {lines(add("lb-1"), drop("lb-0")), []string{"lb-1"}},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.json")
			if err := os.WriteFile(path, []byte(`{"version":1,"loadBalancers":["lb-0"]}`), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(journalPath(path), tc.journal, 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := loadState(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Sorted(slices.Values(s.LoadBalancers)); !slices.Equal(got, tc.want) {
				t.Errorf("loaded %v, want %v", got, tc.want)
			}
		})
	}
}

// TestAJournalReplacedWhileHeldIsOpenedAnew: the journal stays open between
// appends, but an append goes to the file its path names. Renamed away and
// replaced by a copy behind hnsproxy's back (a restore from a backup), the
// next append goes to the copy, which the state file then reads, not to the
// old file still held open.
func TestAJournalReplacedWhileHeldIsOpenedAnew(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	want := e.threeServices()
	r := e.started(want...) // the first Sync's append: the journal is held from here on
	path := journalPath(e.stateFile)
	held, err := os.ReadFile(path)
	if err != nil || len(held) == 0 {
		t.Fatalf("no journal after the first Sync: %v", err)
	}
	if err := os.Rename(path, path+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, held, 0o600); err != nil {
		t.Fatal(err)
	}
	remove(r, want[2].Key)
	e.converge(r)
	if s := readState(t, e.stateFile); len(s.LoadBalancers) != 2 {
		t.Errorf("the state file owns %d load balancers after a deletion, want 2: the append missed the journal at its path", len(s.LoadBalancers))
	}
	if away, err := os.ReadFile(path + ".away"); err != nil || len(away) != len(held) {
		t.Errorf("the journal renamed away holds %d bytes (%v), want the %d it had", len(away), err, len(held))
	}
}

// journalRecords counts the records the journal of statePath applies (none
// when it is missing); a damaged line fails the test.
func journalRecords(t *testing.T, statePath string) int {
	t.Helper()
	applied, skipped, err := replayJournal(osFS{}, journalPath(statePath), setsOf(&stateFile{}), "")
	if err != nil || skipped != nil {
		t.Fatalf("replaying the journal: %v (skipped %v)", err, skipped)
	}
	return applied
}

// TestCompactionBeginsTheNextJournal: a compaction leaves the next journal
// begun (its commit head synced), so the first change after it appends to
// a file that exists, and that journal applies nothing.
func TestCompactionBeginsTheNextJournal(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	want := e.threeServices()
	r := e.started(want...)
	e.converge(r)
	if err := r.compactState(); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(journalPath(e.stateFile))
	if err != nil {
		t.Fatalf("no journal after a compaction: %v", err)
	}
	if n := journalRecords(t, e.stateFile); n != 0 {
		t.Errorf("the new journal applies %d records, want none", n)
	}
	remove(r, want[0].Key)
	e.converge(r)
	after, err := os.Stat(journalPath(e.stateFile))
	if err != nil || !os.SameFile(before, after) || after.Size() <= before.Size() {
		t.Errorf("journal after a change: %v; want the begun one appended to", err)
	}
}

// TestAJournalOlderThanItsSnapshotIsNotReplayed: a compaction installs its
// snapshot but cannot remove the old journal (on Windows another process
// holding it open without FILE_SHARE_DELETE: hnsproxy-diag reading the
// state, a backup, antivirus), and hnsproxy runs on: a tenant frontend's
// load balancer is deleted and its declaration withdrawn, in snapshots
// only. Another agent then makes a load balancer on that frontend, and
// hnsproxy is restarted. The old journal's last record of the key declares
// it; replayed over the newer snapshot it would bring the declaration back,
// and the restart would claim the other agent's load balancer as an
// interrupted create and delete it. The snapshot names the generation of
// the journal that continues it, so the old one is not replayed. The same
// holds for a crash between a snapshot's rename and the old journal's
// removal.
func TestAJournalOlderThanItsSnapshotIsNotReplayed(t *testing.T) {
	for _, removable := range []bool{true, false} {
		e := newEnv(t, sim.ProfileWS2022)
		want := e.threeServices()
		r := e.started(want...) // a state file exists: the restart is no takeover
		faults := &faultFS{}
		useStateFS(r, faults)
		tenant := externalLB("203.0.113.5", 80, loc("10.244.1.60"))
		e.local("10.244.1.60")
		upsert(r, tenant)
		if res := r.Sync(ctx); !res.ListingWanted {
			t.Fatalf("sync %+v: want a listing for the new tenant frontend", res)
		}
		if err := r.Lookup(ctx); err != nil {
			t.Fatal(err)
		}
		// The declaration is appended, then the Sync's outcome compacts.
		r.mu.Lock()
		r.journalLines = compactAfter(len(r.ownedLBs)+len(r.ownedEPs)) - 1
		r.mu.Unlock()
		if !removable {
			faults.set(onJournal(syscall.EACCES, "remove"))
		}
		r.Sync(ctx)
		ours := e.hnsLB(tenant.Key)
		if ours == nil {
			t.Fatal("the tenant's load balancer was not made")
		}
		remove(r, tenant.Key)
		e.converge(r) // deletes go on while the journal cannot be removed
		if e.hasLB(ours.ID) {
			t.Fatalf("removable %v: the tenant's load balancer %s was not deleted", removable, ours.ID)
		}
		theirs := tenant
		theirs.Origin = intent.OriginUnknown
		foreign := e.foreignOn(theirs, "10.244.1.61")
		if _, err := os.Stat(journalPath(e.stateFile)); err != nil {
			t.Fatalf("removable %v: no journal beside the snapshot: %v", removable, err)
		}
		e.started(want...)
		if !e.hasLB(foreign) {
			t.Errorf("removable %v: the restart deleted another agent's load balancer %s on the tenant frontend %v", removable, foreign, tenant.Key)
		}
	}
}
