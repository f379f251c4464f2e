package reconciler

import (
	"fmt"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// capEnv is a node whose HNS enforces 64 backends (ws2022-cap64) while
// hnsproxy, from the OS build, expects 1024; learning is set by learn.
func capEnv(t *testing.T, profile string, learn bool) (*env, intent.LB) {
	e := newEnv(t, profile)
	e.tweak = func(o *Options) {
		o.Features.MaxBackends = hnslb.MaxBackendsModern
		o.LearnBackendCap = learn
	}
	var backends []intent.Backend
	for i := range 100 {
		ip := fmt.Sprintf("10.244.1.%d", 10+i)
		e.local(ip)
		backends = append(backends, loc(ip))
	}
	return e, lb("10.96.0.10", 80, backends...)
}

// TestBackendCapLearnedFromRefusal: HNS refuses 100 backends with 0x57; the
// reconciler confirms with a retry at 64, which HNS takes, so the frontend
// serves at once and the result reports the cap learned.
func TestBackendCapLearnedFromRefusal(t *testing.T) {
	e, d := capEnv(t, sim.ProfileWS2022Cap64, true)
	r, res := e.start(e.hns, d)
	if res.Failed != 0 || res.LearnedBackendCap != hnslb.MaxBackendsLegacy {
		t.Fatalf("result %+v, want no failure and cap 64 learned", res)
	}
	got := e.hnsLB(d.Key)
	if got == nil || len(got.HostComputeEndpoints) != hnslb.MaxBackendsLegacy {
		t.Fatalf("load balancer %+v, want one with 64 backends", got)
	}
	c := e.counters()
	if c.CountResult(sim.OpCreateLoadBalancer, "InvalidParameter") != 1 || c.CountResult(sim.OpCreateLoadBalancer, "ok") != 1 {
		t.Errorf("creates %v, want one refused and one at 64", c.Calls[sim.OpCreateLoadBalancer])
	}
	// The cap stays learned; nothing more is tried while nothing changes.
	e.hns.ResetCounters()
	if res := r.Sync(ctx); res.LearnedBackendCap != hnslb.MaxBackendsLegacy || e.counters().Writes() != 0 {
		t.Errorf("second sync %+v, writes %d", res, e.counters().Writes())
	}
}

// TestBackendCapFlagWins: with --max-backends-per-lb set (no learning) the
// refusal stands and is retried as any failure; the cap is not lowered.
func TestBackendCapFlagWins(t *testing.T) {
	e, d := capEnv(t, sim.ProfileWS2022Cap64, false)
	_, res := e.start(e.hns, d)
	if res.Failed != 1 || res.LearnedBackendCap != 0 || e.hnsLB(d.Key) != nil {
		t.Fatalf("result %+v, want the create failed and no cap learned", res)
	}
	if n := e.counters().Count(sim.OpCreateLoadBalancer); n != 1 {
		t.Errorf("%d creates, want 1 (no retry at 64)", n)
	}
}

// TestBackendCapNotLearnedWhen64FailToo: 0x57 for another reason fails the
// retry at 64 too; the first error stands and no cap is learned.
func TestBackendCapNotLearnedWhen64FailToo(t *testing.T) {
	e, d := capEnv(t, sim.ProfileWS2022, true)
	e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpCreateLoadBalancer: 1}, Errors: []hnslb.ErrorCode{hnslb.CodeInvalidParameter}})
	_, res := e.start(e.hns, d)
	if res.Failed != 1 || res.LearnedBackendCap != 0 {
		t.Fatalf("result %+v, want the create failed and no cap learned", res)
	}
	if n := e.counters().CountResult(sim.OpCreateLoadBalancer, "InvalidParameter"); n != 2 {
		t.Errorf("%d refused creates, want 2 (the document, then 64)", n)
	}
}
