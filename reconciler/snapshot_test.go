package reconciler

import (
	"testing"

	"github.com/hnsproxy/hnsproxy/sim"
)

// keysDone lists the load balancers of s that are realized, by key.
func keysDone(s *StatusSnapshot) []string {
	var out []string
	for _, st := range s.LoadBalancers {
		if st.State == StateDone {
			out = append(out, st.Key.String())
		}
	}
	return out
}

// An idle reconciler's snapshot is its current status; while a Sync holds
// the lock a reader gets the last snapshot at once, and that Sync publishes
// a fresh one when it ends; a Sync nobody asked about builds none.
func TestStatusSnapshotNeverWaitsAndStaysCurrent(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	e.local("10.244.1.10")
	e.local("10.244.1.11")
	r := e.reconciler()
	if s := r.StatusSnapshot(); len(s.LoadBalancers)+len(s.RemoteEndpoints) != 0 {
		t.Fatalf("before Start: %+v, want empty", s)
	}

	first := lb("10.96.0.1", 80, loc("10.244.1.10"))
	r.Upsert(first)
	if s := r.StatusSnapshot(); len(s.LoadBalancers) != 1 || s.LoadBalancers[0].State != StatePending {
		t.Fatalf("idle, after Upsert: %+v, want the one load balancer pending", s.LoadBalancers)
	}
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	r.Sync(ctx)
	s := r.StatusSnapshot()
	if got := keysDone(s); len(got) != 1 || got[0] != first.Key.String() || s.LoadBalancers[0].RealizedID == "" {
		t.Fatalf("after Sync: done %v (%+v), want [%s] realized", got, s.LoadBalancers, first.Key)
	}

	// A Sync nobody asked about builds no snapshot (it walks every object).
	second := lb("10.96.0.2", 80, loc("10.244.1.11"))
	r.Upsert(second)
	r.Sync(ctx)
	if r.published.latest.Load() != s {
		t.Fatal("a Sync nobody asked about published a snapshot")
	}

	// A reader that meets a Sync in progress (the lock held) gets the last
	// snapshot without waiting; that Sync then publishes.
	r.Upsert(lb("10.96.0.3", 80, loc("10.244.1.11")))
	r.mu.Lock()
	during := r.StatusSnapshot()
	r.mu.Unlock()
	if during != s {
		t.Fatalf("during a sync: got %+v, want the last snapshot", during.LoadBalancers)
	}
	r.Sync(ctx)
	if got := keysDone(r.published.latest.Load()); len(got) != 3 {
		t.Fatalf("after the sync a reader waited for: done %v, want all three", got)
	}

	// Drift: a load balancer disappears behind our back; Repair notices.
	if err := e.hns.DeleteLoadBalancer(ctx, s.LoadBalancers[0].RealizedID); err != nil {
		t.Fatal(err)
	}
	if err := r.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	if got := keysDone(r.published.latest.Load()); len(got) != 2 {
		t.Fatalf("after Repair: done %v, want the drifted load balancer no longer done", got)
	}
	if got := keysDone(s); len(got) != 1 {
		t.Fatalf("an earlier snapshot changed under its reader: done %v", got)
	}
}
