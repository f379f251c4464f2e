package reconciler

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
)

// wantTimeout checks that err is a call abandoned at its deadline, or not
// made because earlier ones were.
func wantTimeout(t *testing.T, what string, err error) {
	t.Helper()
	if code, ok := hnslb.CodeOf(err); !ok || code != hnslb.CodeTimeout {
		t.Errorf("%s: %v, want an HNS timeout", what, err)
	}
}

// A hung HNS at start-up costs each start-up call its deadline, and the
// calls abandoned there count against the one bound the reconciler's
// calls share: past it nothing more is asked of HNS, by either, until
// they return.
func TestStartupCallsShareTheBoundOnAbandonedCalls(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	w := e.withHangWatch(0)
	o := e.options()
	s := NewStartupCalls(e.hns, o)
	s.d.onReturn = func() { w.returned <- struct{}{} }

	e.hns.SetFaults(sim.Faults{Hang: []sim.Op{sim.OpGetNetwork, sim.OpVersion, sim.OpGetEndpoint}})
	calls := []struct {
		op   string
		call func() error
	}{
		{"get_network_by_name", func() error { _, err := s.GetNetworkByName(ctx, "cbr0"); return err }},
		{"version", func() error { _, err := s.Version(ctx); return err }},
		{"get_endpoint_by_name", func() error { _, err := s.GetEndpointByName(ctx, "cbr0_ep"); return err }},
		{"get_network_by_name", func() error { _, err := s.GetNetworkByName(ctx, "cbr0"); return err }},
	}
	for _, c := range calls {
		wantTimeout(t, c.op, pastHangs(e, 1, c.call))
	}
	if got, want := w.ops(), []string{"get_network_by_name", "version", "get_endpoint_by_name", "get_network_by_name"}; !slices.Equal(got, want) {
		t.Errorf("timed-out operations %v, want %v", got, want)
	}

	// Four abandoned: the next start-up call, and the reconciler's Start,
	// fail at once without reaching HNS.
	held := e.hns.Held()
	_, err := s.GetNetworkByName(ctx, "cbr0")
	wantTimeout(t, "a fifth start-up call", err)
	if err == nil || !strings.Contains(err.Error(), "4 earlier HNS calls have not returned") {
		t.Errorf("fifth call: %v, want it refused for the 4 abandoned", err)
	}
	o.StartupCalls = s
	r := New(e.hns, o)
	if err := r.Start(ctx); err == nil || !strings.Contains(err.Error(), "4 earlier HNS calls have not returned") {
		t.Errorf("Start with 4 start-up calls abandoned: %v, want it refused", err)
	}
	if e.hns.Held() != held {
		t.Errorf("calls held %d, want still %d: nothing more reached HNS", e.hns.Held(), held)
	}

	// HNS answers again: the abandoned calls return, and the reconciler goes on.
	e.hns.SetFaults(sim.Faults{})
	for range held {
		<-w.returned
	}
	if err := r.Start(ctx); err != nil {
		t.Fatalf("Start once HNS answers: %v", err)
	}
	d := e.threeServices()
	upsert(r, d...)
	if res := r.Sync(ctx); res.Failed+res.Pending != 0 {
		t.Errorf("sync once HNS answers: %+v", res)
	}
}

// --cleanup under a hung HNS fails, naming what is left, instead of
// waiting for good; what it could not delete stays in the state file, so
// the next run, once HNS answers, finishes the job.
func TestCleanupUnderAHungHNS(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	e.tweak = func(o *Options) { o.ListTimeout = DefaultCallTimeout } // pastHangs steps a call's deadline
	foreignLB, foreignEP := e.foreign()
	e.started(e.threeServices()...)

	e.hns.SetFaults(sim.Faults{Hang: []sim.Op{sim.OpListLoadBalancers}})
	type result struct {
		res CleanupResult
		err error
	}
	cleanup := func() result { res, err := Cleanup(ctx, e.hns, e.options()); return result{res, err} }
	got := pastHangs(e, 1, cleanup)
	wantTimeout(t, "cleanup with the listing hung", got.err)
	if got.err == nil || !strings.Contains(got.err.Error(), "list load balancers") || got.res.StateRemoved {
		t.Errorf("cleanup with the listing hung: %+v, %v", got.res, got.err)
	}

	// Each load balancer's delete hangs: abandoned, kept owned, and the
	// endpoints they use are kept.
	e.hns.SetFaults(sim.Faults{Hang: []sim.Op{sim.OpDeleteLoadBalancer}})
	waitReleased(e)
	got = pastHangs(e, 3, cleanup)
	if got.err == nil || !strings.Contains(got.err.Error(), "run it again") || got.res.DeletedLoadBalancers != 0 || got.res.StateRemoved {
		t.Fatalf("cleanup with deletes hung: %+v, %v", got.res, got.err)
	}
	var timedOut int
	for _, f := range got.res.Failed {
		if code, ok := hnslb.CodeOf(f.Err); ok && code == hnslb.CodeTimeout {
			timedOut++
		}
	}
	if timedOut != 3 || len(got.res.Failed) != 6 {
		t.Errorf("failures %v, want 3 timed-out deletes and 3 endpoints kept for them", got.res.Failed)
	}

	// The deletes land once HNS lets them go; the next cleanup finishes.
	e.hns.SetFaults(sim.Faults{})
	waitReleased(e)
	got = cleanup()
	if got.err != nil || !got.res.StateRemoved || got.res.DeletedEndpoints != 3 {
		t.Fatalf("cleanup once HNS answers: %+v, %v", got.res, got.err)
	}
	e.assertOnlyForeignLeft(foreignLB, foreignEP)
}

// waitReleased waits until the calls a lifted hang held have gone on.
func waitReleased(e *env) {
	for e.hns.Held() != 0 {
		time.Sleep(time.Millisecond)
	}
}

// Cleanup without a client says so.
func TestCleanupWithoutAClient(t *testing.T) {
	if _, err := Cleanup(ctx, nil, Options{StateFile: "x"}); err == nil || !strings.Contains(err.Error(), "no HNS client") {
		t.Errorf("cleanup without a client: %v", err)
	}
}
