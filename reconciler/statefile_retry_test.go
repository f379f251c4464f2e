package reconciler

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// A corrupt snapshot is set aside and its Start is a takeover, as nothing
// tells hnsproxy's load balancers from others'. When that Start fails
// later (HNS not answering its listing, as at boot) and is retried, the
// journal went aside with the snapshot: the retry has lost the same
// ownership and must take over too. Here a tenant's external-IP load balancer hnsproxy made,
// recorded only in the lost snapshot, is adopted, not reported as another
// agent's.
func TestRetriedStartAfterACorruptSnapshotTakesOver(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	e.local("10.244.1.60")
	want := append(e.threeServices(), externalLB("203.0.113.5", 80, loc("10.244.1.60")))
	r := e.started(want...)
	if err := r.compactState(); err != nil { // the tenant's load balancer in the snapshot
		t.Fatal(err)
	}
	more := moreServices(1)[0] // and a change after it in the journal
	upsert(r, more)
	e.converge(r)
	want = append(want, more)
	if err := os.WriteFile(e.stateFile, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}

	restarted := e.startedAfterARefusedListing(want)
	res := restarted.Sync(ctx)
	for _, err := range res.Errors {
		if held := new(ForeignFrontendError); errors.As(err, &held) {
			t.Errorf("hnsproxy's own load balancer %s on a tenant's frontend is reported as another agent's", held.ID)
		}
	}
	if res.Failed+res.Pending != 0 {
		t.Errorf("first Sync after the retried Start: %+v", res)
	}
}

// A snapshot of a newer version is set aside and its Start is a takeover
// that reads nothing of the file. The journal beside it is that newer
// version's too: it goes aside with the snapshot, so that when this Start
// fails (HNS refusing its listing, as at boot) the retry does not replay
// the newer format's records as this version's. Here the newer journal
// names another program's load balancer, on no desired frontend: neither
// the first Start nor its retry may take it as ours and delete it. A
// journal that cannot be set aside fails the Start transiently and leaves
// the snapshot in place, so the retry meets both again.
func TestRetriedStartAfterANewerSnapshotReplaysNoneOfItsJournal(t *testing.T) {
	defer func(old []time.Duration) { stateReadBackoff = old }(stateReadBackoff)
	stateReadBackoff = []time.Duration{time.Millisecond}
	for _, how := range []string{"first start", "retried start", "journal not set aside"} {
		t.Run(how, func(t *testing.T) {
			e := newEnv(t, sim.ProfileWS2022)
			want := e.threeServices()
			e.started(want...)
			theirs := lb("10.96.0.99", 80, loc("10.244.1.99"))
			theirs.Origin = 0
			foreign := e.foreignOn(theirs, "10.244.1.99")
			newer := []byte(`{"version":2,"loadBalancers":[],"remoteEndpoints":[]}`)
			if err := os.WriteFile(e.stateFile, newer, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(journalPath(e.stateFile)); err != nil {
				t.Fatal(err)
			}
			appendJournal(t, e.stateFile, journalRecord{Add: true, Kind: recordLoadBalancer, ID: foreign})

			restarted := e.reconciler()
			upsert(restarted, want...)
			switch how {
			case "retried start":
				e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpListLoadBalancers: 1}})
				if err := restarted.Start(ctx); err == nil {
					t.Fatal("Start succeeded while HNS refused its listing")
				}
				e.hns.SetFaults(sim.Faults{})
			case "journal not set aside":
				ffs := &faultFS{}
				ffs.set(func(op, name string) error {
					if op == "rename" && strings.Contains(name, ".journal.corrupt-") {
						return errors.New("access denied")
					}
					return nil
				})
				useStateFS(restarted, ffs)
				if err := restarted.Start(ctx); !hnslb.IsTransient(err) {
					t.Fatalf("Start with a journal that cannot be set aside: %v; want a transient error", err)
				}
				if raw, err := os.ReadFile(e.stateFile); err != nil || string(raw) != string(newer) {
					t.Fatalf("snapshot after the failed Start %q, %v; want the newer one still in place", raw, err)
				}
				ffs.set(nil)
			}
			if err := restarted.Start(ctx); err != nil {
				t.Fatalf("Start: %v", err)
			}
			restarted.Sync(ctx)
			if !e.hasLB(foreign) {
				t.Error("another program's load balancer, named in the newer hnsproxy's journal, was deleted as ours")
			}
			if aside, _ := filepath.Glob(journalPath(e.stateFile) + ".corrupt-*"); len(aside) != 1 {
				t.Errorf("journals set aside %v; want the newer hnsproxy's, kept for a human", aside)
			}
		})
	}
}

// TestJournalWithoutItsSnapshotIsOwnedAndTakesOver: a journal whose
// snapshot was removed by hand (or set aside by a version that left the
// journal) still owns what its records add, and the start is a takeover.
func TestJournalWithoutItsSnapshotIsOwnedAndTakesOver(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	appendJournal(t, path, journalRecord{Add: true, Kind: recordLoadBalancer, ID: "lb-1"})
	s, err := loadState(path)
	if err != nil || !s.fresh || !s.snapshotLost || len(s.LoadBalancers) != 1 || s.LoadBalancers[0] != "lb-1" {
		t.Errorf("journal alone: %+v, %v; want lb-1 owned, the snapshot reported lost and a takeover", s, err)
	}
}

// TestRetriedStartAfterACorruptJournalTakesOver: the journal as a whole is
// corrupt (larger than maxStateFileSize): ownership it held is lost, so the
// Start takes over. When that Start fails later (HNS refusing its listing,
// as at boot) and is retried, the retry must take over too: the journal is
// set aside only by the snapshot the Start writes, so the retry meets it
// again. Before, the first attempt set it aside at once and the retry met
// the snapshot alone, which looks whole: hnsproxy's own load balancer on a
// tenant's external IP, recorded only in the journal, was then another
// agent's for good.
func TestRetriedStartAfterACorruptJournalTakesOver(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	e.local("10.244.1.60")
	tenant := externalLB("203.0.113.5", 80, loc("10.244.1.60"))
	want := append(e.threeServices(), tenant)
	r := e.started(want[:3]...)
	// The tenant's load balancer is made after the first start's snapshot:
	// in the journal only.
	upsert(r, tenant)
	e.syncListed(r)
	if e.hnsLB(tenant.Key) == nil || journalRecords(t, e.stateFile) == 0 {
		t.Fatalf("the tenant's load balancer is not in the journal")
	}
	if err := os.Truncate(journalPath(e.stateFile), maxStateFileSize+1); err != nil {
		t.Fatal(err)
	}
	restarted := e.startedAfterARefusedListing(want)
	for _, err := range restarted.Sync(ctx).Errors {
		if held := new(ForeignFrontendError); errors.As(err, &held) {
			t.Errorf("hnsproxy's own load balancer %s on a tenant's frontend is reported as another agent's", held.ID)
		}
	}
	e.assertRealized(want)
	if aside, _ := filepath.Glob(journalPath(e.stateFile) + ".corrupt-*"); len(aside) != 1 {
		t.Errorf("journals set aside %v, want the corrupt one", aside)
	}
}

// startedAfterARefusedListing is a new process's reconciler over want whose
// first Start fails on HNS refusing its listing (as at boot), Started again.
func (e *env) startedAfterARefusedListing(want []intent.LB) *Reconciler {
	e.t.Helper()
	r := e.reconciler()
	upsert(r, want...)
	e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpListLoadBalancers: 1}})
	if err := r.Start(ctx); err == nil {
		e.t.Fatal("Start succeeded while HNS refused its listing")
	}
	e.hns.SetFaults(sim.Faults{})
	if err := r.Start(ctx); err != nil {
		e.t.Fatalf("retried Start: %v", err)
	}
	return r
}
