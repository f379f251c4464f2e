package reconciler

import (
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// cappedRestartEnv is capEnv's node once the cap is learned, with a second,
// small load balancer made after it (so the state file has a journal over
// the snapshot that recorded the cap). It returns the 100-backend Service
// as the proxier computes it before Start, and at the cap, as the proxier
// hands it once it knows the cap.
func cappedRestartEnv(t *testing.T) (e *env, full, atCap, small intent.LB) {
	t.Helper()
	e, full = capEnv(t, sim.ProfileWS2022Cap64, true)
	learn := e.tweak
	e.tweak = func(o *Options) { learn(o); o.OSBuild = e.profile.OSBuild }
	r, res := e.start(e.hns, full)
	if res.LearnedBackendCap != hnslb.MaxBackendsLegacy {
		t.Fatalf("first start %+v, want the cap learned", res)
	}
	atCap = full
	atCap.Backends = full.Backends[:hnslb.MaxBackendsLegacy]
	small = lb("10.96.0.11", 80, full.Backends[0])
	upsert(r, atCap, small)
	if res := r.Sync(ctx); res.Failed+res.Pending != 0 || res.Created != 1 {
		t.Fatalf("sync at the cap %+v, want the small one created and nothing failed", res)
	}
	return e, full, atCap, small
}

// restart runs a new reconciler over the state file, handed before Start
// what the proxier computes then; it returns it started, not yet synced.
func (e *env) restart(before ...intent.LB) *Reconciler {
	e.t.Helper()
	r := e.reconciler()
	upsert(r, before...)
	if err := r.Start(ctx); err != nil {
		e.t.Fatal(err)
	}
	return r
}

// handAtCap hands lbs over again at the cap r learned, if any, as the
// proxier does after Start (desired keeps the first of them, as the
// reconciler's own retry at 64 does).
func handAtCap(r *Reconciler, lbs ...intent.LB) {
	max := r.LearnedBackendCap()
	if max == 0 {
		return
	}
	for i := range lbs {
		if len(lbs[i].Backends) > max {
			lbs[i].Backends = lbs[i].Backends[:max]
		}
	}
	upsert(r, lbs...)
}

// TestLearnedBackendCapKeptAcrossRestart: the state file keeps the cap
// learned on this build. Start restores it and leaves the adopted load
// balancer alone while the desired one, computed before Start, is over
// the cap; handed at the cap, it is adopted, and the restart writes
// nothing (it replaced the load balancer twice, cutting its frontend, and
// had one create refused, when the cap was forgotten).
func TestLearnedBackendCapKeptAcrossRestart(t *testing.T) {
	e, full, _, small := cappedRestartEnv(t)
	before := e.hnsLB(full.Key)
	e.hns.ResetCounters()
	r := e.restart(full, small)
	if got := r.LearnedBackendCap(); got != hnslb.MaxBackendsLegacy {
		t.Errorf("cap after Start %d, want 64 kept from the state file", got)
	}
	handAtCap(r, full, small)
	res := r.Sync(ctx)
	if res.LearnedBackendCap != hnslb.MaxBackendsLegacy || res.Failed+res.Pending+res.Created+res.Deleted+res.Updated != 0 {
		t.Errorf("first sync %+v, want nothing written and the cap reported", res)
	}
	if c := e.counters(); c.Writes() != 0 {
		t.Errorf("the restart made %d writes: %v", c.Writes(), c.Calls)
	}
	if after := e.hnsLB(full.Key); after == nil || after.ID != before.ID {
		t.Errorf("load balancer %+v after the restart, want %s adopted", after, before.ID)
	}
}

// TestLearnedBackendCapKeptAcrossReboot: a reboot empties HNS of what
// hnsproxy made; the restart with the cap kept creates the load balancer
// at the cap at once, with no create HNS refuses first.
func TestLearnedBackendCapKeptAcrossReboot(t *testing.T) {
	e, full, atCap, small := cappedRestartEnv(t)
	if err := e.hns.RestartLosing(0, sim.RestartLosesRemoteEndpoints); err != nil {
		t.Fatal(err)
	}
	e.hns.ResetCounters()
	r := e.restart(full, small)
	handAtCap(r, full, small)
	if res := r.Sync(ctx); res.Failed+res.Pending != 0 || res.Created != 2 {
		t.Errorf("first sync %+v, want both load balancers created", res)
	}
	c := e.counters()
	if refused, made := c.CountResult(sim.OpCreateLoadBalancer, "InvalidParameter"), c.CountResult(sim.OpCreateLoadBalancer, "ok"); refused != 0 || made != 2 {
		t.Errorf("creates %v, want 2 and none refused", c.Calls[sim.OpCreateLoadBalancer])
	}
	e.assertRealized([]intent.LB{atCap, small})
}

// TestLearnedBackendCapForgottenOnAnotherBuild: a cap is kept for the
// build it was learned on. After an update (another UBR) the record is
// dropped and the next load balancer over 64 asks HNS again, so a build
// that lifted the cap is not held at 64; here HNS still refuses, and the
// cap is learned anew. With learning off (--max-backends-per-lb) the record
// is not read at all.
func TestLearnedBackendCapForgottenOnAnotherBuild(t *testing.T) {
	e, full, _, small := cappedRestartEnv(t)
	learnOn := e.tweak
	e.tweak = func(o *Options) { learnOn(o); o.LearnBackendCap = false }
	if got := e.restart().LearnedBackendCap(); got != 0 {
		t.Errorf("cap %d kept with learning off, want 0", got)
	}
	// That restart snapshotted the state without the cap: learn it again.
	e.tweak = learnOn
	if _, res := e.start(e.hns, full, small); res.LearnedBackendCap != hnslb.MaxBackendsLegacy {
		t.Fatalf("relearning %+v", res)
	}
	e.tweak = func(o *Options) { learnOn(o); o.OSBuild.UBR++ }
	e.hns.ResetCounters()
	r := e.restart(full, small)
	if got := r.LearnedBackendCap(); got != 0 {
		t.Fatalf("cap %d kept on another build, want 0", got)
	}
	if res := r.Sync(ctx); res.LearnedBackendCap != hnslb.MaxBackendsLegacy {
		t.Errorf("first sync %+v, want HNS asked again and the cap learned", res)
	}
	if refused := e.counters().CountResult(sim.OpCreateLoadBalancer, "InvalidParameter"); refused != 1 {
		t.Errorf("%d creates refused, want 1: HNS asked again on the new build", refused)
	}
}

// TestLearnedBackendCapNotKeptOnUnknownBuild: where the OS build could not
// be read, a cap record names only HNS's version, which many cumulative
// updates share, so an update that lifted the cap would leave the node at
// 64 until HNS's version changed. Start keeps no cap then: the next load
// balancer over 64 asks HNS again, as on a build it knows changed.
func TestLearnedBackendCapNotKeptOnUnknownBuild(t *testing.T) {
	e, full := capEnv(t, sim.ProfileWS2022Cap64, true) // Options.OSBuild left unknown
	if _, res := e.start(e.hns, full); res.LearnedBackendCap != hnslb.MaxBackendsLegacy {
		t.Fatalf("first start %+v, want the cap learned", res)
	}
	r := e.restart(full)
	if got := r.LearnedBackendCap(); got != 0 {
		t.Fatalf("cap %d kept with the OS build unknown, want 0", got)
	}
	if res := r.Sync(ctx); res.LearnedBackendCap != hnslb.MaxBackendsLegacy {
		t.Errorf("first sync %+v, want HNS asked again and the cap learned", res)
	}
}

// A cap learned after the first Sync (a Service that grows past 64
// backends on a node up for long) is kept in the state file too: the
// first Sync's snapshot, which ends the takeover, is not the only one that
// may carry it. Lost at the next restart, the cap was learned again by
// replacing the adopted load balancer twice and having a create refused.
func TestABackendCapLearnedAfterTheFirstSyncIsKeptAcrossRestart(t *testing.T) {
	e, full := capEnv(t, sim.ProfileWS2022Cap64, true)
	learn := e.tweak
	e.tweak = func(o *Options) { learn(o); o.OSBuild = e.profile.OSBuild }
	small := lb("10.96.0.11", 80, full.Backends[0])
	r, res := e.start(e.hns, small)
	if res.LearnedBackendCap != 0 {
		t.Fatalf("first start %+v, want no cap learned yet", res)
	}
	upsert(r, full)
	if res := r.Sync(ctx); res.LearnedBackendCap != hnslb.MaxBackendsLegacy {
		t.Fatalf("sync of the Service over 64 backends %+v, want the cap learned", res)
	}
	if got := e.restart(full, small).LearnedBackendCap(); got != hnslb.MaxBackendsLegacy {
		t.Errorf("cap after a restart %d, want 64 kept from the state file", got)
	}
}
