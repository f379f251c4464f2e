package reconciler

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// threeServices: two local pods, three remote pods, one remote pod shared.
func (e *env) threeServices() []intent.LB {
	e.local("10.244.1.10")
	e.local("10.244.1.11")
	return []intent.LB{
		lb("10.96.0.10", 53, loc("10.244.1.10"), rem("10.244.2.20", "192.168.0.2")),
		lb("10.96.0.20", 80, loc("10.244.1.11"), rem("10.244.2.20", "192.168.0.2"), rem("10.244.3.30", "192.168.0.3")),
		lb("10.96.0.30", 443, rem("10.244.3.31", "192.168.0.3")),
	}
}

func TestColdStartWritesEachObjectOnce(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2019, sim.ProfileWS2022, sim.ProfileWS2025Mod4, sim.ProfileWS2025} {
		t.Run(profile, func(t *testing.T) {
			e := newEnv(t, profile)
			want := e.threeServices()
			e.hns.ResetCounters()
			r, res := e.start(e.hns, want...)
			c := e.counters()
			// 3 load balancers + 3 remote endpoints, nothing else.
			if c.Writes() != 6 || c.Count(sim.OpCreateLoadBalancer) != 3 || c.Count(sim.OpCreateEndpoint) != 3 {
				t.Errorf("writes %d (lb creates %d, endpoint creates %d), want 6 (3, 3)",
					c.Writes(), c.Count(sim.OpCreateLoadBalancer), c.Count(sim.OpCreateEndpoint))
			}
			if c.Lists() != 2 {
				t.Errorf("lists %d, want 2 (load balancers and endpoints, once at Start)", c.Lists())
			}
			if res.Created != 6 || res.Failed != 0 || res.Pending != 0 {
				t.Errorf("result %+v", res)
			}
			e.assertRealized(want)
			for _, ep := range e.snapshot().Endpoints {
				if ep.IP() == "10.244.3.30" && ep.ProviderAddress() != "192.168.0.3" {
					t.Errorf("remote endpoint %s has PA %q", ep.IP(), ep.ProviderAddress())
				}
			}
			// Nothing to do: no calls at all.
			e.hns.ResetCounters()
			if res := r.Sync(ctx); res.Created+res.Updated+res.Deleted+res.Failed+res.Pending != 0 {
				t.Errorf("idle sync %+v", res)
			}
			if n := e.counters().Total(); n != 0 {
				t.Errorf("idle sync made %d HNS calls", n)
			}
			if _, ok := r.NextRetry(); ok {
				t.Error("NextRetry after convergence")
			}
		})
	}
}

func TestOneBackendChange(t *testing.T) {
	for _, tc := range []struct {
		profile string
		writes  int
	}{
		{sim.ProfileWS2019, 2}, // delete + create
		{sim.ProfileWS2022, 2},
		{sim.ProfileWS2025Mod4, 2}, // modify would keep the old backends: not used
		{sim.ProfileWS2025, 1},     // modify
	} {
		t.Run(tc.profile, func(t *testing.T) {
			e := newEnv(t, tc.profile)
			want := e.threeServices()
			e.local("10.244.1.12")
			r := e.started(want...)
			before := e.hnsLB(want[1].Key)

			want[1] = lb("10.96.0.20", 80, loc("10.244.1.12"), rem("10.244.2.20", "192.168.0.2"), rem("10.244.3.30", "192.168.0.3"))
			upsert(r, want[1])
			journalSize := func() int64 {
				fi, err := os.Stat(journalPath(e.stateFile))
				if err != nil {
					return 0
				}
				return fi.Size()
			}
			sizeBefore := journalSize()
			res := r.Sync(ctx)
			// The state is written only when owned IDs change (not on modify).
			if grew := journalSize() > sizeBefore; grew != (tc.writes == 2) {
				t.Errorf("state journal written: %v, want %v", grew, tc.writes == 2)
			}
			c := e.counters()
			if c.Writes() != tc.writes || c.Lists() != 0 {
				t.Errorf("writes %d lists %d, want %d and 0 (%v)", c.Writes(), c.Lists(), tc.writes, c.Calls)
			}
			if res.Updated != 1 || res.Created+res.Deleted+res.Failed+res.Pending != 0 {
				t.Errorf("result %+v", res)
			}
			e.assertRealized(want)
			after := e.hnsLB(want[1].Key)
			if sameID := after.ID == before.ID; sameID != (tc.writes == 1) {
				t.Errorf("ID before %s after %s; modify in place expected: %v", before.ID, after.ID, tc.writes == 1)
			}
			// The same desired state again is not a change.
			e.hns.ResetCounters()
			upsert(r, want[1])
			r.Sync(ctx)
			if n := e.counters().Total(); n != 0 {
				t.Errorf("unchanged upsert made %d calls", n)
			}
		})
	}
}

func TestAddAndRemoveRemoteBackend(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2025)
	want := e.threeServices()
	rec := &recorder{Client: e.hns}
	r, _ := e.start(rec, want...)
	e.hns.ResetCounters()

	// A new remote pod: one endpoint create, one modify.
	want[2] = lb("10.96.0.30", 443, rem("10.244.3.31", "192.168.0.3"), rem("10.244.4.40", "192.168.0.4"))
	upsert(r, want[2])
	r.Sync(ctx)
	c := e.counters()
	if c.Count(sim.OpCreateEndpoint) != 1 || c.Count(sim.OpUpdateLoadBalancer) != 1 || c.Writes() != 2 || c.Lists() != 0 {
		t.Errorf("add remote backend: %v", c.Calls)
	}
	e.assertRealized(want)

	// It goes again: one modify, then one endpoint delete.
	e.hns.ResetCounters()
	rec.ops = nil
	want[2] = lb("10.96.0.30", 443, rem("10.244.3.31", "192.168.0.3"))
	upsert(r, want[2])
	r.Sync(ctx)
	c = e.counters()
	if c.Count(sim.OpDeleteEndpoint) != 1 || c.Count(sim.OpUpdateLoadBalancer) != 1 || c.Writes() != 2 || c.Lists() != 0 {
		t.Errorf("remove remote backend: %v", c.Calls)
	}
	e.assertRealized(want)
}

func TestSharedRemoteEndpointLivesUntilLastUser(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	want := e.threeServices() // 10.244.2.20 is used by want[0] and want[1]
	r := e.started(want...)

	remove(r, want[0].Key)
	res := r.Sync(ctx)
	if c := e.counters(); c.Writes() != 1 || c.Count(sim.OpDeleteLoadBalancer) != 1 || res.Deleted != 1 {
		t.Errorf("first delete: %v %+v", c.Calls, res)
	}
	e.assertRealized(want[1:])

	e.hns.ResetCounters()
	remove(r, want[1].Key)
	res = r.Sync(ctx)
	// The load balancer, then its two remote endpoints nobody else uses.
	if c := e.counters(); c.Writes() != 3 || c.Count(sim.OpDeleteEndpoint) != 2 || res.Deleted != 3 {
		t.Errorf("second delete: %v %+v", c.Calls, res)
	}
	e.assertRealized(want[2:])
	// Deleting what is not desired is a no-op.
	remove(r, want[1].Key)
	if _, ok := r.NextRetry(); ok {
		t.Error("deleting an unknown key made work")
	}
}

func TestOrderingEndpointsBeforeLoadBalancersAndBack(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2019)
	want := e.threeServices()
	rec := &recorder{Client: e.hns}
	r, _ := e.start(rec, want...)
	created := map[string]bool{}
	usedBy := map[string][]string{} // load balancer → endpoints
	var lbID string
	for _, op := range rec.ops {
		verb, id, _ := strings.Cut(op, " ")
		switch verb {
		case "create-ep":
			created[id] = true
		case "create-lb":
			lbID = id
		case "uses":
			usedBy[lbID] = append(usedBy[lbID], id)
			if !created[id] && !slices.Contains(e.localIDs(), id) {
				t.Errorf("a load balancer used endpoint %s before it was created: %v", id, rec.ops)
			}
		}
	}
	// Delete everything: every load balancer goes before the endpoints it used.
	rec.ops = nil
	for _, d := range want {
		remove(r, d.Key)
	}
	r.Sync(ctx)
	deleted := map[string]bool{}
	for _, op := range rec.ops {
		verb, id, _ := strings.Cut(op, " ")
		switch verb {
		case "delete-lb":
			deleted[id] = true
		case "delete-ep":
			for l, eps := range usedBy {
				if slices.Contains(eps, id) && !deleted[l] {
					t.Errorf("endpoint %s deleted before load balancer %s: %v", id, l, rec.ops)
				}
			}
		}
	}
	if len(rec.ops) != 6 {
		t.Errorf("ops %v, want 3 load balancer and 3 endpoint deletes", rec.ops)
	}
	e.assertRealized(nil)
}

func (e *env) localIDs() []string {
	var ids []string
	for _, id := range e.locals {
		ids = append(ids, id)
	}
	return ids
}

func TestBackendCapProfile(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2019)
	var full, over []intent.Backend
	for i := range 65 {
		b := rem(fmt.Sprintf("10.245.%d.%d", i/200, i%200+1), "192.168.0.9")
		if i < 64 {
			full = append(full, b)
		}
		over = append(over, b)
	}
	ok := lb("10.96.1.1", 80, full...)
	bad := lb("10.96.1.2", 80, over...)
	r := e.reconciler()
	upsert(r, ok)
	upsert(r, bad)
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	res := r.Sync(ctx)
	if res.Failed != 1 || len(res.Errors) != 1 || res.Errors[0].Name != bad.Key.String() || !hnslb.IsInvalidParameter(res.Errors[0].Err) {
		t.Fatalf("result %+v", res)
	}
	if !errors.As(error(res.Errors[0]), new(*hnslb.Error)) || !strings.Contains(res.Errors[0].Error(), "LoadBalancer") {
		t.Errorf("object error %v does not wrap the HNS error", res.Errors[0])
	}
	if got := e.hnsLB(ok.Key); got == nil || len(got.HostComputeEndpoints) != 64 {
		t.Fatalf("64-backend load balancer not realized: %+v", got)
	}
	// The failing one backs off exponentially, capped at RetryMax.
	var delays []time.Duration
	for range 6 {
		st := statusOf(r, bad.Key)
		if st.State != StateError || st.LastError == "" {
			t.Fatalf("status %+v", st)
		}
		delays = append(delays, st.NextRetry.Sub(e.clock.Now()))
		e.clock.SetTime(st.NextRetry)
		r.Sync(ctx)
	}
	wantDelays := []time.Duration{1, 2, 4, 8, 16, 16}
	for i := range wantDelays {
		wantDelays[i] *= time.Second
	}
	if !slices.Equal(delays, wantDelays) {
		t.Errorf("backoff %v, want %v", delays, wantDelays)
	}
	if st := statusOf(r, bad.Key); st.Attempts != 7 {
		t.Errorf("attempts %d, want 7", st.Attempts)
	}
	// Fixed desired state: converges and the backoff resets.
	upsert(r, lb("10.96.1.2", 80, full...))
	res = r.Sync(ctx)
	if res.Created != 1 || res.Failed != 0 {
		t.Errorf("after fix: %+v", res)
	}
	if st := statusOf(r, bad.Key); st.State != StateDone || st.Attempts != 0 || !st.NextRetry.IsZero() || st.LastError != "" {
		t.Errorf("status after fix %+v", st)
	}
}

func statusOf(r *Reconciler, key intent.LBKey) Status {
	for _, s := range r.Statuses() {
		if s.Key == key {
			return s
		}
	}
	return Status{}
}
