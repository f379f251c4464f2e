package reconciler

import (
	"errors"
	"slices"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// TestChangesDoNotWaitForWhatOnlyAListingTells: in every situation where an
// object needs a listing of HNS (a new tenant frontend to check, a create
// refused as taken, a create whose reply was lost, an endpoint address
// taken), the Sync lists neither load balancers nor endpoints: the object
// waits for the next Repair, and a change beside it is programmed in the
// same Sync. At 10,000 Services such a listing is seconds of hcn calls
// that every change would wait behind. After the Repair, everything
// converges, with nothing duplicated.
func TestChangesDoNotWaitForWhatOnlyAListingTells(t *testing.T) {
	for _, tc := range []struct {
		name string
		// make sets up the situation and returns the object that waits
		// (a load balancer key, or "" with ip for an endpoint).
		make func(e *env, r *Reconciler) (wait intent.LBKey, ip string, want []intent.LB)
	}{{
		name: "new tenant frontend",
		make: func(e *env, r *Reconciler) (intent.LBKey, string, []intent.LB) {
			tenant := externalLB("203.0.113.5", 80, loc("10.244.1.10"))
			upsert(r, tenant)
			return tenant.Key, "", []intent.LB{tenant}
		},
	}, {
		name: "create refused as taken",
		make: func(e *env, r *Reconciler) (intent.LBKey, string, []intent.LB) {
			d := lb("10.96.0.30", 443, loc("10.244.1.11"))
			e.foreignOn(withInternalPort(d, 9090), "10.244.1.13") // a leftover: replaced
			upsert(r, d)
			return d.Key, "", []intent.LB{d}
		},
	}, {
		name: "create whose reply was lost",
		make: func(e *env, r *Reconciler) (intent.LBKey, string, []intent.LB) {
			d := lb("10.96.0.30", 443, loc("10.244.1.11"))
			e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpCreateLoadBalancer: 1}, Committed: 1,
				Errors: []hnslb.ErrorCode{hnslb.CodeTimeout}})
			upsert(r, d)
			if res := r.Sync(ctx); res.Failed != 1 {
				e.t.Fatalf("lost reply: %+v", res)
			}
			e.hns.SetFaults(sim.Faults{})
			r.mu.Lock()
			e.clock.SetTime(r.lbs[d.Key].st.nextRetry)
			r.mu.Unlock()
			return d.Key, "", []intent.LB{d}
		},
	}, {
		name: "endpoint address taken",
		make: func(e *env, r *Reconciler) (intent.LBKey, string, []intent.LB) {
			d := lb("10.96.0.30", 443, rem("10.244.3.31", "192.168.0.3"))
			if _, err := e.hns.CreateEndpoint(ctx, e.netID, buildRemoteEndpoint(e.netID, intent.EndpointOf(d.Backends[0]))); err != nil {
				e.t.Fatal(err)
			}
			upsert(r, d)
			return intent.LBKey{}, "10.244.3.31", []intent.LB{d}
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, sim.ProfileWS2022)
			e.local("10.244.1.10")
			e.local("10.244.1.11")
			e.local("10.244.1.12")
			r := e.started() // a state file exists: not a takeover
			wait, ip, want := tc.make(e, r)
			beside := lb("10.96.0.99", 80, loc("10.244.1.12"))
			upsert(r, beside)

			before := e.fullListings()
			res := r.Sync(ctx)
			if n := e.fullListings() - before; n != 0 || !res.ListingWanted {
				t.Fatalf("sync %+v listed load balancers or endpoints %d times; want none, and a listing asked", res, n)
			}
			if st := statusOf(r, beside.Key); st.State != StateDone || st.RealizedID == "" {
				t.Errorf("the change beside waited: %+v", st)
			}
			var awaited *AwaitingListingError
			if st := waitingStatus(r, wait, ip); st.state != StatePending || !errors.As(st.lastErr, &awaited) {
				t.Errorf("the waiting object's status %+v, want pending on an AwaitingListingError", st)
			}
			if res.Failed != 0 {
				t.Errorf("waiting counted as a failure: %+v", res)
			}
			// No retry makes it list: the next Sync waits too, asking nothing new.
			e.clock.Step(DefaultRetryMax)
			if res := r.Sync(ctx); e.fullListings() != before || !res.ListingWanted {
				t.Errorf("a later sync %+v listed, or no longer asks", res)
			}

			e.converge(r)
			e.assertRealized(append(want, beside))
			for _, d := range append(want, beside) {
				if st := statusOf(r, d.Key); st.State != StateDone {
					t.Errorf("%s: %+v", d.Key, st)
				}
			}
			if res := r.Sync(ctx); res.ListingWanted {
				t.Errorf("after convergence a listing is still asked: %+v", res)
			}
		})
	}
}

// waitingStatus is the status of the load balancer at key, or if key is
// zero of the endpoint at ip.
func waitingStatus(r *Reconciler, key intent.LBKey, ip string) objStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	if key != (intent.LBKey{}) {
		return r.lbs[key].st
	}
	return r.eps[ip].st
}

// TestFrontendTakenByNothing: HNS refuses a frontend as taken while no load
// balancer holds it (a host socket on the port, kubernetes/community#8883;
// a node port's reservation kept after its load balancer's delete,
// kubernetes/kubernetes#137530). One listing, asked after the refusal, shows
// no holder; from then on the load balancer fails with a
// FrontendHeldByNothingError and is retried with backoff, with no listing
// of its own; once the port is free the retry creates it.
func TestFrontendTakenByNothing(t *testing.T) {
	for _, d := range []intent.LB{
		lb("10.96.0.30", 10256, loc("10.244.1.11")),
		externalLB("203.0.113.5", 10256, loc("10.244.1.11")),
	} {
		t.Run(d.Origin.String(), func(t *testing.T) {
			e := newEnv(t, sim.ProfileWS2019)
			e.local("10.244.1.11")
			r := e.started()
			e.hns.SetFaults(sim.Faults{TakenPorts: []sim.TakenPort{{Protocol: hnslb.ProtocolTCP, Port: 10256}}})
			upsert(r, d)
			for i, res := 0, r.Sync(ctx); res.ListingWanted; i, res = i+1, r.Sync(ctx) {
				if i == silentListings+2 { // the tenant's check, the refusal's silentListings, and one spare
					t.Fatalf("still asking for listings after %d: %+v", i, res)
				}
				if err := r.Repair(ctx); err != nil {
					t.Fatal(err)
				}
			}
			listings := e.counters().Count(sim.OpListLoadBalancers)
			// The tenant frontend's check, and the refusal's: silentListings
			// listings that show no holder, as one may leave it out.
			if listings < silentListings || listings > 1+silentListings {
				t.Errorf("%d load balancer listings, want %d for the refusal and at most one more", listings, silentListings)
			}
			var nothing *FrontendHeldByNothingError
			st := waitingStatus(r, d.Key, "")
			if st.state != StateError || !errors.As(st.lastErr, &nothing) {
				t.Fatalf("status %+v, want a FrontendHeldByNothingError", st)
			}
			first := st.lastErr.Error()
			if st, err := loadState(e.stateFile); err != nil || slices.Contains(st.CreatingLoadBalancers, d.Key) && !d.Origin.Allocated() {
				t.Errorf("the refused tenant frontend stays declared: %+v, %v", st, err)
			}
			// Retries list nothing and ask for no listing.
			for range 3 {
				next, ok := r.NextRetry()
				if !ok {
					t.Fatal("no retry scheduled")
				}
				e.clock.SetTime(next)
				res := r.Sync(ctx)
				// One error, the same each time: the event it raises is
				// raised once (HNSLoadBalancerRejected, once per error).
				if res.ListingWanted || e.counters().Count(sim.OpListLoadBalancers) != listings || len(res.Errors) != 1 ||
					!errors.As(res.Errors[0].Err, &nothing) || res.Errors[0].Err.Error() != first {
					t.Fatalf("retry %+v, listings %d (was %d)", res, e.counters().Count(sim.OpListLoadBalancers), listings)
				}
			}
			e.hns.SetFaults(sim.Faults{})
			next, _ := r.NextRetry()
			e.clock.SetTime(next)
			if res := r.Sync(ctx); res.Failed != 0 || res.Created != 1 {
				t.Fatalf("after the port was freed: %+v", res)
			}
			e.assertRealized([]intent.LB{d})
		})
	}
}

// tenantAsking is a started reconciler with a new tenant frontend that
// waits for the listing that checks it.
func tenantAsking(t *testing.T) (*env, *Reconciler, intent.LB) {
	t.Helper()
	e := newEnv(t, sim.ProfileWS2022)
	e.local("10.244.1.10")
	r := e.started()
	tenant := externalLB("203.0.113.5", 80, loc("10.244.1.10"))
	upsert(r, tenant)
	if res := r.Sync(ctx); !res.ListingWanted {
		t.Fatalf("sync %+v, want the new frontend waiting for its check", res)
	}
	return e, r, tenant
}

// tenantChecked is tenantAsking after a repair's listing checked the
// frontend and found it free; it is not created yet.
func tenantChecked(t *testing.T) (*env, *Reconciler, intent.LB) {
	t.Helper()
	e, r, tenant := tenantAsking(t)
	if err := r.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	return e, r, tenant
}

// TestHolderAfterTheCheckIsLookedUpAnew: a foreign load balancer made on a
// tenant frontend after the listing that found it free refuses the create;
// that refusal asks a listing of its own (the check's answer predates it),
// which finds the holder: reported as foreign, never taken for nothing.
func TestHolderAfterTheCheckIsLookedUpAnew(t *testing.T) {
	e, r, tenant := tenantChecked(t)
	id := e.foreignOn(withInternalPort(tenant, 9090), "10.244.1.20")
	res := r.Sync(ctx)
	if !res.ListingWanted || res.Failed != 0 || e.counters().CountResult(sim.OpCreateLoadBalancer, "PortAlreadyExists") != 1 {
		t.Fatalf("sync after the foreign one appeared: %+v, want the refusal waiting for a listing", res)
	}
	res = e.answer(r, res)
	var held *ForeignFrontendError
	if len(res.Errors) != 1 || !errors.As(res.Errors[0], &held) || held.ID != id || !e.hasLB(id) {
		t.Fatalf("result %+v, want the foreign holder %s reported and left", res, id)
	}
}

// TestLookupAskedDuringAListingWaitsForTheNext: a listing under way when a
// Sync asks answers nothing for it: it may predate what the Sync asks
// about. Here a create on a tenant frontend loses its reply while a
// repair's listing, which read HNS before the create, is held. Taken as
// the answer, that listing would say the lost create made nothing; its
// load balancer would then be met as a foreign holder of the frontend and
// kept apart for good. Answered by the next listing, it is adopted.
func TestLookupAskedDuringAListingWaitsForTheNext(t *testing.T) {
	e, r, tenant := tenantChecked(t)
	repaired := make(chan error, 1)
	e.hns.SetFaults(sim.Faults{HangReply: []sim.Op{sim.OpListLoadBalancers}})
	go func() { repaired <- r.Repair(ctx) }()
	if err := e.hns.WaitHeld(ctx, 1); err != nil {
		t.Fatal(err)
	}
	e.hns.SetFaults(sim.Faults{HangReply: []sim.Op{sim.OpListLoadBalancers}, ErrorRate: map[sim.Op]float64{sim.OpCreateLoadBalancer: 1},
		Committed: 1, Errors: []hnslb.ErrorCode{hnslb.CodeTimeout}})
	if res := r.Sync(ctx); res.Failed != 1 || e.hnsLB(tenant.Key) == nil {
		t.Fatalf("sync during the listing: %+v, want the create made and its reply lost", res)
	}
	e.hns.SetFaults(sim.Faults{HangReply: []sim.Op{sim.OpListLoadBalancers}})
	if next, ok := r.NextRetry(); ok {
		e.clock.SetTime(next) // a second: within the listing's deadline
	}
	if res := r.Sync(ctx); !res.ListingWanted {
		t.Fatalf("sync after the lost reply: %+v, want it waiting for a listing", res)
	}
	e.hns.SetFaults(sim.Faults{})
	if err := <-repaired; err != nil {
		t.Fatal(err)
	}
	e.converge(r)
	if st := statusOf(r, tenant.Key); st.State != StateDone {
		t.Fatalf("status %+v, want the lost create adopted", st)
	}
	e.assertRealized([]intent.LB{tenant})
}

// TestLookupListsOnlyWhatIsAsked: a Lookup lists load balancers for
// frontend questions and the network's endpoints for address and local
// endpoint questions, nothing when nothing is asked, and judges no drift (a
// load balancer deleted out of band waits for the drift repair).
func TestLookupListsOnlyWhatIsAsked(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	want := e.threeServices()
	r := e.started(want...)
	if err := e.hns.DeleteLoadBalancerOutOfBand(e.hnsLB(want[0].Key).ID); err != nil {
		t.Fatal(err)
	}
	lists := func() (lbs, eps int) {
		c := e.counters()
		return c.Count(sim.OpListLoadBalancers), c.Count(sim.OpListEndpoints)
	}
	if err := r.Lookup(ctx); err != nil {
		t.Fatal(err)
	}
	if lbs, eps := lists(); lbs+eps != 0 {
		t.Errorf("a lookup with nothing asked listed %d load balancer and %d endpoint listings", lbs, eps)
	}

	// asked upserts d, whose Sync must ask a listing, and runs the Lookup.
	asked := func(d intent.LB) {
		t.Helper()
		upsert(r, d)
		if res := r.Sync(ctx); !res.ListingWanted {
			t.Fatalf("sync %+v", res)
		}
		if err := r.Lookup(ctx); err != nil {
			t.Fatal(err)
		}
	}
	tenant := externalLB("203.0.113.5", 80, loc("10.244.1.10"))
	asked(tenant)
	if lbs, eps := lists(); lbs != 1 || eps != 0 {
		t.Errorf("a frontend's lookup made %d load balancer and %d endpoint listings, want 1 and 0", lbs, eps)
	}

	e.localOutsideNamespace("10.244.1.30")
	outside := lb("10.96.0.40", 80, loc("10.244.1.30"))
	asked(outside)
	if lbs, eps := lists(); lbs != 1 || eps != 1 {
		t.Errorf("a local endpoint's lookup made %d load balancer and %d endpoint listings in all, want 1 and 1", lbs, eps)
	}
	if res := r.Sync(ctx); res.ListingWanted || res.Failed != 0 {
		t.Fatalf("sync after the lookups: %+v", res)
	}
	if e.hnsLB(want[0].Key) != nil {
		t.Fatal("a lookup repaired drift")
	}
	e.assertRealized(append(want[1:], tenant, outside))
}

// TestLookupOfABusyObjectAsksNoListing: a lookup whose object an abandoned
// HNS call may still change is not answered until the call returns, so
// until then no listing is asked for it (a listing would answer nothing,
// and the proxier would start one after another).
func TestLookupOfABusyObjectAsksNoListing(t *testing.T) {
	_, r, tenant := tenantAsking(t)
	r.client.mu.Lock()
	if r.client.abandoned == nil {
		r.client.abandoned = map[string]int{}
	}
	r.client.abandoned[lbToken(tenant.Key)]++ // as a call past its deadline
	r.client.mu.Unlock()
	if res := r.Sync(ctx); res.ListingWanted {
		t.Errorf("sync %+v asks a listing for a busy object", res)
	}
	r.client.mu.Lock()
	r.client.abandoned[lbToken(tenant.Key)]--
	r.client.mu.Unlock()
	if res := r.Sync(ctx); !res.ListingWanted {
		t.Errorf("sync %+v, want the listing asked again once the call returned", res)
	}
}
