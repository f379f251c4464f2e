package reconciler

import (
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// recheckEnv is a started node on profile and echo whose load balancer is
// over the pods 10.244.1.10 (the one whose endpoint is replaced) and
// 10.244.1.11 (the traces' source), its counters reset.
func recheckEnv(t *testing.T, profile string, echo sim.Echo) (*env, *Reconciler, intent.LB) {
	t.Helper()
	e := newEnvSim(t, profile, sim.Options{Echo: echo})
	e.local("10.244.1.10")
	e.local("10.244.1.11")
	r := e.reconciler()
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	want := lb("10.96.0.1", 80, loc("10.244.1.10"))
	upsert(r, want)
	e.converge(r)
	e.assertRealized([]intent.LB{want})
	e.hns.ResetCounters()
	return e, r, want
}

// TestRecheckedLocalEndpointReplacedIsWrittenAtTheNextSync: the pod's
// endpoint was replaced behind its address while the desired load balancer
// stayed the same (its slice went not ready and back between two syncs).
// The Sync after RecheckLocal writes the new endpoint into the load
// balancer, without listing endpoints or load balancers, and a packet from
// a pod to the frontend reaches it. Before, nothing wrote the load balancer
// until a drift repair. Every profile, every echo option.
func TestRecheckedLocalEndpointReplacedIsWrittenAtTheNextSync(t *testing.T) {
	for _, p := range sim.Profiles() {
		for name, echo := range echoProfiles(t) {
			t.Run(p.Name+"/"+name, func(t *testing.T) {
				e, r, want := recheckEnv(t, p.Name, echo)
				if err := e.hns.DeleteEndpoint(ctx, e.locals["10.244.1.10"]); err != nil {
					t.Fatal(err)
				}
				e.local("10.244.1.10")
				upsert(r, want) // unchanged: no write of its own
				r.RecheckLocal([]string{"10.244.1.10"})
				r.Sync(ctx)
				e.assertRealized([]intent.LB{want})
				e.assertServed(want)
				c := e.counters()
				if n := c.Count(sim.OpListEndpoints) + c.Count(sim.OpListLoadBalancers); n != 0 {
					t.Errorf("%d listings of endpoints or load balancers, want none (the namespaces tell)", n)
				}
				if got := c.Count(sim.OpListNamespaces); got != 1 {
					t.Errorf("%d namespace listings, want 1", got)
				}
			})
		}
	}
}

// TestRecheckedLocalEndpointUnchangedWritesNothing: a pod whose readiness
// dropped and came back with its endpoint kept (a failing readiness probe)
// costs one get of its endpoint, no listing and no write; an address with
// no endpoint indexed costs nothing.
func TestRecheckedLocalEndpointUnchangedWritesNothing(t *testing.T) {
	for _, p := range sim.Profiles() {
		t.Run(p.Name, func(t *testing.T) {
			e, r, want := recheckEnv(t, p.Name, sim.Echo{})
			r.RecheckLocal([]string{"10.244.1.10", "10.244.1.99"}) // .99: no endpoint indexed
			r.Sync(ctx)
			e.assertRealized([]intent.LB{want})
			c := e.counters()
			if c.Writes() != 0 || c.Lists() != 0 || c.Count(sim.OpGetEndpoint) != 1 {
				t.Errorf("calls %+v, want one get of the endpoint, no listing and no write", c.Calls)
			}
		})
	}
}

// TestRecheckedLocalEndpointGoneIsNotWrittenAgain: the usual pace, a sync
// seeing each state. The sync that sees the pod not ready (its endpoint
// deleted with its sandbox) finds the endpoint in no namespace and gone
// from HNS, and drops it from the index; the sync that sees it ready again
// finds the new endpoint in its namespace and writes it at once. Before,
// that write named the old endpoint, failed, and the pod was served only
// at the retry a second later, after an error logged for a routine pod
// restart.
func TestRecheckedLocalEndpointGoneIsNotWrittenAgain(t *testing.T) {
	for _, p := range sim.Profiles() {
		t.Run(p.Name, func(t *testing.T) {
			e, r, want := recheckEnv(t, p.Name, sim.Echo{})
			if err := e.hns.DeleteEndpoint(ctx, e.locals["10.244.1.10"]); err != nil {
				t.Fatal(err)
			}
			r.Delete(want.Key) // its one backend not ready
			r.RecheckLocal([]string{"10.244.1.10"})
			r.Sync(ctx)
			e.local("10.244.1.10")
			upsert(r, want)
			if res := r.Sync(ctx); res.Failed != 0 || res.Pending != 0 {
				t.Errorf("sync %+v, want the pod's new endpoint written at once", res)
			}
			e.assertRealized([]intent.LB{want})
			e.assertServed(want)
		})
	}
}

// TestRecheckedLocalEndpointHNSCouldNotTellIsCheckedAgain: the Sync after
// RecheckLocal could not get the pod's endpoint (HNS failing, or the get
// past its deadline), so it could not tell whether the CNI replaced it.
// The address stays to be checked: the next Sync, with HNS answering again,
// finds the endpoint gone and writes the new one, and the Sync after gets
// nothing. Before, the failed get dropped the recheck, the desired load
// balancer was unchanged, and it named the deleted endpoint until a drift
// repair.
func TestRecheckedLocalEndpointHNSCouldNotTellIsCheckedAgain(t *testing.T) {
	for _, p := range sim.Profiles() {
		t.Run(p.Name, func(t *testing.T) {
			e, r, want := recheckEnv(t, p.Name, sim.Echo{})
			replacedWhileHNSFailsGets(t, e, r)
			r.Sync(ctx)
			e.hns.SetFaults(sim.Faults{})
			r.Sync(ctx)
			e.assertRealized([]intent.LB{want})
			e.assertServed(want)
			e.hns.ResetCounters()
			r.Sync(ctx) // answered: nothing is left to check
			if n := e.counters().Count(sim.OpGetEndpoint); n != 0 {
				t.Errorf("%d gets of endpoints after HNS answered, want 0", n)
			}
		})
	}
}

// TestUnansweredRecheckIsAskedAgainAtItsRetry: a recheck whose get HNS
// could not answer schedules a retry of its own, one RetryBase later and
// growing while HNS stays silent, as a failed write does. Its load
// balancer's desired document is unchanged, so nothing else would run a
// Sync before the periodic one (30 s by default) or the next change.
func TestUnansweredRecheckIsAskedAgainAtItsRetry(t *testing.T) {
	for _, p := range sim.Profiles() {
		t.Run(p.Name, func(t *testing.T) {
			e, r, want := recheckEnv(t, p.Name, sim.Echo{})
			replacedWhileHNSFailsGets(t, e, r)
			var waits []time.Duration
			for range 3 {
				r.Sync(ctx)
				next, ok := r.NextRetry()
				if !ok {
					t.Fatal("no retry scheduled for a recheck HNS could not answer")
				}
				waits = append(waits, next.Sub(e.clock.Now()))
				e.clock.Step(next.Sub(e.clock.Now()))
			}
			if waits[0] > r.opts.RetryBase || !(waits[0] < waits[1] && waits[1] < waits[2]) {
				t.Errorf("waits before asking again %v, want the first within RetryBase (%v), then growing", waits, r.opts.RetryBase)
			}
			e.hns.SetFaults(sim.Faults{})
			r.Sync(ctx)
			e.assertRealized([]intent.LB{want})
			e.assertServed(want)
			if next, ok := r.NextRetry(); ok {
				t.Errorf("a retry at %v after HNS answered, want none", next)
			}
		})
	}
}

// TestReturnedLocalEndpointIsWrittenAtTheNextSync: under
// publishNotReadyAddresses the load balancer keeps wanting a pod whose
// sandbox is made again. The Sync that finds its old endpoint gone finds
// no new one yet, nor does the listing it asks for; once the pod is back,
// LocalReturned has the next Sync find the new endpoint in its namespace
// and write it. Before, the load balancer waited for its retry's backoff.
func TestReturnedLocalEndpointIsWrittenAtTheNextSync(t *testing.T) {
	for _, p := range sim.Profiles() {
		t.Run(p.Name, func(t *testing.T) {
			e, r, want := recheckEnv(t, p.Name, sim.Echo{})
			recheckedPodAway(t, e, r)
			r.Sync(ctx)
			e.local("10.244.1.10")
			r.LocalReturned([]string{"10.244.1.10", "10.244.1.11"}) // .11: indexed, costs nothing
			r.Sync(ctx)
			e.assertRealized([]intent.LB{want})
			e.assertServed(want)
		})
	}
}

// TestReturnedLocalEndpointNotMadeYetIsLookedForSoon: the pod came back to
// serving while the CNI's ADD of its new endpoint still ran, so the Sync
// LocalReturned marks its load balancer for finds no endpoint, nor does the
// listing after it. Its load balancer had waited through the pod's whole
// absence, so its backoff had grown to RetryMax. The return starts that
// backoff over: the retry one RetryBase later finds the endpoint the ADD
// made meanwhile in its namespace and writes it. Before, the return was
// spent on the one Sync and the load balancer waited for the backoff it had
// before (up to RetryMax, 2 minutes by default).
func TestReturnedLocalEndpointNotMadeYetIsLookedForSoon(t *testing.T) {
	for _, p := range sim.Profiles() {
		t.Run(p.Name, func(t *testing.T) {
			e, r, want := recheckEnv(t, p.Name, sim.Echo{})
			recheckedPodAway(t, e, r)
			for range 8 { // the pod away: its load balancer's backoff grows to RetryMax
				next, ok := r.NextRetry()
				if !ok {
					t.Fatal("no retry while the load balancer waits for its pod")
				}
				e.clock.Step(next.Sub(e.clock.Now()))
				syncThenLookup(t, r)
			}
			r.LocalReturned([]string{"10.244.1.10"})
			syncThenLookup(t, r)
			e.local("10.244.1.10") // the ADD ends
			e.clock.Step(r.opts.RetryBase)
			r.Sync(ctx)
			e.assertRealized([]intent.LB{want})
			e.assertServed(want)
		})
	}
}

// recheckedPodAway deletes the endpoint of the pod at 10.244.1.10, as its
// dead sandbox's DEL does, while publishNotReadyAddresses keeps the pod in
// its load balancer: the Sync after RecheckLocal finds the endpoint gone
// and no new one, nor does the listing it asks for.
func recheckedPodAway(t *testing.T, e *env, r *Reconciler) {
	t.Helper()
	if err := e.hns.DeleteEndpoint(ctx, e.locals["10.244.1.10"]); err != nil {
		t.Fatal(err)
	}
	r.RecheckLocal([]string{"10.244.1.10"})
	if res := r.Sync(ctx); res.Pending == 0 {
		t.Fatalf("sync %+v, want the load balancer waiting for its pod", res)
	}
	if err := r.Lookup(ctx); err != nil {
		t.Fatal(err)
	}
}

// replacedWhileHNSFailsGets replaces the endpoint of 10.244.1.10 as the
// CNI does a recreated sandbox's, has it rechecked, and has HNS fail every
// get of an endpoint from then on.
func replacedWhileHNSFailsGets(t *testing.T, e *env, r *Reconciler) {
	t.Helper()
	if err := e.hns.DeleteEndpoint(ctx, e.locals["10.244.1.10"]); err != nil {
		t.Fatal(err)
	}
	e.local("10.244.1.10")
	r.RecheckLocal([]string{"10.244.1.10"})
	e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpGetEndpoint: 1}})
}

// syncThenLookup is a Sync, and the Lookup the proxier starts when it
// wants a listing.
func syncThenLookup(t *testing.T, r *Reconciler) {
	t.Helper()
	if r.Sync(ctx).ListingWanted {
		if err := r.Lookup(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// A pod back to serving whose new endpoint no namespace shows (the runtime
// attaches it after the CNI made it) is looked for by a listing its return
// asks for. The listing after the pod went did not show it, which left its
// address to the drift repair alone; the return clears that, or the load
// balancer went without the pod until the next repair period.
func TestReturnedLocalEndpointOutsideNamespacesIsLookedForByAListing(t *testing.T) {
	for _, p := range sim.Profiles() {
		t.Run(p.Name, func(t *testing.T) {
			e, r, want := recheckEnv(t, p.Name, sim.Echo{})
			recheckedPodAway(t, e, r)
			e.localOutsideNamespace("10.244.1.10")
			r.LocalReturned([]string{"10.244.1.10"})
			if res := r.Sync(ctx); !res.ListingWanted {
				t.Fatalf("sync after the pod's return %+v, want a listing asked for its endpoint", res)
			}
			if err := r.Lookup(ctx); err != nil {
				t.Fatal(err)
			}
			r.Sync(ctx)
			e.assertRealized([]intent.LB{want})
			e.assertServed(want)
		})
	}
}
