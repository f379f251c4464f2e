package reconciler

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// keptEnv is a started ws2022 node whose reconciler counts the objects
// Options.DeleteKept is told of.
func keptEnv(t *testing.T) (*env, *Reconciler, map[ObjectKind]int) {
	e := newEnv(t, sim.ProfileWS2022)
	kept := map[ObjectKind]int{}
	e.tweak = func(o *Options) { o.DeleteKept = func(k ObjectKind) { kept[k]++ } }
	e.local("10.244.1.10")
	e.local("10.244.1.11")
	return e, e.started(), kept
}

// removeKept removes keys from r's desired state and syncs while HNS keeps
// every object it reports deleted, then lets HNS delete again; it returns
// that Sync's result.
func (e *env) removeKept(r *Reconciler, keys ...intent.LBKey) SyncResult {
	e.hns.SetFaults(sim.Faults{KeptOnDelete: 1})
	defer e.hns.SetFaults(sim.Faults{})
	remove(r, keys...)
	return r.Sync(ctx)
}

// hasObject reports whether HNS holds a load balancer or endpoint with id.
func (e *env) hasObject(id string) bool {
	snap := e.snapshot()
	for _, l := range snap.LoadBalancers {
		if l.ID == id {
			return true
		}
	}
	for _, ep := range snap.Endpoints {
		if ep.ID == id {
			return true
		}
	}
	return false
}

// remoteAt is the remote endpoint HNS holds at ip; the test fails without one.
func (e *env) remoteAt(ip string) intent.RemoteEndpoint {
	e.t.Helper()
	snap := e.snapshot()
	for i := range snap.Endpoints {
		if ep := &snap.Endpoints[i]; ep.IsRemote() && ep.IP() == ip {
			return remoteSpecOf(ep)
		}
	}
	e.t.Fatalf("no remote endpoint at %s", ip)
	return intent.RemoteEndpoint{}
}

// remoteID is the ID of the remote endpoint HNS holds at ip.
func (e *env) remoteID(ip string) string {
	e.t.Helper()
	snap := e.snapshot()
	for _, ep := range snap.Endpoints {
		if ep.IsRemote() && ep.IP() == ip {
			return ep.ID
		}
	}
	e.t.Fatalf("no remote endpoint at %s", ip)
	return ""
}

// repairDeletesKept runs a Repair that finds the load balancer lbID and the
// remote endpoint epID kept by HNS after their deletes, counted once each
// in kept, and the Sync after, which deletes both again.
func (e *env) repairDeletesKept(r *Reconciler, kept map[ObjectKind]int, lbID, epID string) {
	e.t.Helper()
	if err := r.Repair(ctx); err != nil {
		e.t.Fatal(err)
	}
	if want := map[ObjectKind]int{KindLoadBalancer: 1, KindRemoteEndpoint: 1}; !maps.Equal(kept, want) {
		e.t.Errorf("kept objects counted %v, want %v", kept, want)
	}
	if res := r.Sync(ctx); res.Deleted != 2 {
		e.t.Errorf("sync after the repair that shows them: %+v, want both deleted again", res)
	}
	if e.hasObject(lbID) || e.hasObject(epID) {
		e.t.Error("the kept objects are still in HNS")
	}
}

// TestDeleteKeptByHNSIsDeletedAgain: HNS reports deletes of a load balancer
// and a remote endpoint done and keeps both (microsoft/Windows-Containers#631).
// The next Repair finds them, counts them, and the Sync after deletes them
// again; a Repair after that finds nothing more. Without it they would stay
// for good: the state file no longer names them.
func TestDeleteKeptByHNSIsDeletedAgain(t *testing.T) {
	e, r, kept := keptEnv(t)
	gone := lb("10.96.0.30", 443, rem("10.244.3.31", "192.168.0.3"))
	stays := lb("10.96.0.10", 80, loc("10.244.1.10"))
	upsert(r, gone, stays)
	e.converge(r)
	lbID, epID := e.hnsLB(gone.Key).ID, e.remoteID("10.244.3.31")

	if res := e.removeKept(r, gone.Key); res.Deleted != 2 || res.Failed != 0 {
		t.Fatalf("sync of the removal: %+v", res)
	}
	if !e.hasObject(lbID) || !e.hasObject(epID) {
		t.Fatal("the fault did not keep the deleted objects")
	}

	e.repairDeletesKept(r, kept, lbID, epID)
	for range silentListings { // one listing's silence is not proof
		if err := r.Repair(ctx); err != nil {
			t.Fatal(err)
		}
		if res := r.Sync(ctx); res.Deleted != 0 || kept[KindLoadBalancer] != 1 {
			t.Errorf("after the objects went: sync %+v, kept %v", res, kept)
		}
	}
	e.assertRealized([]intent.LB{stays})
	if n := len(r.unconfirmed.byID); n != 0 {
		t.Errorf("%d deletes still unconfirmed after %d repairs confirmed them", n, silentListings)
	}
}

// TestDeleteKeptForGoodIsTriedAtEachRepair: a kept object HNS never lets go
// of is deleted again after each Repair, not in a loop between them.
func TestDeleteKeptForGoodIsTriedAtEachRepair(t *testing.T) {
	e, r, kept := keptEnv(t)
	gone := lb("10.96.0.30", 443, loc("10.244.1.11"))
	upsert(r, gone)
	e.converge(r)
	e.hns.SetFaults(sim.Faults{KeptOnDelete: 1})
	remove(r, gone.Key)
	r.Sync(ctx)
	for i := 1; i <= 3; i++ {
		if err := r.Repair(ctx); err != nil {
			t.Fatal(err)
		}
		e.hns.ResetCounters()
		for range 3 {
			e.clock.Step(DefaultRetryMax)
			r.Sync(ctx)
		}
		if n := e.counters().Count(sim.OpDeleteLoadBalancer); n != 1 || kept[KindLoadBalancer] != i {
			t.Errorf("repair %d: %d deletes in the syncs after it, kept counted %d; want 1 and %d", i, n, kept[KindLoadBalancer], i)
		}
	}
}

// TestKeptEndpointOnAReusedAddressIsDeletedForTheNewOne: a remote endpoint
// HNS kept after its delete holds the pod IP, which a pod on another node
// now has. The new endpoint's create is refused as taken; the lookup's
// listing shows the kept one, ours, and it is deleted for the new one,
// before any Repair.
func TestKeptEndpointOnAReusedAddressIsDeletedForTheNewOne(t *testing.T) {
	e, r, _ := keptEnv(t)
	refusedForAKeptEndpoint(t, e, r) // under each address-taken code: addresscodes_test.go
}

// TestKeptLoadBalancerOnATenantFrontendIsOurs: a load balancer HNS kept
// after its delete holds an external IP's frontend that another Service
// then wants. It is ours, not a foreign holder the frontend must be left
// to: deleted, and the new one made.
func TestKeptLoadBalancerOnATenantFrontendIsOurs(t *testing.T) {
	e, r, _ := keptEnv(t)
	first := externalLB("203.0.113.5", 80, loc("10.244.1.10"))
	upsert(r, first)
	e.converge(r)
	old := e.hnsLB(first.Key).ID
	e.removeKept(r, first.Key)

	second := withInternalPort(externalLB("203.0.113.5", 80, loc("10.244.1.11")), 9090)
	upsert(r, second)
	e.converge(r)
	if st := statusOf(r, second.Key); st.State != StateDone {
		t.Errorf("the new Service's load balancer: %+v", st)
	}
	if e.hasObject(old) {
		t.Error("the kept load balancer is still in HNS")
	}
	e.assertRealized([]intent.LB{second})
}

// TestKeptLoadBalancerAdoptedAgainStays: a load balancer HNS kept after its
// delete is wanted again with the same document, because its Service came
// back or its only backend did (a load balancer without backends is
// deleted). Its create is refused as taken, and the lookup adopts the kept
// one. It is in use again: neither a Repair nor a restart's first Sync may
// delete it to settle the old delete.
func TestKeptLoadBalancerAdoptedAgainStays(t *testing.T) {
	full := lb("10.96.0.30", 80, loc("10.244.1.10"))
	for name, goAway := range map[string]func(e *env, r *Reconciler){
		"its Service deleted and made again": func(e *env, r *Reconciler) { e.removeKept(r, full.Key) },
		"its only backend gone and back": func(e *env, r *Reconciler) {
			e.hns.SetFaults(sim.Faults{KeptOnDelete: 1})
			upsert(r, lb("10.96.0.30", 80))
			e.converge(r)
			e.hns.SetFaults(sim.Faults{})
		},
	} {
		t.Run(name, func(t *testing.T) {
			e, r, kept := keptEnv(t)
			upsert(r, full)
			e.converge(r)
			id := e.hnsLB(full.Key).ID
			goAway(e, r)
			if !e.hasObject(id) {
				t.Fatal("the fault did not keep the load balancer")
			}

			upsert(r, full)
			e.converge(r)
			if st := statusOf(r, full.Key); st.State != StateDone || st.RealizedID != id {
				t.Fatalf("status after the kept one was adopted: %+v, want done as %s", st, id)
			}
			for i := range 2 {
				if err := r.Repair(ctx); err != nil {
					t.Fatal(err)
				}
				if res := r.Sync(ctx); res.Deleted != 0 {
					t.Errorf("Sync after repair %d deleted %d objects", i+1, res.Deleted)
				}
				if got := e.hnsLB(full.Key); got == nil || got.ID != id {
					t.Fatalf("after repair %d HNS holds %+v, want the adopted %s", i+1, got, id)
				}
			}
			if len(kept) != 0 {
				t.Errorf("counted as kept: %v", kept)
			}

			// Adopted before any Repair, then a restart: owned, not a delete
			// to settle.
			e.removeKept(r, full.Key)
			upsert(r, full)
			e.converge(r)
			r2, res := e.start(e.hns, full)
			if res.Deleted != 0 || e.hnsLB(full.Key) == nil {
				t.Errorf("first Sync after a restart: %+v; HNS holds %+v", res, e.hnsLB(full.Key))
			}
			if err := r2.Repair(ctx); err != nil {
				t.Fatal(err)
			}
			if res := r2.Sync(ctx); res.Deleted != 0 {
				t.Errorf("Sync after the restart's repair deleted %d objects", res.Deleted)
			}
			e.assertRealized([]intent.LB{full})
		})
	}
}

// TestUnconfirmedDeletesAreBounded: with no Repair to confirm them, the
// record keeps as many deletes as there are desired objects (at least
// minUnconfirmed), forgetting the oldest, and its order does not grow
// without bound either.
func TestUnconfirmedDeletesAreBounded(t *testing.T) {
	r := New(nil, Options{})
	// Each taken again (adopted) right after its delete: nothing is left
	// unconfirmed, and the order does not keep them.
	for i := range 3 * minUnconfirmed {
		id := fmt.Sprintf("again-%d", i)
		r.unconfirmedDelete(recordLoadBalancer, id)
		r.own(recordLoadBalancer, id)
	}
	if n, m := len(r.unconfirmed.byID), len(r.unconfirmed.order); n != 0 || m > minUnconfirmed+1 {
		t.Errorf("%d unconfirmed and %d in the order after deletes all taken again; want 0 and at most %d", n, m, minUnconfirmed+1)
	}
	for i := range 3 * minUnconfirmed {
		r.unconfirmedDelete(recordLoadBalancer, fmt.Sprintf("lb-%d", i))
	}
	if n := len(r.unconfirmed.byID); n != minUnconfirmed {
		t.Errorf("%d unconfirmed deletes kept, want %d", n, minUnconfirmed)
	}
	if r.unconfirmed.has("lb-0") || !r.unconfirmed.has(fmt.Sprintf("lb-%d", 3*minUnconfirmed-1)) {
		t.Error("the oldest were not the ones forgotten")
	}
}

// TestDeleteKeptBeforeARestartIsDeletedAfterIt: hnsproxy restarts between
// a delete HNS kept and the Repair that would have found it. The state
// file's record of the unconfirmed delete makes the new process's Start
// count it as owned: counted as kept, and deleted by the first Sync, where
// a foreign object would have stayed. One HNS did remove is forgotten.
func TestDeleteKeptBeforeARestartIsDeletedAfterIt(t *testing.T) {
	for _, snapshot := range []bool{false, true} {
		t.Run(map[bool]string{false: "in the journal", true: "in a snapshot"}[snapshot], func(t *testing.T) {
			testDeleteKeptBeforeARestart(t, snapshot)
		})
	}
}

// testDeleteKeptBeforeARestart is TestDeleteKeptBeforeARestartIsDeletedAfterIt
// with the unconfirmed deletes in the journal, or folded into a snapshot.
func testDeleteKeptBeforeARestart(t *testing.T, snapshot bool) {
	e, r, kept := keptEnv(t)
	keptLB := lb("10.96.0.30", 443, loc("10.244.1.11"))
	goneLB := lb("10.96.0.40", 443, loc("10.244.1.11"))
	stays := lb("10.96.0.10", 80, loc("10.244.1.10"))
	upsert(r, keptLB, goneLB, stays)
	e.converge(r)
	keptID, goneID := e.hnsLB(keptLB.Key).ID, e.hnsLB(goneLB.Key).ID

	e.removeKept(r, keptLB.Key, goneLB.Key)
	if err := e.hns.DeleteLoadBalancerOutOfBand(goneID); err != nil { // HNS lets this one go later
		t.Fatal(err)
	}
	if snapshot {
		r.mu.Lock()
		r.snapshotDue = true
		err := r.compactState()
		r.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
	}
	if s, err := loadStateFrom(osFS{}, e.stateFile); err != nil || !slices.Equal(slices.Sorted(slices.Values(s.DeletedLoadBalancers)), slices.Sorted(slices.Values([]string{keptID, goneID}))) {
		t.Fatalf("state file's unconfirmed deletes: %+v, %v; want both", s, err)
	}

	r2, res := e.start(e.hns, stays)
	if res.Deleted != 1 || e.hasObject(keptID) {
		t.Errorf("first Sync after the restart: %+v; the kept load balancer still there: %v", res, e.hasObject(keptID))
	}
	if kept[KindLoadBalancer] != 1 {
		t.Errorf("kept counted %v, want the one load balancer", kept)
	}
	e.assertRealized([]intent.LB{stays})
	// The gone one is forgotten; the kept one's new delete waits for a
	// Repair to confirm it, as any delete.
	if s, err := loadStateFrom(osFS{}, e.stateFile); err != nil || !slices.Equal(s.DeletedLoadBalancers, []string{keptID}) || slices.ContainsFunc(s.LoadBalancers, func(id string) bool { return id == goneID || id == keptID }) {
		t.Errorf("state file after the restart: %+v, %v; want only the kept one's new delete unconfirmed", s, err)
	}
	// Confirmed by repairs, it costs the state file nothing, and another
	// restart, which no longer lists it, forgets it without a count.
	for range silentListings {
		if err := r2.Repair(ctx); err != nil {
			t.Fatal(err)
		}
		r2.Sync(ctx)
	}
	if n := len(r2.unconfirmed.byID); n != 0 {
		t.Errorf("%d deletes unconfirmed after %d repairs confirmed them", n, silentListings)
	}
	e.start(e.hns, stays)
	if kept[KindLoadBalancer] != 1 {
		t.Errorf("a restart after the confirmation counted kept objects: %v", kept)
	}
	if s, err := loadStateFrom(osFS{}, e.stateFile); err != nil || len(s.DeletedLoadBalancers) != 0 {
		t.Errorf("state file after a restart that confirmed every delete: %+v, %v", s, err)
	}
}

// TestKeptLoadBalancerReadsAsOursAndCleanupDeletesIt: a load balancer whose
// delete HNS kept, before any Repair, is hnsproxy's to hnsproxy-diag
// (ReadOwned) and to --cleanup, which deletes it.
func TestKeptLoadBalancerReadsAsOursAndCleanupDeletesIt(t *testing.T) {
	e, r, _ := keptEnv(t)
	gone := lb("10.96.0.30", 443, loc("10.244.1.11"))
	upsert(r, gone)
	e.converge(r)
	id := e.hnsLB(gone.Key).ID
	e.removeKept(r, gone.Key)

	if o, err := ReadOwned(e.stateFile); err != nil || !o.LoadBalancer(id) {
		t.Errorf("ReadOwned of the kept load balancer %s: %+v, %v; want it owned", id, o, err)
	}
	res, err := Cleanup(ctx, e.hns, e.options())
	if err != nil || res.DeletedLoadBalancers != 1 || e.hasObject(id) {
		t.Errorf("cleanup: %+v, %v; the kept load balancer still there: %v", res, err, e.hasObject(id))
	}
}

// TestDeleteOfAGoneObjectRecordsNothing: a delete HNS answers "not found"
// (the object went behind hnsproxy's back, or with an HNS restart that
// dropped it) has nothing left to confirm: neither a plain delete nor a
// ws2022 replace made ahead in a batch records it. After an HNS restart
// that drops 20,000 load balancers, recording each cost 5 MiB at 10,000
// Services.
func TestDeleteOfAGoneObjectRecordsNothing(t *testing.T) {
	e, r, _ := keptEnv(t)
	removed := lb("10.96.0.30", 443, loc("10.244.1.11"))
	updated := lb("10.96.0.40", 443, loc("10.244.1.11"))
	upsert(r, removed, updated)
	e.converge(r)
	for _, d := range []intent.LB{removed, updated} {
		if err := e.hns.DeleteLoadBalancerOutOfBand(e.hnsLB(d.Key).ID); err != nil {
			t.Fatal(err)
		}
	}
	remove(r, removed.Key)
	upsert(r, withInternalPort(updated, 9090)) // ws2022: delete, then create
	e.hns.ResetCounters()
	if res := r.Sync(ctx); res.Failed != 0 {
		t.Fatalf("sync: %+v", res)
	}
	if n := e.counters().CountResult(sim.OpDeleteLoadBalancer, "NotFound"); n != 2 {
		t.Fatalf("%d deletes answered not found, want 2", n)
	}
	if n := len(r.unconfirmed.byID); n != 0 {
		t.Errorf("%d deletes of gone objects recorded for confirmation", n)
	}
}
