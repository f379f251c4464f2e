package reconciler

import (
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
// answers "not found" for a load balancer its listing still shows (no such
// HNS is known) gets one listing from the probe, not one every probe.
func TestProbeReportsAnObjectHNSKeepsListingOnce(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	r := e.started(lb("10.96.0.10", 80, rem("10.244.2.10", "192.168.1.2")))
	e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpGetLoadBalancer: 1}, Errors: []hnslb.ErrorCode{hnslb.CodeNotFound}})
	reported := 0
	for range 3 {
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
