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

func TestStatusSnapshotPublishedByStartSyncRepair(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	e.local("10.244.1.10")
	r := e.reconciler()
	if s := r.StatusSnapshot(); len(s.LoadBalancers)+len(s.RemoteEndpoints) != 0 {
		t.Fatalf("before Start: %+v, want empty", s)
	}

	first := lb("10.96.0.1", 80, loc("10.244.1.10"))
	r.Upsert(first)
	if n := len(r.StatusSnapshot().LoadBalancers); n != 0 {
		t.Fatalf("Upsert published %d load balancers; only Start, Sync and Repair publish", n)
	}
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if s := r.StatusSnapshot(); len(s.LoadBalancers) != 1 || s.LoadBalancers[0].State != StatePending {
		t.Fatalf("after Start: %+v, want the one load balancer pending", s.LoadBalancers)
	}
	r.Sync(ctx)
	s := r.StatusSnapshot()
	if got := keysDone(s); len(got) != 1 || got[0] != first.Key.String() || s.LoadBalancers[0].RealizedID == "" {
		t.Fatalf("after Sync: done %v (%+v), want [%s] realized", got, s.LoadBalancers, first.Key)
	}

	// Drift: the load balancer disappears behind our back; Repair notices.
	if err := e.hns.DeleteLoadBalancer(ctx, s.LoadBalancers[0].RealizedID); err != nil {
		t.Fatal(err)
	}
	if err := r.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	if got := keysDone(r.StatusSnapshot()); len(got) != 0 {
		t.Fatalf("after Repair: done %v, want the drifted load balancer no longer done", got)
	}
	if got := keysDone(s); len(got) != 1 {
		t.Fatalf("an earlier snapshot changed under its reader: done %v", got)
	}
}
