package reconciler

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// TestProbeSeesObjectsDeletedBehindItsBack: a runbook deletes every load
// balancer (Get-HnsPolicyList | Remove-HnsPolicyList) or every endpoint
// (Get-HnsEndpoint | Remove-HnsEndpoint) on a node where nothing changes.
// Only a listing tells what went, and the drift repair lists every
// --drift-repair-period (5 minutes); kube-proxy makes none again until its
// Service changes. The Sync's probe (one load balancer and one endpoint
// of hnsproxy's read by ID every networkProbeInterval) meets one gone, and
// the Sync reports it (ObjectsGone) for the caller to list at once; with
// the network in place it is no network change. Nothing is reported
// between probes or while nothing went.
func TestProbeSeesObjectsDeletedBehindItsBack(t *testing.T) {
	for _, what := range []string{"load balancers", "endpoints"} {
		t.Run(what, func(t *testing.T) {
			e := newEnv(t, sim.ProfileWS2022)
			e.named()
			svc := lb("10.96.0.10", 80, rem("10.244.2.10", "192.168.1.2"))
			r := e.started(svc)
			e.clock.Step(networkProbeInterval)
			if res := r.Sync(ctx); res.ObjectsGone || res.NetworkChanged != nil {
				t.Fatalf("with everything in place: %+v", res)
			}
			snap := e.hns.Snapshot()
			if what == "load balancers" {
				for _, l := range snap.LoadBalancers {
					if err := e.hns.DeleteLoadBalancerOutOfBand(l.ID); err != nil {
						t.Fatal(err)
					}
				}
			} else {
				for _, ep := range snap.Endpoints {
					if err := e.hns.DeleteEndpoint(ctx, ep.ID); err != nil {
						t.Fatal(err)
					}
				}
			}
			if res := r.Sync(ctx); res.ObjectsGone {
				t.Fatal("reported before the probe was due")
			}
			e.clock.Step(networkProbeInterval)
			res := r.Sync(ctx)
			if !res.ObjectsGone || res.NetworkChanged != nil {
				t.Fatalf("a probe interval after the %s went: %+v; want ObjectsGone and no network change", what, res)
			}
			if err := r.Repair(ctx); err != nil {
				t.Fatal(err)
			}
			e.converge(r)
			e.assertRealized([]intent.LB{svc})
		})
	}
}

// TestProbeReportsAnObjectHNSKeepsListingOnce: an HNS whose read by ID
// answers "not found" for load balancers its listing still shows (no such
// HNS is known) gets one listing from the probe, not one every probe,
// whichever of the node's load balancers each probe reads.
func TestProbeReportsAnObjectHNSKeepsListingOnce(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	r := e.started(severalServices(8)...)
	e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpGetLoadBalancer: 1}, Errors: []hnslb.ErrorCode{hnslb.CodeNotFound}})
	reported := 0
	for range 6 {
		e.clock.Step(networkProbeInterval)
		if r.Sync(ctx).ObjectsGone {
			reported++
			if err := r.Repair(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if reported != 1 {
		t.Errorf("reported %d times, want once", reported)
	}
}

// TestProbeReportsARunbookOnceWhileItsRepairRuns: every load balancer
// deleted (Get-HnsPolicyList | Remove-HnsPolicyList) is reported by the
// first probe that meets one gone. The listing it asks for takes minutes
// on a large node, and the probes meanwhile meet other load balancers of
// the same deletion gone: reported again, each would have the proxier list
// all of HNS once more after the first listing. Once a listing has found
// them gone, the next deletion is reported again.
func TestProbeReportsARunbookOnceWhileItsRepairRuns(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	want := severalServices(8)
	r := e.started(want...)
	deleteAll := func() {
		for _, l := range e.hns.Snapshot().LoadBalancers {
			if err := e.hns.DeleteLoadBalancerOutOfBand(l.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	deleteAll()
	reported := 0
	for range 6 { // the listing asked for has not ended yet
		e.clock.Step(networkProbeInterval)
		if r.Sync(ctx).ObjectsGone {
			reported++
		}
	}
	if reported != 1 {
		t.Fatalf("one deletion reported %d times before its listing ended, want once", reported)
	}
	if err := r.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	e.converge(r)
	e.assertRealized(want)
	deleteAll()
	e.clock.Step(networkProbeInterval)
	if !r.Sync(ctx).ObjectsGone {
		t.Error("a deletion after the listing repaired the last one was not reported")
	}
}

// severalServices are n load balancers, each with one remote backend.
func severalServices(n int) []intent.LB {
	lbs := make([]intent.LB, n)
	for i := range lbs {
		lbs[i] = lb(fmt.Sprintf("10.96.0.%d", 10+i), 80, rem(fmt.Sprintf("10.244.2.%d", 10+i), "192.168.1.2"))
	}
	return lbs
}

// TestProbeWaitsWhileACallHangs: while an HNS call hangs (abandoned at its
// deadline and not returned), or HNS is down, the probe makes no call: its
// reads would hang too, each holding the Sync for the call deadline and
// taking one of the abandoned calls' places, or be refused.
func TestProbeWaitsWhileACallHangs(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	r := e.started(lb("10.96.0.10", 80, rem("10.244.2.10", "192.168.1.2")))
	reads := func() int { c := e.counters(); return c.Count(sim.OpGetLoadBalancer) + c.Count(sim.OpGetEndpoint) }
	due := func() { r.mu.Lock(); r.probeAt = time.Time{}; r.mu.Unlock() }
	r.client.mu.Lock()
	r.client.total++ // one call abandoned and running in HNS
	r.client.mu.Unlock()
	due()
	r.Sync(ctx)
	if n := reads(); n != 0 {
		t.Errorf("the probe made %d reads while a call hung; want none", n)
	}
	r.client.mu.Lock()
	r.client.total--
	r.client.mu.Unlock()
	r.outage = outage{open: true, probeAt: e.clock.Now().Add(time.Hour)}
	due()
	r.Sync(ctx)
	if n := reads(); n != 0 {
		t.Errorf("the probe made %d reads while HNS was down; want none", n)
	}
	r.outage = outage{}
	due()
	r.Sync(ctx)
	if n := reads(); n != 2 {
		t.Errorf("the probe made %d reads once HNS answers; want 2", n)
	}
}

// TestProbeLeavesObjectsWhoseLastWriteFailed: a write that failed may have
// been applied all the same (a reply lost on its way back): a load
// balancer whose replacement's delete "failed" is gone while hnsproxy
// still holds its ID until the retry meets it gone. The probe reads only
// objects whose last write did not fail; reading that one, it reported a
// deletion behind hnsproxy's back and had all of HNS listed for it.
func TestProbeLeavesObjectsWhoseLastWriteFailed(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2019) // no modify: an update deletes and creates
	r := e.started(lb("10.96.0.10", 80, rem("10.244.2.10", "192.168.1.2")))
	e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpDeleteLoadBalancer: 1}, Committed: 1,
		Errors: []hnslb.ErrorCode{hnslb.CodeTimeout}})
	upsert(r, lb("10.96.0.10", 80, rem("10.244.2.10", "192.168.1.2"), rem("10.244.2.11", "192.168.1.2")))
	if res := r.Sync(ctx); res.Failed != 1 || len(e.hns.Snapshot().LoadBalancers) != 0 {
		t.Fatalf("the update's delete: %+v, %d load balancers; want it failed and applied", res, len(e.hns.Snapshot().LoadBalancers))
	}
	e.hns.SetFaults(sim.Faults{})
	r.mu.Lock()
	r.probeAt = time.Time{} // due before the load balancer's retry
	r.mu.Unlock()
	if res := r.Sync(ctx); res.ObjectsGone || e.counters().Count(sim.OpGetLoadBalancer) != 0 {
		t.Errorf("the probe read the load balancer whose delete failed: %+v", res)
	}
}

// TestProbeStopsAtItsFirstHang: the probe's read of a load balancer hangs
// past the call deadline. Its read of an endpoint would hang too, holding
// the Sync (and the reconciler's lock) for a second deadline and taking a
// second of the abandoned calls' places; it is not made.
func TestProbeStopsAtItsFirstHang(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	w := e.withHangWatch(DefaultMaxAbandonedCalls)
	r := w.watch(e.started(lb("10.96.0.10", 80, rem("10.244.2.10", "192.168.1.2"))))
	e.hns.SetFaults(sim.Faults{Hang: []sim.Op{sim.OpGetLoadBalancer, sim.OpGetEndpoint}})
	defer func() {
		e.hns.SetFaults(sim.Faults{}) // the abandoned read returns
		<-w.returned
	}()
	e.clock.Step(networkProbeInterval)
	done := make(chan SyncResult, 1)
	go func() { done <- r.Sync(ctx) }()
	if err := e.hns.WaitHeld(ctx, 1); err != nil {
		t.Fatal(err)
	}
	e.clock.Step(DefaultCallTimeout)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	second := make(chan error, 1)
	go func() { second <- e.hns.WaitHeld(wctx, 2) }()
	select {
	case <-done:
	case <-second:
		t.Error("the probe made a second read after its first hung")
		e.clock.Step(DefaultCallTimeout)
		<-done
	}
}
