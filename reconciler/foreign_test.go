package reconciler

import (
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// externalLB is lb with a tenant-chosen frontend (spec.externalIPs).
func externalLB(vip string, port uint16, backends ...intent.Backend) intent.LB {
	d := lb(vip, port, backends...)
	d.Origin = intent.OriginExternalIP
	return d
}

// foreignOn creates a load balancer on d's frontend as another agent would:
// not in hnsproxy's state file. identical makes it the document hnsproxy
// would write for d (with the local backend ip).
func (e *env) foreignOn(d intent.LB, ip string) string {
	e.t.Helper()
	doc := BuildLB(&d, []string{e.local(ip)})
	got, err := e.hns.CreateLoadBalancer(ctx, doc)
	if err != nil {
		e.t.Fatal(err)
	}
	return got.ID
}

func (e *env) hasLB(id string) bool {
	_, err := e.hns.GetLoadBalancerByID(ctx, id)
	return err == nil
}

// tenantAndTheirs is a tenant's external IP load balancer and another
// agent's on its frontend: identical to it but for whose it is, or with
// another backend port.
func tenantAndTheirs(identical bool) (tenant, theirs intent.LB) {
	tenant = externalLB("203.0.113.5", 80, loc("10.244.1.60"))
	theirs = tenant
	theirs.Origin = intent.OriginUnknown
	if !identical {
		theirs.InternalPort = 9090
	}
	return tenant, theirs
}

// heldByAnother has r want a tenant frontend that another agent's load
// balancer (its ID returned) holds, and syncs until r met it.
func (e *env) heldByAnother(r *Reconciler) (tenant intent.LB, id string) {
	e.t.Helper()
	tenant, theirs := tenantAndTheirs(false)
	id = e.foreignOn(theirs, "10.244.1.60")
	upsert(r, tenant)
	if res := e.syncListed(r); len(res.ForeignHeld) != 1 {
		e.t.Fatalf("the foreign holder was not met: %+v", res)
	}
	return tenant, id
}

// eachLikeness runs f as a subtest for another agent's load balancer that
// differs from hnsproxy's, and for one identical to it.
func eachLikeness(t *testing.T, f func(t *testing.T, identical bool)) {
	for _, identical := range []bool{false, true} {
		name := "different"
		if identical {
			name = "identical"
		}
		t.Run(name, func(t *testing.T) { f(t, identical) })
	}
}

// TestForeignLoadBalancerOnATenantFrontendIsNeverDeleted (F1): a namespace
// user sets an external IP on the frontend of a load balancer hnsproxy does
// not own. hnsproxy reports it and keeps away, during and after the
// Service's life, whether the foreign one differs or is identical.
func TestForeignLoadBalancerOnATenantFrontendIsNeverDeleted(t *testing.T) {
	eachLikeness(t, func(t *testing.T, identical bool) {
		e := newEnv(t, sim.ProfileWS2022)
		want := e.threeServices()
		r := e.started(want...) // a state file exists: not a first start
		tenant, theirs := tenantAndTheirs(identical)
		id := e.foreignOn(theirs, "10.244.1.60")

		upsert(r, tenant)
		res := e.syncListed(r)
		var held *ForeignFrontendError
		if len(res.Errors) != 1 || !errors.As(res.Errors[0], &held) || held.ID != id || held.Key != tenant.Key {
			t.Fatalf("errors %v, want one ForeignFrontendError on %s", res.Errors, id)
		}
		if want := []ForeignFrontend{{Key: tenant.Key, ID: id}}; !reflect.DeepEqual(res.ForeignHeld, want) {
			t.Errorf("ForeignHeld = %+v, want %+v", res.ForeignHeld, want)
		}
		if c := e.counters(); c.Count(sim.OpDeleteLoadBalancer) != 0 || !e.hasLB(id) {
			t.Fatalf("the foreign load balancer was touched: %v", c.Calls)
		}
		// It was never declared as a create of ours (the Sync looked for
		// a holder first): a crash at any point must not make the next
		// Start claim it.
		if st, err := loadState(e.stateFile); err != nil || slices.Contains(st.CreatingLoadBalancers, tenant.Key) {
			t.Errorf("state file declares the held frontend: %+v, %v", st, err)
		}
		for _, f := range []string{e.stateFile, journalPath(e.stateFile)} {
			if raw, _ := os.ReadFile(f); strings.Contains(string(raw), tenant.Key.VIP) {
				t.Errorf("%s mentions the held frontend: %s", f, raw)
			}
		}
		restarted := e.reconciler()
		if err := restarted.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if _, owned := restarted.ownedLBs[id]; owned {
			t.Fatal("a restart claimed the foreign load balancer")
		}
		// Retries keep reporting it, and keep away (one Get, no create).
		e.hns.ResetCounters()
		e.clock.Step(DefaultRetryMax)
		if res := r.Sync(ctx); len(res.ForeignHeld) != 1 || !e.hasLB(id) || e.counters().Count(sim.OpCreateLoadBalancer) != 0 {
			t.Fatalf("retry: %+v, calls %v", res, e.counters().Calls)
		}
		// The Service goes: the foreign load balancer stays, nothing is held.
		remove(r, tenant.Key)
		if res := r.Sync(ctx); len(res.ForeignHeld) != 0 || !e.hasLB(id) {
			t.Fatalf("after the Service left: %+v, foreign present %v", res, e.hasLB(id))
		}
		for _, d := range want {
			if e.hnsLB(d.Key) == nil {
				t.Errorf("%s lost", d.Key)
			}
		}
	})
}

// TestAForeignHolderHNSCannotReadIsStillHeld: a retry of a frontend a
// foreign load balancer held reads that one by ID; where HNS answers an
// error other than not found, it may still be there, so the frontend stays
// held: nothing is declared (a crash after declaring it would have the next
// Start claim the foreign one) and nothing is created.
func TestAForeignHolderHNSCannotReadIsStillHeld(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	r := e.started(e.threeServices()...)
	tenant, id := e.heldByAnother(r)
	e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpGetLoadBalancer: 1},
		Codes: map[sim.Op][]hnslb.ErrorCode{sim.OpGetLoadBalancer: {hnslb.CodeInvalidParameter}}})
	e.hns.ResetCounters()
	e.clock.Step(DefaultRetryMax)
	res := r.Sync(ctx)
	c := e.counters()
	e.hns.SetFaults(sim.Faults{})
	if c.Count(sim.OpCreateLoadBalancer) != 0 || len(res.ForeignHeld) != 1 || !e.hasLB(id) {
		t.Fatalf("retry with the holder unreadable: %+v, calls %v", res, c.Calls)
	}
	if st, err := loadState(e.stateFile); err != nil || slices.Contains(st.CreatingLoadBalancers, tenant.Key) {
		t.Errorf("state file declares the held frontend: %+v, %v", st, err)
	}
}

// TestForeignLoadBalancerMadeAfterItsFrontendWasCheckedIsNeverDeleted: a
// listing found a new tenant frontend free, and another agent takes it
// before hnsproxy's create: HNS refuses the create as taken, the listing
// that follows shows the foreign holder, and hnsproxy reports it and keeps
// away, as where the first listing had shown it (F1).
func TestForeignLoadBalancerMadeAfterItsFrontendWasCheckedIsNeverDeleted(t *testing.T) {
	eachLikeness(t, func(t *testing.T, identical bool) {
		e := newEnv(t, sim.ProfileWS2022)
		r := e.started(e.threeServices()...)
		tenant, theirs := tenantAndTheirs(identical)
		upsert(r, tenant)
		if res := r.Sync(ctx); !res.ListingWanted {
			t.Fatalf("a new tenant frontend was not checked first: %+v", res)
		}
		if err := r.Lookup(ctx); err != nil { // the frontend is free
			t.Fatal(err)
		}
		id := e.foreignOn(theirs, "10.244.1.60")
		res := e.syncListed(r) // refused as taken; the listing shows the holder
		var held *ForeignFrontendError
		if len(res.Errors) != 1 || !errors.As(res.Errors[0], &held) || held.ID != id || held.Key != tenant.Key {
			t.Fatalf("errors %v, want one ForeignFrontendError on %s", res.Errors, id)
		}
		if c := e.counters(); c.Count(sim.OpDeleteLoadBalancer) != 0 || !e.hasLB(id) {
			t.Fatalf("the foreign load balancer was touched: %v", c.Calls)
		}
		if _, owned := r.ownedLBs[id]; owned {
			t.Fatal("the foreign load balancer was adopted")
		}
	})
}

// TestWithoutAStateFileAForeignLoadBalancerOnATenantFrontendIsNeverDeleted:
// a reconciler without persistence (Options.StateFile "") has no listing
// check before its creates (findHeldFrontends), so a foreign holder on a
// new tenant frontend is met only as a create HNS refuses as taken; once
// the first Sync's takeover is over, the listing's holder is reported and
// kept, never deleted or adopted.
func TestWithoutAStateFileAForeignLoadBalancerOnATenantFrontendIsNeverDeleted(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	e.tweak = func(o *Options) { o.StateFile = "" }
	r := e.started(e.threeServices()...)
	tenant, theirs := tenantAndTheirs(false)
	id := e.foreignOn(theirs, "10.244.1.60")
	upsert(r, tenant)
	res := e.syncListed(r)
	var held *ForeignFrontendError
	if len(res.Errors) != 1 || !errors.As(res.Errors[0], &held) || held.ID != id {
		t.Fatalf("errors %v, want one ForeignFrontendError on %s", res.Errors, id)
	}
	if c := e.counters(); c.Count(sim.OpDeleteLoadBalancer) != 0 || !e.hasLB(id) {
		t.Fatalf("the foreign load balancer was touched: %v", c.Calls)
	}
}

// TestForeignLoadBalancerOnAnAllocatedFrontendIsReplaced: a cluster IP or
// node port is the apiserver's to give, so a foreign load balancer on it
// can only be a leftover (kube-proxy's, or ours from a lost state file).
func TestForeignLoadBalancerOnAnAllocatedFrontendIsReplaced(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	want := e.threeServices()
	r := e.started(want[:2]...)
	stale := want[2]
	stale.InternalPort = 9090
	id := e.foreignOn(stale, "10.244.1.60")
	upsert(r, want[2])
	if res := e.syncListed(r); res.Failed != 0 || len(res.ForeignHeld) != 0 || e.hasLB(id) {
		t.Fatalf("result %+v, leftover present %v", res, e.hasLB(id))
	}
	e.assertRealized(want)
}

// TestTakeover: the first start on a node (no state file), or a start
// with a new --takeover token, adopts or replaces foreign load balancers on
// every desired frontend listed at Start, tenant-chosen ones included (the
// previous proxy's). Afterwards foreign ones on such frontends are reported.
func TestTakeover(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	kubeProxys := externalLB("203.0.113.5", 80, loc("10.244.1.60"))
	old := kubeProxys
	old.InternalPort = 9090 // kube-proxy's differs: replaced
	oldID := e.foreignOn(old, "10.244.1.60")
	same := externalLB("203.0.113.6", 80, loc("10.244.1.61"))
	sameID := e.foreignOn(same, "10.244.1.61") // identical: adopted

	r, res := e.start(e.hns, kubeProxys, same)
	if res.Failed != 0 || len(res.ForeignHeld) != 0 || e.hasLB(oldID) || !e.hasLB(sameID) {
		t.Fatalf("first start: %+v; old present %v, identical present %v", res, e.hasLB(oldID), e.hasLB(sameID))
	}
	if got := e.hnsLB(same.Key); got == nil || got.ID != sameID {
		t.Errorf("identical load balancer not adopted: %+v", got)
	}
	// After the first Sync, a foreign one on a tenant frontend is only reported.
	late := externalLB("203.0.113.7", 80, loc("10.244.1.62"))
	lateDoc := late
	lateDoc.InternalPort = 9090
	lateID := e.foreignOn(lateDoc, "10.244.1.62")
	upsert(r, late)
	if res := e.syncListed(r); len(res.ForeignHeld) != 1 || !e.hasLB(lateID) {
		t.Fatalf("after the takeover: %+v", res)
	}

	// A restart with a state file: no takeover, the late one stays.
	_, res = e.start(e.hns, kubeProxys, same, late)
	if len(res.ForeignHeld) != 1 || !e.hasLB(lateID) {
		t.Fatalf("restart: %+v", res)
	}
	// A new token takes over once...
	e.tweak = func(o *Options) { o.Takeover = "migration-1" }
	if _, res = e.start(e.hns, kubeProxys, same, late); len(res.ForeignHeld) != 0 || e.hasLB(lateID) {
		t.Fatalf("takeover token: %+v, late present %v", res, e.hasLB(lateID))
	}
	// ...and not again with the same token.
	againID := e.foreignOn(withInternalPort(externalLB("203.0.113.8", 80, loc("10.244.1.63")), 9090), "10.244.1.63")
	if _, res = e.start(e.hns, kubeProxys, same, late, externalLB("203.0.113.8", 80, loc("10.244.1.63"))); len(res.ForeignHeld) != 1 || !e.hasLB(againID) {
		t.Fatalf("same token again: %+v", res)
	}
	if st, err := loadState(e.stateFile); err != nil || st.Takeover != "migration-1" {
		t.Errorf("state file token = %+v, %v", st, err)
	}
}

func withInternalPort(d intent.LB, port uint16) intent.LB {
	d.InternalPort = port
	return d
}

// TestTakeoverAfterLostOwnership: a corrupt state file means ownership is
// lost, so the start takes over (our own objects became "foreign").
func TestTakeoverAfterLostOwnership(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	e.local("10.244.1.60")
	d := externalLB("203.0.113.5", 80, loc("10.244.1.60"))
	e.started(d)
	if err := os.WriteFile(e.stateFile, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	changed := withInternalPort(d, 9090)
	if _, res := e.start(e.hns, changed); res.Failed != 0 || len(res.ForeignHeld) != 0 {
		t.Fatalf("after a corrupt state file: %+v", res)
	}
	if got := e.hnsLB(d.Key); got == nil || got.PortMappings[0].InternalPort != 9090 {
		t.Errorf("load balancer = %+v", got)
	}
}

// TestATakeoverOutlivesAKillBeforeItsFirstSyncEnds: a takeover (the node's
// first start, or a new --takeover token) acts in the first Sync, but Start
// already writes a snapshot, with the token, which would make the next
// start an ordinary one. hnsproxy killed in between (the proxier waits for
// its informers before the first Sync, and a cold start's is long) then
// lost the takeover for good: kube-proxy's load balancer on a tenant's
// external IP stayed "another agent's" and the Service unprogrammed. The
// snapshot records the takeover as pending until the first Sync ends.
func TestATakeoverOutlivesAKillBeforeItsFirstSyncEnds(t *testing.T) {
	for _, token := range []string{"", "migration-1"} {
		e := newEnv(t, sim.ProfileWS2022)
		var want []intent.LB
		if token != "" {
			want = e.threeServices()
			e.started(want...) // a state file: only the token makes a takeover
			e.tweak = func(o *Options) { o.Takeover = token }
		}
		kubeProxys := externalLB("203.0.113.5", 80, loc("10.244.1.60"))
		want = append(want, kubeProxys)
		old := e.foreignOn(withInternalPort(kubeProxys, 9090), "10.244.1.60")
		killed := e.reconciler()
		upsert(killed, want...)
		if err := killed.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if s := readState(t, e.stateFile); !s.TakeoverPending {
			t.Errorf("token %q: the state file Start wrote does not record the takeover as pending", token)
		}
		// Killed here: no Sync. The restart with the same flags takes over.
		_, res := e.start(e.hns, want...)
		if e.hasLB(old) || len(res.ForeignHeld) != 0 {
			t.Errorf("token %q: first Sync after the restart %+v: kube-proxy's load balancer %s still holds the tenant frontend", token, res.ForeignHeld, old)
		}
		if s := readState(t, e.stateFile); s.TakeoverPending || s.Takeover != token {
			t.Errorf("token %q: after the first Sync the state file records takeover pending %v, token %q", token, s.TakeoverPending, s.Takeover)
		}
	}
}
