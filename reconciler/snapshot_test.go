package reconciler

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"unsafe"

	"github.com/hnsproxy/hnsproxy/intent"
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
// the lock a reader gets, at once, the status at the end of the last Sync.
func TestStatusSnapshotNeverWaitsAndStaysCurrent(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2025)
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

	// A reader that meets a Sync in progress (the lock held) gets the
	// status the last Sync ended with, without waiting.
	second := lb("10.96.0.2", 80, loc("10.244.1.11"))
	r.Upsert(second)
	r.Sync(ctx)
	r.Upsert(lb("10.96.0.3", 80, loc("10.244.1.11")))
	r.mu.Lock()
	during := r.StatusSnapshot()
	r.mu.Unlock()
	if got := keysDone(during); len(got) != 2 || len(during.LoadBalancers) != 2 {
		t.Fatalf("during a sync: %+v, want the two load balancers of the last Sync, done", during.LoadBalancers)
	}
	r.Sync(ctx)
	r.mu.Lock()
	after := r.StatusSnapshot()
	r.mu.Unlock()
	if got := keysDone(after); len(got) != 3 {
		t.Fatalf("during the sync after: done %v, want all three", got)
	}

	// Drift: a load balancer is changed behind our back; Repair notices.
	changed := *e.hnsLB(first.Key)
	changed.SourceVIP = "10.244.1.99"
	if _, err := e.hns.UpdateLoadBalancer(ctx, changed.ID, &changed); err != nil {
		t.Fatal(err)
	}
	if err := r.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	repaired := r.StatusSnapshot()
	r.mu.Unlock()
	if got := keysDone(repaired); len(got) != 2 {
		t.Fatalf("after Repair: done %v, want the drifted load balancer no longer done", got)
	}
	if got := keysDone(s); len(got) != 1 {
		t.Fatalf("an earlier snapshot changed under its reader: done %v", got)
	}
}

// A Sync hands over only the objects it touched: one changed load balancer
// among 50 is one entry for readers to fold, and its endpoints' realized
// users follow it.
func TestSyncPublishesOnlyWhatItTouched(t *testing.T) {
	e, lbs := fiftyWithOneRemoteEach(t)
	r := e.started(lbs...)
	r.StatusSnapshot()

	changed := lbs[7]
	changed.Backends = append(changed.Backends, rem("10.244.3.1", "192.168.0.3"))
	upsert(r, changed)
	r.Sync(ctx)
	r.published.mu.Lock()
	gotLBs, gotEPs := len(r.published.lbDelta), len(r.published.epDelta)
	r.published.mu.Unlock()
	// The endpoints: the new one, and the one the load balancer used
	// before, whose realized users were counted again.
	if gotLBs != 1 || gotEPs != 2 {
		t.Fatalf("one load balancer and two endpoints changed; the Sync handed over %d and %d", gotLBs, gotEPs)
	}
	assertSnapshotIsFullStatus(t, r)
}

// fiftyWithOneRemoteEach is a ws2025 node with one local pod and 50 load
// balancers, each with that pod and a remote backend of its own.
func fiftyWithOneRemoteEach(t *testing.T) (*env, []intent.LB) {
	e := newEnv(t, sim.ProfileWS2025)
	e.local("10.244.1.10")
	var lbs []intent.LB
	for i := range 50 {
		lbs = append(lbs, lb(fmt.Sprintf("10.96.1.%d", i), 80, loc("10.244.1.10"), rem(fmt.Sprintf("10.244.2.%d", i), "192.168.0.2")))
	}
	return e, lbs
}

// Once a reader has asked, Syncs hand over what changed until the next
// read, each object gone as a removal; while nobody reads, frontends and
// pod IPs that come and go must not pile up: past twice the tracked
// objects the hand-over is replaced by every object, which the next
// reader takes as the whole status, gone objects left out, also once none
// is left.
func TestStatusesNoReaderTookAreBounded(t *testing.T) {
	e, lbs := fiftyWithOneRemoteEach(t)
	r := e.started(lbs...)
	assertSnapshotIsFullStatus(t, r)
	held := func() int {
		r.published.mu.Lock()
		defer r.published.mu.Unlock()
		return len(r.published.lbDelta) + len(r.published.epDelta)
	}
	live := lbs
	for g := range 10 {
		var next []intent.LB
		for i := range 50 {
			next = append(next, lb(fmt.Sprintf("10.97.%d.%d", g, i), 80, loc("10.244.1.10"), rem(fmt.Sprintf("10.245.%d.%d", g, i), "192.168.0.2")))
		}
		for _, l := range live {
			r.Delete(l.Key)
		}
		upsert(r, next...)
		e.converge(r)
		live = next
		if n, limit := held(), max(minDeltasDropped, 2*(50+51)); n > limit {
			t.Fatalf("generation %d: %d statuses wait for a reader, more than %d", g, n, limit)
		}
	}
	assertSnapshotIsFullStatus(t, r)

	// Every object goes while nobody reads: the next reader sees none.
	for g := range 10 {
		next := []intent.LB{lb(fmt.Sprintf("10.98.%d.1", g), 80, loc("10.244.1.10"))}
		for _, l := range live {
			r.Delete(l.Key)
		}
		upsert(r, next...)
		e.converge(r)
		live = next
	}
	remove(r, live[0].Key)
	e.converge(r)
	r.published.mu.Lock()
	r.published.fullDue = true // past the bound, as pastBound has it
	r.published.mu.Unlock()
	r.Sync(ctx)
	if s := r.StatusSnapshot(); len(s.LoadBalancers)+len(s.RemoteEndpoints) != 0 {
		t.Fatalf("nothing is tracked, but the snapshot holds %d load balancers and %d endpoints", len(s.LoadBalancers), len(s.RemoteEndpoints))
	}
}

// Until a first reader asks, a Sync keeps the counts and hands over no
// status; the first reader then gets every object: at once when the
// reconciler is idle, else from the end of the Sync it met (reading the
// empty status until then).
func TestNoStatusIsHeldBeforeAFirstReader(t *testing.T) {
	for _, firstReadDuringSync := range []bool{false, true} {
		t.Run(fmt.Sprint("duringSync=", firstReadDuringSync), func(t *testing.T) {
			e, lbs := fiftyWithOneRemoteEach(t)
			r := e.started(lbs...)
			changed := lbs[7]
			changed.Backends = append(changed.Backends, rem("10.244.3.1", "192.168.0.3"))
			upsert(r, changed)
			r.Sync(ctx)

			r.published.mu.Lock()
			held := len(r.published.lbDelta) + len(r.published.epDelta)
			r.published.mu.Unlock()
			if held != 0 || len(r.published.changed.epIDs) != 0 || len(r.published.ipOfID) != 0 {
				t.Fatalf("no reader yet, but %d statuses, %d changed endpoint IDs and %d endpoint IDs' IPs are held",
					held, len(r.published.changed.epIDs), len(r.published.ipOfID))
			}
			want := ObjectCounts{LoadBalancers: KindCounts{Desired: 50, Done: 50}, RemoteEndpoints: KindCounts{Desired: 51, Done: 51}}
			if got := r.ObjectCounts(); got != want {
				t.Fatalf("ObjectCounts %+v with no reader, want %+v", got, want)
			}

			if firstReadDuringSync {
				r.mu.Lock()
				during := r.StatusSnapshot()
				r.mu.Unlock()
				if len(during.LoadBalancers)+len(during.RemoteEndpoints) != 0 {
					t.Fatalf("a first read during a Sync got %d load balancers and %d endpoints; nothing was handed over yet",
						len(during.LoadBalancers), len(during.RemoteEndpoints))
				}
				r.Sync(ctx) // nothing to do; its end hands everything over
				r.published.mu.Lock()
				held = len(r.published.lbDelta) + len(r.published.epDelta)
				r.published.mu.Unlock()
				if held != 50+51 {
					t.Fatalf("the Sync after a first reader handed over %d statuses, want all %d", held, 50+51)
				}
			}
			assertSnapshotIsFullStatus(t, r)
		})
	}
}

// Whatever happens, a snapshot read while the reconciler is idle equals
// a full walk of its status, and ObjectCounts counts that walk; readers
// come at random points, so deltas of several Syncs are folded at once.
func TestStatusSnapshotMatchesAFullWalk(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2025, sim.ProfileWS2022} {
		t.Run(profile, func(t *testing.T) {
			e, locals := threePods(t, profile)
			rng := rand.New(rand.NewPCG(1, 2))
			r := e.started()
			desired := map[intent.LBKey]intent.LB{}
			for step := range 400 {
				switch op := rng.IntN(10); {
				case op < 5:
					var backends []intent.Backend
					for range 1 + rng.IntN(3) {
						if rng.IntN(2) == 0 {
							backends = append(backends, loc(locals[rng.IntN(len(locals))]))
						} else {
							n := rng.IntN(12)
							backends = append(backends, rem(fmt.Sprintf("10.244.2.%d", n), fmt.Sprintf("192.168.0.%d", 2+n%2)))
						}
					}
					// Unknown local backends leave a load balancer pending.
					if rng.IntN(8) == 0 {
						backends = append(backends, loc("10.244.1.99"))
					}
					l := lb(fmt.Sprintf("10.96.0.%d", rng.IntN(20)), 80, distinct(backends)...)
					desired[l.Key] = l
					upsert(r, l)
				case op < 7:
					for k := range desired {
						delete(desired, k)
						remove(r, k)
						break
					}
				case op < 8:
					if s := r.StatusSnapshot(); len(s.LoadBalancers) > 0 {
						drifted := s.LoadBalancers[rng.IntN(len(s.LoadBalancers))]
						if drifted.RealizedID != "" {
							_ = e.hns.DeleteLoadBalancer(ctx, drifted.RealizedID)
						}
					}
					if err := r.Repair(ctx); err != nil {
						t.Fatal(err)
					}
				default:
					if rng.IntN(3) == 0 {
						e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.AnyOp: 0.3}})
					}
					r.Sync(ctx)
					e.hns.SetFaults(sim.Faults{})
					e.clock.Step(3 * DefaultRetryBase)
				}
				if rng.IntN(4) == 0 {
					t.Run(fmt.Sprint("step", step), func(t *testing.T) { assertSnapshotIsFullStatus(t, r) })
				}
			}
			assertSnapshotIsFullStatus(t, r)
		})
	}
}

// threePods is a node of profile with three local pods, and their IPs.
func threePods(t *testing.T, profile string) (*env, []string) {
	e := newEnv(t, profile)
	locals := []string{"10.244.1.10", "10.244.1.11", "10.244.1.12"}
	for _, ip := range locals {
		e.local(ip)
	}
	return e, locals
}

func distinct(bs []intent.Backend) []intent.Backend {
	seen := map[string]bool{}
	var out []intent.Backend
	for _, b := range bs {
		if !seen[b.IP] {
			seen[b.IP] = true
			out = append(out, b)
		}
	}
	return out
}

func assertSnapshotIsFullStatus(t *testing.T, r *Reconciler) {
	t.Helper()
	s := r.StatusSnapshot()
	lbs, eps := r.Statuses(), r.EndpointStatuses()
	if !reflect.DeepEqual(nilIfEmpty(s.LoadBalancers), nilIfEmpty(lbs)) {
		t.Fatalf("snapshot load balancers\n%+v\nfull walk\n%+v", s.LoadBalancers, lbs)
	}
	if !reflect.DeepEqual(nilIfEmpty(s.RemoteEndpoints), nilIfEmpty(eps)) {
		t.Fatalf("snapshot endpoints\n%+v\nfull walk\n%+v", s.RemoteEndpoints, eps)
	}
	want := countsOf(lbs, eps)
	if got := r.ObjectCounts(); got != want {
		t.Fatalf("ObjectCounts %+v, full walk %+v", got, want)
	}
}

// countsOf is what ObjectCounts gives for a full walk's statuses.
func countsOf(lbs []Status, eps []EndpointStatus) ObjectCounts {
	var want ObjectCounts
	count := func(c *KindCounts, desired bool, state State) {
		if desired {
			c.Desired++
		}
		switch state {
		case StateDone:
			c.Done++
		case StateError:
			c.Failed++
		}
	}
	for _, st := range lbs {
		count(&want.LoadBalancers, st.Desired != nil, st.State)
	}
	for _, st := range eps {
		if st.ShadowedBy != "" && st.RealizedID == "" {
			continue // counted as nothing: neither wanted nor held (nodeunknown.go)
		}
		count(&want.RemoteEndpoints, st.Desired, st.State)
	}
	return want
}

func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

// A read folds in only the kinds the hand-over holds: a change of load
// balancers alone leaves the remote endpoints the last read folded as they
// are, shared, not copied (on overlay at 10,000 Services some 100,000
// statuses, 17 MB, for each read that follows a refused load balancer's
// retry: the observer reads after every such Sync).
func TestAReadCopiesNoKindThatDidNotChange(t *testing.T) {
	e, lbs := fiftyWithOneRemoteEach(t)
	r := e.started(lbs...)
	before := r.StatusSnapshot()
	changed := lbs[7]
	changed.Owner = "default/renamed:80"
	r.Upsert(changed)
	after := r.StatusSnapshot()
	if unsafe.SliceData(after.RemoteEndpoints) != unsafe.SliceData(before.RemoteEndpoints) {
		t.Errorf("a load balancer's change alone had the read copy the %d remote endpoints' statuses", len(after.RemoteEndpoints))
	}
	if unsafe.SliceData(after.LoadBalancers) == unsafe.SliceData(before.LoadBalancers) {
		t.Errorf("the changed load balancers were not folded into a new slice")
	}
	assertSnapshotIsFullStatus(t, r)
}
