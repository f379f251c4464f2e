package reconciler

import (
	"maps"
	"slices"
	"testing"

	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

func TestDriftRepairRecreatesDeletedLoadBalancer(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2025)
	want := e.threeServices()
	r := e.started(want...)
	victim := e.hnsLB(want[1].Key)
	if err := e.hns.DeleteLoadBalancerOutOfBand(victim.ID); err != nil {
		t.Fatal(err)
	}
	// The incremental path does not list, so it cannot notice.
	r.Sync(ctx)
	if c := e.counters(); c.Total() != 0 {
		t.Fatalf("sync without changes made calls: %v", c.Calls)
	}
	if err := r.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	if c := e.counters(); c.Lists() != 2 || c.Writes() != 0 {
		t.Errorf("repair: %v, want 2 lists and no writes", c.Calls)
	}
	res := r.Sync(ctx)
	if res.Created != 1 || e.counters().Writes() != 1 {
		t.Errorf("sync after repair %+v %v", res, e.counters().Calls)
	}
	e.assertRealized(want)
	// Counted once (hnsproxy_drift_repairs_total), and a repair that finds
	// nothing changed counts nothing.
	if err := r.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	if want := map[ObjectKind]int{KindLoadBalancer: 1}; !maps.Equal(e.drifted, want) {
		t.Errorf("drift repairs counted %v, want %v", e.drifted, want)
	}
}

func TestDriftRepairEndpoints(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	want := e.threeServices()
	r := e.started(want...)

	// A remote endpoint deleted by hand (HNS also drops it from load balancers),
	// and a pod recreated by the CNI with the same IP but a new endpoint ID.
	var remoteID string
	for _, ep := range e.snapshot().Endpoints {
		if ep.IsRemote() && ep.IP() == "10.244.3.31" {
			remoteID = ep.ID
		}
	}
	if err := e.hns.DeleteEndpoint(ctx, remoteID); err != nil {
		t.Fatal(err)
	}
	if err := e.hns.DeleteEndpoint(ctx, e.locals["10.244.1.10"]); err != nil {
		t.Fatal(err)
	}
	e.local("10.244.1.10")
	e.hns.ResetCounters()

	if err := r.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	res := r.Sync(ctx)
	// Endpoint recreated; want[2] and want[0] replaced (delete + create on ws2022).
	c := e.counters()
	if c.Count(sim.OpCreateEndpoint) != 1 || c.Count(sim.OpCreateLoadBalancer) != 2 || c.Count(sim.OpDeleteLoadBalancer) != 2 || c.Lists() != 2 {
		t.Errorf("repair sync: %v %+v", c.Calls, res)
	}
	e.assertRealized(want)
	if got := e.hnsLB(want[0].Key).HostComputeEndpoints; !slices.Contains(got, e.locals["10.244.1.10"]) {
		t.Errorf("load balancer uses %v, want the new local endpoint %s", got, e.locals["10.244.1.10"])
	}
	// The remote endpoint, and both load balancers: HNS dropped each
	// deleted endpoint from the one using it.
	if want := map[ObjectKind]int{KindRemoteEndpoint: 1, KindLoadBalancer: 2}; !maps.Equal(e.drifted, want) {
		t.Errorf("drift repairs counted %v, want %v", e.drifted, want)
	}
}

func TestDriftRepairModifiedLoadBalancer(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2025)
	want := e.threeServices()
	r := e.started(want...)
	// Someone modifies our load balancer behind our back.
	got := e.hnsLB(want[0].Key)
	changed := *got
	changed.SourceVIP = "10.244.1.99"
	if _, err := e.hns.UpdateLoadBalancer(ctx, got.ID, &changed); err != nil {
		t.Fatal(err)
	}
	e.hns.ResetCounters()
	if err := r.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	res := r.Sync(ctx)
	// A changed source VIP is replaced, not modified back: whether HNS
	// applies more than backends in a modify is not known.
	c := e.counters()
	if res.Updated != 1 || c.Count(sim.OpUpdateLoadBalancer) != 0 || c.Count(sim.OpDeleteLoadBalancer) != 1 || c.Count(sim.OpCreateLoadBalancer) != 1 {
		t.Errorf("repair of a modified load balancer: %+v %v", res, c.Calls)
	}
	if e.hnsLB(want[0].Key).SourceVIP != want[0].SourceVIP {
		t.Error("source VIP not repaired")
	}
	if want := map[ObjectKind]int{KindLoadBalancer: 1}; !maps.Equal(e.drifted, want) {
		t.Errorf("drift repairs counted %v, want %v", e.drifted, want)
	}
}

func TestMissingLocalBackendIsRetried(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2025)
	e.local("10.244.1.10")
	e.hns.ResetCounters()
	r := e.reconciler()
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	r.Sync(ctx)
	e.hns.ResetCounters()

	// Two load balancers want a pod the CNI has not wired yet.
	a := lb("10.96.0.1", 80, loc("10.244.1.10"), loc("10.244.1.20"))
	b := lb("10.96.0.2", 80, loc("10.244.1.20"))
	upsert(r, a)
	upsert(r, b)
	res := r.Sync(ctx)
	c := e.counters()
	// Namespaces hold no endpoint for 10.244.1.20, so the next listing of
	// the network is asked, once for both load balancers; the Sync lists
	// no more than the namespaces.
	if c.Count(sim.OpListNamespaces) != 1 || c.Count(sim.OpListEndpoints) != 0 || !res.ListingWanted {
		t.Errorf("lists %v, result %+v; want one namespace list and a listing asked", c.Calls, res)
	}
	if res.Created != 1 || res.Pending != 2 || res.Failed != 0 {
		t.Errorf("result %+v", res)
	}
	// The listings do not show it either: once silentListings have looked
	// (one listing's silence is not proof), not asked again until the
	// periodic repair.
	for range silentListings {
		if err := r.Repair(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if c := e.counters(); c.Count(sim.OpListEndpoints) != silentListings {
		t.Errorf("repairs: %v", c.Calls)
	}
	e.hns.ResetCounters()
	if res := r.Sync(ctx); res.ListingWanted || e.counters().Total() != 0 {
		t.Errorf("sync after the listing: %+v, calls %v", res, e.counters().Calls)
	}
	sa, sb := statusOf(r, a.Key), statusOf(r, b.Key)
	if sa.State != StatePending || len(sa.MissingBackends) != 1 || sa.MissingBackends[0] != "10.244.1.20" || sa.RealizedID == "" {
		t.Errorf("status a %+v", sa)
	}
	if sb.State != StatePending || sb.RealizedID != "" {
		t.Errorf("status b %+v", sb)
	}
	// Before the retry is due nothing happens.
	e.hns.ResetCounters()
	r.Sync(ctx)
	if n := e.counters().Total(); n != 0 {
		t.Errorf("sync before retry made %d calls", n)
	}
	e.local("10.244.1.20")
	e.hns.ResetCounters()
	next, ok := r.NextRetry()
	if !ok {
		t.Fatal("no retry scheduled")
	}
	e.clock.SetTime(next)
	res = r.Sync(ctx)
	c = e.counters()
	// The pod's endpoint is in its namespace now: found without listing
	// the network.
	if c.Count(sim.OpListNamespaces) != 1 || c.Count(sim.OpListEndpoints) != 0 ||
		c.Count(sim.OpUpdateLoadBalancer) != 1 || c.Count(sim.OpCreateLoadBalancer) != 1 {
		t.Errorf("retry: %v %+v", c.Calls, res)
	}
	e.assertRealized([]intent.LB{a, b})
	if s := statusOf(r, a.Key); s.State != StateDone || len(s.MissingBackends) != 0 {
		t.Errorf("status after retry %+v", s)
	}
}

func TestLocalBackendVanishesBeforeRepairDeletesEmptyLoadBalancer(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2019)
	e.local("10.244.1.10")
	a := lb("10.96.0.1", 80, loc("10.244.1.10"))
	r := e.started(a)
	if err := e.hns.DeleteEndpoint(ctx, e.locals["10.244.1.10"]); err != nil {
		t.Fatal(err)
	}
	if err := r.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	res := r.Sync(ctx)
	if res.Deleted != 1 || e.hnsLB(a.Key) != nil {
		t.Errorf("a load balancer left without any backend should go: %+v", res)
	}
	if s := statusOf(r, a.Key); s.State != StatePending || s.RealizedID != "" {
		t.Errorf("status %+v", s)
	}
	e.local("10.244.1.10")
	e.converge(r)
	e.assertRealized([]intent.LB{a})
}

// A drift repair between Start and the first Sync, while the desired state
// is still being handed over, deletes nothing of hnsproxy's: until the
// first Sync an Upsert may still claim what Start listed. Taken for leaks,
// the load balancers and endpoints no Upsert had claimed yet were deleted,
// and the Services handed over next were made again, each cut meanwhile.
func TestARepairBeforeTheFirstSyncLeavesWhatUpsertsMayStillClaim(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2019, sim.ProfileWS2025} {
		t.Run(profile, func(t *testing.T) {
			e := newEnv(t, profile)
			want := e.threeServices()
			e.started(want...)
			r := e.reconciler()
			if err := r.Start(ctx); err != nil {
				t.Fatal(err)
			}
			if err := r.Repair(ctx); err != nil {
				t.Fatal(err)
			}
			handOver(r, want, nil)
			e.converge(r)
			if c := e.counters(); c.Writes() != 0 {
				t.Errorf("a repair before the first Sync, then the desired state: HNS calls %v; want no writes", c.Calls)
			}
			e.assertRealized(want)
			e.assertStateFileMatchesHNS()
		})
	}
}

// A load balancer adopted at a restart while a local backend of its has no
// endpoint yet (a pod starting) is left to the first Sync, which records
// what it waits for: taken for done at the adoption, it never named the
// pod as left out, and nothing wrote the pod in once its endpoint came.
func TestALoadBalancerAdoptedWithoutABackendsEndpointStillWaitsForIt(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	e.local("10.244.1.10")
	e.started(lb("10.96.0.10", 80, loc("10.244.1.10")))
	want := lb("10.96.0.10", 80, loc("10.244.1.10"), loc("10.244.1.11"))
	r, res := e.start(e.hns, want)
	if len(res.LeftOut) != 1 || res.LeftOut[0].Key != want.Key {
		t.Errorf("first Sync after the restart %+v, want %s leaving out 10.244.1.11", res, want.Key)
	}
	e.local("10.244.1.11") // the pod's endpoint comes
	if err := r.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	e.converge(r)
	e.assertRealized([]intent.LB{want})
}
