package reconciler

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// manyServices: n load balancers over a pool of local and remote pods, with
// remote endpoints shared between load balancers.
func (e *env) manyServices(n int) []intent.LB {
	for i := range 8 {
		e.local(fmt.Sprintf("10.244.1.%d", 10+i))
	}
	var out []intent.LB
	for i := range n {
		out = append(out, lb(fmt.Sprintf("10.96.0.%d", i+1), 80,
			loc(fmt.Sprintf("10.244.1.%d", 10+i%8)),
			rem(fmt.Sprintf("10.244.2.%d", 10+i%5), "192.168.0.2"),
			rem(fmt.Sprintf("10.244.3.%d", 10+i%7), "192.168.0.3")))
	}
	return out
}

func TestFaultsConvergeWithoutLeaks(t *testing.T) {
	unavailable := []hnslb.ErrorCode{hnslb.CodeRPCServerUnavailable, hnslb.CodeTimeout, hnslb.CodeManagerStopped}
	for _, tc := range []struct {
		name    string
		profile string
		faults  sim.Faults
	}{
		{"ws2019", sim.ProfileWS2019, sim.Faults{Errors: append(unavailable, hnslb.CodeInvalidParameter)}},
		{"ws2025", sim.ProfileWS2025, sim.Faults{Errors: append(unavailable, hnslb.CodeInvalidParameter)}},
		// Half of the failed writes happened all the same (lost replies).
		{"ws2019/committed", sim.ProfileWS2019, sim.Faults{Errors: unavailable, Committed: 0.5}},
		{"ws2025/committed", sim.ProfileWS2025, sim.Faults{Errors: unavailable, Committed: 0.5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.profile)
			want := e.manyServices(20)
			tc.faults.ErrorRate = map[sim.Op]float64{sim.AnyOp: 0.3}
			e.hns.SetFaults(tc.faults)
			r := e.reconciler()
			for _, d := range want {
				upsert(r, d)
			}
			for r.Start(ctx) != nil {
				// Start lists; a failed list is simply retried.
			}
			res := r.Sync(ctx)
			if res.Failed == 0 || len(res.Errors) != res.Failed {
				t.Fatalf("30%% faults but no failure: %+v", res)
			}
			e.converge(r)
			e.assertRealized(want)

			// Churn under faults: change half, drop a quarter, then converge.
			for i, d := range want {
				switch {
				case i%4 == 0:
					remove(r, d.Key)
				case i%2 == 0:
					d.Backends = d.Backends[:2]
					want[i] = d
					upsert(r, d)
				}
			}
			var kept []intent.LB
			for i, d := range want {
				if i%4 != 0 {
					kept = append(kept, d)
				}
			}
			e.converge(r)
			e.assertRealized(kept)
			e.assertStateFileMatchesHNS()
			for _, s := range r.Statuses() {
				if s.State != StateDone || s.Attempts != 0 {
					t.Errorf("status after convergence %+v", s)
				}
			}
			e.hns.SetFaults(sim.Faults{})
			if err := r.Repair(ctx); err != nil {
				t.Fatal(err)
			}
			e.hns.ResetCounters()
			r.Sync(ctx)
			if c := e.counters(); c.Writes() != 0 {
				t.Errorf("repair after convergence found work: %v", c.Calls)
			}
		})
	}
}

func TestHNSRestartNeverDeletes(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	want := e.threeServices()
	r := e.started(want...)

	e.hns.Restart(time.Minute)
	if err := r.Repair(ctx); err == nil || !hnslb.IsUnavailable(err) {
		t.Fatalf("repair while HNS restarts: %v", err)
	}
	want[0] = lb("10.96.0.10", 53, loc("10.244.1.10"))
	upsert(r, want[0])
	res := r.Sync(ctx)
	if res.Failed != 1 || res.Deleted != 0 || !hnslb.IsUnavailable(res.Errors[0].Err) {
		t.Fatalf("sync while HNS restarts: %+v", res)
	}
	for _, s := range r.Statuses() {
		if s.RealizedID == "" {
			t.Errorf("%s forgot its load balancer during the restart", s.Key)
		}
	}
	e.clock.Step(time.Minute)
	e.converge(r)
	e.assertRealized(want)
	c := e.counters()
	// The failed delete + create of want[0], then delete + create (no modify
	// on ws2022) and the remote endpoint nobody uses any more. Nothing else
	// was deleted.
	if got := c.CountResult(sim.OpDeleteLoadBalancer, sim.ResultOK); got != 1 {
		t.Errorf("load balancer deletes %d, want 1: %v", got, c.Calls)
	}
	if got := c.CountResult(sim.OpDeleteEndpoint, sim.ResultOK); got != 0 {
		t.Errorf("endpoint deletes %d, want 0 (10.244.2.20 is still used): %v", got, c.Calls)
	}
}

func TestStartFailsWhileHNSRestarts(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2025)
	e.hns.Restart(time.Minute)
	r := e.reconciler()
	if err := r.Start(ctx); err == nil || !hnslb.IsUnavailable(err) {
		t.Fatalf("start: %v", err)
	}
	upsert(r, lb("10.96.0.1", 80, loc("10.244.1.10")))
	if res := r.Sync(ctx); res.Pending != 1 || res.Created != 0 {
		t.Errorf("sync before start %+v", res)
	}
	if err := r.Repair(ctx); err == nil {
		t.Error("repair before start succeeded")
	}
	e.clock.Step(time.Minute)
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.Start(ctx); err != nil {
		t.Fatal("second start:", err)
	}
}

// A listing HNS fails at Start is transient whatever code it answered
// (found by the proxier's random histories: 0x57 on the load balancer
// listing ended the process), and the next Start lists again.
func TestStartListingFailureIsTransientWhateverTheCode(t *testing.T) {
	for _, op := range []sim.Op{sim.OpListLoadBalancers, sim.OpListEndpoints} {
		for _, code := range []hnslb.ErrorCode{hnslb.CodeInvalidParameter, hnslb.CodeNotFound, 0x80004005} {
			t.Run(fmt.Sprintf("%s/%#x", op, uint32(code)), func(t *testing.T) {
				e := newEnv(t, sim.ProfileWS2022)
				e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{op: 1}, Errors: []hnslb.ErrorCode{code}})
				r := e.reconciler()
				err := r.Start(ctx)
				if err == nil || !hnslb.IsTransient(err) {
					t.Fatalf("start with every %s failing %#x: %v, want a transient error", op, uint32(code), err)
				}
				var coded *hnslb.Error
				if !errors.As(err, &coded) || coded.Code != code {
					t.Errorf("start error %v does not carry HNS's code %#x", err, uint32(code))
				}
				e.hns.SetFaults(sim.Faults{})
				if err := r.Start(ctx); err != nil {
					t.Fatal("start once the listing answers:", err)
				}
			})
		}
	}
}

func TestLostCreateRepliesLeakNothing(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2019, sim.ProfileWS2025} {
		t.Run(profile, func(t *testing.T) {
			e := newEnv(t, profile)
			want := e.threeServices()
			r := e.started()
			// Every create is applied, but its reply is lost.
			e.hns.SetFaults(sim.Faults{
				ErrorRate: map[sim.Op]float64{sim.OpCreateLoadBalancer: 1, sim.OpCreateEndpoint: 1},
				Committed: 1,
			})
			for _, d := range want {
				upsert(r, d)
			}
			res := r.Sync(ctx)
			if res.Failed == 0 || len(e.snapshot().LoadBalancers) == 0 {
				t.Fatalf("lost replies: %+v, %d load balancers in HNS", res, len(e.snapshot().LoadBalancers))
			}
			// want[0] and want[2] (with remote endpoint 10.244.3.31, that
			// only it used) are dropped before any retry; want[1] converges.
			remove(r, want[0].Key)
			remove(r, want[2].Key)
			e.hns.SetFaults(sim.Faults{})
			e.converge(r)
			e.assertRealized(want[1:2])
			e.assertStateFileMatchesHNS()

			remove(r, want[1].Key)
			e.converge(r)
			e.assertRealized(nil)
		})
	}
}

func TestLoadBalancerWithoutBackendsIsNotCreated(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	want := e.threeServices()
	r := e.started(want...)
	empty := want[2]
	empty.Backends = nil
	upsert(r, empty)
	res := r.Sync(ctx)
	if res.Deleted != 2 || res.Failed+res.Pending != 0 || e.hnsLB(empty.Key) != nil {
		t.Errorf("emptied load balancer: %+v", res) // the load balancer and its only remote endpoint
	}
	if s := statusOf(r, empty.Key); s.State != StateDone || s.RealizedID != "" {
		t.Errorf("status %+v", s)
	}
	upsert(r, want[2])
	r.Sync(ctx)
	e.assertRealized(want)
}
