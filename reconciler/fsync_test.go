package reconciler

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// TestSyncFsyncsTheStateFileAtMostOnce: a Sync that replaces a load
// balancer (a new ID without modify) and a remote endpoint makes one fsync:
// its declarations, which also make the previous Sync's records durable;
// its own records are written without one. A Sync that writes no state
// makes none, once the last one's records are durable. Where HNS keeps
// remote endpoint names (names.go) the endpoint needs no declaration: the
// first start's first Sync ends its takeover with a snapshot, which makes
// its withdrawals durable, so no later Sync makes an fsync, and nothing
// declares an endpoint.
func TestSyncFsyncsTheStateFileAtMostOnce(t *testing.T) {
	for _, namesKept := range []bool{false, true} {
		e := newEnv(t, sim.ProfileWS2022)
		if !namesKept {
			e.declaringEndpoints()
		}
		e.local("10.244.1.11")
		a := lb("10.96.0.10", 80, loc("10.244.1.11"), rem("10.244.2.20", "192.168.0.2"))
		r := e.started(a)
		fsyncs := countJournalFsyncs(r)
		for i, ip := range []string{"10.244.2.21", "10.244.2.22", "10.244.2.23"} {
			*fsyncs = 0
			a.Backends = []intent.Backend{loc("10.244.1.11"), rem(ip, "192.168.0.2")}
			upsert(r, a)
			if res := r.Sync(ctx); res.Failed+res.Pending != 0 || res.Updated != 1 {
				t.Fatalf("change %d: %+v", i, res)
			}
			if want := map[bool]int{false: 1, true: 0}[namesKept]; *fsyncs != want {
				t.Errorf("names kept %v, change %d: %d fsyncs of the journal, want %d", namesKept, i, *fsyncs, want)
			}
			s := readState(t, e.stateFile)
			if len(s.LoadBalancers) != 1 || e.hnsLB(a.Key) == nil || s.LoadBalancers[0] != e.hnsLB(a.Key).ID {
				t.Errorf("change %d: the state file right after the Sync owns %v, want the new load balancer", i, s.LoadBalancers)
			}
			if namesKept && len(s.CreatingRemoteEndpoints) != 0 {
				t.Errorf("change %d: the state file declares %v, though HNS keeps names", i, s.CreatingRemoteEndpoints)
			}
		}
		*fsyncs = 0
		r.Sync(ctx)
		r.Sync(ctx)
		if want := map[bool]int{false: 1, true: 0}[namesKept]; *fsyncs != want {
			t.Errorf("names kept %v: two Syncs with nothing to do after a change: %d fsyncs, want %d (the change's withdrawals)", namesKept, *fsyncs, want)
		}
	}
}

// countJournalFsyncs points at the number of fsyncs of r's journal from now on.
func countJournalFsyncs(r *Reconciler) *int {
	fsyncs := 0
	faults := &faultFS{}
	faults.set(func(op, name string) error {
		if op == "sync" && strings.HasSuffix(name, ".journal") {
			fsyncs++
		}
		return nil
	})
	useStateFS(r, faults)
	return &fsyncs
}

// TestAFailedFsyncOfTheOutcomeIsFollowedByASnapshot: when the fsync that
// should make the last Sync's outcome durable fails (the next Sync's
// declaration, or its fsync alone when it has nothing to declare), the
// kernel may have dropped those bytes; nothing is created until a snapshot
// of the whole state is written, which the next save does.
func TestAFailedFsyncOfTheOutcomeIsFollowedByASnapshot(t *testing.T) {
	for _, declares := range []bool{false, true} {
		e := newEnv(t, sim.ProfileWS2022)
		e.declaringEndpoints() // the change's endpoint declaration leaves an outcome to fsync
		e.local("10.244.1.11")
		a := lb("10.96.0.10", 80, loc("10.244.1.11"), rem("10.244.2.20", "192.168.0.2"))
		r := e.started(a)
		faults := &faultFS{}
		useStateFS(r, faults)
		a.Backends = []intent.Backend{loc("10.244.1.11"), rem("10.244.2.21", "192.168.0.2")}
		upsert(r, a)
		if res := r.Sync(ctx); res.Failed+res.Pending != 0 { // its outcome: appended, not fsynced
			t.Fatalf("change: %+v", res)
		}
		faults.set(func(op, _ string) error { return failOn(op, syscall.EIO, "sync") })
		if declares {
			upsert(r, lb("10.96.0.11", 80, loc("10.244.1.11")))
		}
		if res := r.Sync(ctx); res.Created != 0 {
			t.Fatalf("declares %v: a Sync whose first fsync failed created %d objects", declares, res.Created)
		}
		faults.set(nil)
		e.converge(r)
		raw, err := os.ReadFile(e.stateFile)
		if err != nil {
			t.Fatal(err)
		}
		var snap stateFile
		if err := json.Unmarshal(raw, &snap); err != nil {
			t.Fatal(err)
		}
		if id := e.hnsLB(a.Key).ID; !slices.Contains(snap.LoadBalancers, id) {
			t.Errorf("declares %v: the snapshot holds %v, want the changed load balancer %s: after the failed fsync its outcome must reach a snapshot", declares, snap.LoadBalancers, id)
		}
		e.assertStateFileMatchesHNS()
	}
}

// TestStandingDeclarationsSpareTheFsync: without modify, every change of a
// load balancer is a delete and a create. On a cluster IP (a frontend the
// apiserver allocated) its key stays declared after the first create, in
// the state file's snapshot too, so later changes make no fsync; on a
// tenant's external IP each change declares its key again, with an fsync
// (which also makes the last change's withdrawal of it durable), and a Sync
// after the last one makes that withdrawal durable. A cluster IP Service
// deleted withdraws its key, in the file at once, and no fsync follows: a
// key that may stand for good may come back with the power.
func TestStandingDeclarationsSpareTheFsync(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	e.local("10.244.1.11")
	e.local("10.244.1.12")
	cluster := lb("10.96.0.10", 80, loc("10.244.1.11"))
	tenant := externalLB("203.0.113.10", 443, loc("10.244.1.11"))
	r := e.started(cluster, tenant)
	fsyncs := countJournalFsyncs(r)
	r.Sync(ctx) // makes the cold start's withdrawal of the tenant's declaration durable
	for _, c := range []struct {
		d      *intent.LB
		fsyncs int
	}{{&cluster, 0}, {&tenant, 1}} {
		for i, ip := range []string{"10.244.1.12", "10.244.1.11", "10.244.1.12"} {
			*fsyncs = 0
			before := e.hnsLB(c.d.Key).ID
			c.d.Backends = []intent.Backend{loc(ip)}
			upsert(r, *c.d)
			if res := r.Sync(ctx); res.Failed+res.Pending != 0 {
				t.Fatalf("change %d of %s: %+v", i, c.d.Key, res)
			}
			now := e.hnsLB(c.d.Key).ID
			if now == before {
				t.Fatalf("change %d of %s: the load balancer kept its ID; the test needs a delete and a create", i, c.d.Key)
			}
			if *fsyncs != c.fsyncs {
				t.Errorf("change %d of %s: %d fsyncs of the journal, want %d", i, c.d.Key, *fsyncs, c.fsyncs)
			}
			if s := readState(t, e.stateFile); !slices.Contains(s.LoadBalancers, now) {
				t.Errorf("change %d of %s: the state file right after the Sync owns %v, want %s", i, c.d.Key, s.LoadBalancers, now)
			}
		}
	}
	*fsyncs = 0
	r.Sync(ctx)
	if *fsyncs != 1 {
		t.Errorf("the Sync after a tenant key's withdrawal made %d fsyncs, want 1 (the withdrawal made durable)", *fsyncs)
	}
	if err := r.compactState(); err != nil {
		t.Fatal(err)
	}
	if s := readState(t, e.stateFile); !slices.Contains(s.CreatingLoadBalancers, cluster.Key) || slices.Contains(s.CreatingLoadBalancers, tenant.Key) {
		t.Errorf("the snapshot declares %v, want the cluster IP's key standing and not the tenant's", s.CreatingLoadBalancers)
	}
	remove(r, cluster.Key)
	r.Sync(ctx)
	if s := readState(t, e.stateFile); slices.Contains(s.CreatingLoadBalancers, cluster.Key) {
		t.Errorf("after the Service's deletion the state file still declares %v", cluster.Key)
	}
	*fsyncs = 0
	r.Sync(ctx)
	if *fsyncs != 0 {
		t.Errorf("the Sync after a cluster IP key's withdrawal made %d fsyncs, want 0 (a standing key's withdrawal is safe to lose)", *fsyncs)
	}
}

// TestOnlyADurableDeclarationStands: a key whose declaration no fsynced
// save has held (its save failed, and a later append without an fsync may
// carry it) does not start to stand after its create: it is withdrawn, so
// the next create on it declares it again, with an fsync.
func TestOnlyADurableDeclarationStands(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	e.local("10.244.1.11")
	a := lb("10.96.0.10", 80, loc("10.244.1.11"))
	r := e.started(a)
	delete(r.standingLBs, a.Key) // as if declared anew, by a save that failed:
	r.creatingLBs[a.Key] = struct{}{}
	r.journal(journalRecord{Add: true, Kind: recordCreatingLB, Key: &a.Key})
	r.settleCreates(nil)
	if has(r.standingLBs, a.Key) {
		t.Fatal("a key whose declaration is not durable stands")
	}
	if err := r.saveState(); err != nil {
		t.Fatal(err)
	}
	r.creatingLBs[a.Key] = struct{}{}
	r.settleCreates(nil)
	if !has(r.standingLBs, a.Key) {
		t.Error("a key declared durably does not stand after its create")
	}
}
