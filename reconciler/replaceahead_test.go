package reconciler

import (
	"slices"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// twoUpdatesWithoutModify is an env on ws2022 (no modify) with two load
// balancers to realize first (before), and the same two with another
// backend each (after).
func twoUpdatesWithoutModify(t *testing.T) (*env, []intent.LB, []intent.LB) {
	e := newEnv(t, sim.ProfileWS2022)
	for _, ip := range []string{"10.244.1.10", "10.244.1.11", "10.244.1.12", "10.244.1.13"} {
		e.local(ip)
	}
	before := []intent.LB{lb("10.96.0.10", 80, loc("10.244.1.10")), lb("10.96.0.20", 80, loc("10.244.1.12"))}
	after := []intent.LB{lb("10.96.0.10", 80, loc("10.244.1.10"), loc("10.244.1.11")),
		lb("10.96.0.20", 80, loc("10.244.1.12"), loc("10.244.1.13"))}
	return e, before, after
}

// Where HNS cannot modify, a Sync's updates (each a delete and a create)
// go to HNS in one batch, each create after its delete: both updated, the
// old load balancers disowned and the new ones owned.
func TestUpdatesWithoutModifyAreOneBatch(t *testing.T) {
	e, before, after := twoUpdatesWithoutModify(t)
	r := e.started(before...)
	old := []string{e.hnsLB(before[0].Key).ID, e.hnsLB(before[1].Key).ID}
	e.hns.ResetCounters()
	upsert(r, after...)
	res := r.Sync(ctx)
	if res.Updated != 2 || res.Failed != 0 || res.Created != 0 || res.Deleted != 0 {
		t.Fatalf("sync: %+v, want 2 updated", res)
	}
	c := e.counters()
	if c.Count(sim.OpDeleteLoadBalancer) != 2 || c.Count(sim.OpCreateLoadBalancer) != 2 || c.Writes() != 4 {
		t.Errorf("%d deletes, %d creates, %d writes; want 2, 2 and 4", c.Count(sim.OpDeleteLoadBalancer), c.Count(sim.OpCreateLoadBalancer), c.Writes())
	}
	e.assertRealized(after)
	st, err := loadState(e.stateFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range old {
		if slices.Contains(st.LoadBalancers, id) {
			t.Errorf("the state file still owns the replaced load balancer %s", id)
		}
	}
	for _, d := range after {
		if id := e.hnsLB(d.Key).ID; !slices.Contains(st.LoadBalancers, id) {
			t.Errorf("the state file does not own %s's new load balancer %s", d.Key, id)
		}
	}
}

// A replacement whose delete fails makes no create: the old load balancer
// stays realized and owned, nothing else lands on its frontend, and the
// update is retried.
func TestReplacementIsNotCreatedWhenItsDeleteFails(t *testing.T) {
	e, before, after := twoUpdatesWithoutModify(t)
	r := e.started(before...)
	e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpDeleteLoadBalancer: 1}})
	e.hns.ResetCounters()
	upsert(r, after...)
	res := r.Sync(ctx)
	if res.Failed != 2 || res.Updated != 0 {
		t.Fatalf("sync with failing deletes: %+v, want both failed", res)
	}
	if n := e.counters().Count(sim.OpCreateLoadBalancer); n != 0 {
		t.Errorf("%d load balancer creates after their deletes failed, want 0", n)
	}
	e.assertRealized(before)
	st, err := loadState(e.stateFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range before {
		if id := e.hnsLB(d.Key).ID; !slices.Contains(st.LoadBalancers, id) {
			t.Errorf("the state file no longer owns %s's load balancer %s, which HNS still holds", d.Key, id)
		}
	}

	e.hns.SetFaults(sim.Faults{})
	e.converge(r)
	e.assertRealized(after)
}

// A hung delete in the batch is abandoned and ends it: its create and the
// other update are not called, and are retried; the hung load balancer
// waits for its call, then all converge.
func TestBatchedReplacementsKeepTheCallDeadline(t *testing.T) {
	e, before, after := twoUpdatesWithoutModify(t)
	w := e.withHangWatch(0)
	r := w.watch(e.started(before...))
	e.hns.SetFaults(sim.Faults{Hang: []sim.Op{sim.OpDeleteLoadBalancer}})
	e.hns.ResetCounters()
	upsert(r, after...)
	done := make(chan SyncResult, 1)
	go func() { done <- r.Sync(ctx) }()
	if err := e.hns.WaitHeld(ctx, 1); err != nil {
		t.Fatal(err)
	}
	e.clock.Step(DefaultCallTimeout)
	var res SyncResult
	select {
	case res = <-done:
	case <-time.After(time.Minute): // not a timing assertion: a Sync held by a second hung call never returns
		t.Fatalf("the Sync did not end past the hung delete: %d calls held, want the rest of its batch not called", e.hns.Held())
	}
	if res.Failed != 2 {
		t.Errorf("sync past the hung delete: %+v, want both updates failed", res)
	}
	if got := w.ops(); !slices.Equal(got, []string{"delete_load_balancer"}) {
		t.Errorf("timed-out operations %v, want one delete_load_balancer", got)
	}
	if c := e.counters(); c.Count(sim.OpDeleteLoadBalancer) != 0 || c.Count(sim.OpCreateLoadBalancer) != 0 || e.hns.Held() != 1 {
		t.Errorf("%d deletes and %d creates returned, %d held; want only the hung delete, the rest of its batch not called",
			c.Count(sim.OpDeleteLoadBalancer), c.Count(sim.OpCreateLoadBalancer), e.hns.Held())
	}

	e.hns.SetFaults(sim.Faults{})
	<-w.returned
	e.converge(r)
	e.assertRealized(after)
}
