package reconciler

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
)

// A change refused during an HNS restart is programmed within one probe
// interval of HNS's return, not when its own backoff (1, 2, 4, 8 s: next
// at 15 s) next comes due; while HNS is down it costs one call per probe.
func TestHNSRestartRetriedOnceHNSAnswers(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2025)
	want := e.threeServices()
	r := e.started(want...)
	start := e.clock.Now()
	const restart = 10 * time.Second
	e.hns.Restart(restart)
	back := start.Add(restart)

	const objects = 2 // two load balancers lose a backend
	for i := range objects {
		want[i].Backends = want[i].Backends[:len(want[i].Backends)-1]
	}
	upsert(r, want...)
	if res := r.Sync(ctx); res.Failed != objects {
		t.Fatalf("sync while HNS restarts: %+v", res)
	}
	programmedAt := time.Time{}
	returned := 0 // Syncs that said HNS is back, so the caller lists it
	for range 200 {
		next, ok := r.NextRetry()
		if !ok {
			programmedAt = e.clock.Now()
			break
		}
		e.clock.SetTime(next)
		if r.Sync(ctx).HNSReturned {
			returned++
			if e.clock.Now().Before(back) {
				t.Errorf("HNSReturned at %v, before HNS came back at %v", e.clock.Now(), back)
			}
		}
	}
	// Later Syncs check the service's instance, which this restart
	// changed: the same restart is not reported again.
	for range 2 {
		e.clock.SetTime(e.clock.Now().Add(instanceCheckInterval))
		if r.Sync(ctx).HNSReturned {
			returned++
		}
	}
	if returned != 1 {
		t.Errorf("%d Syncs reported HNS back from its restart, want 1", returned)
	}
	if programmedAt.IsZero() {
		t.Fatalf("not programmed: %+v", r.Statuses())
	}
	if late := programmedAt.Sub(back); late > outageProbeInterval {
		t.Errorf("programmed %v after HNS came back, want within %v", late, outageProbeInterval)
	}
	e.assertRealized(want)

	c := e.counters()
	probes := c.Calls[sim.OpGetNetwork]["RPCServerUnavailable"]
	if probes == 0 || probes > int(restart/outageProbeInterval) {
		t.Errorf("%d refused probes in a %v restart at one per %v", probes, restart, outageProbeInterval)
	}
	// Each object's own backoff tries it at +0, +1, +3 and +7 s; the probes
	// add nothing per object.
	var refusedWrites int
	for op, results := range c.Calls {
		if op != sim.OpGetNetwork {
			refusedWrites += results["RPCServerUnavailable"]
		}
	}
	if refusedWrites > 4*objects {
		t.Errorf("%d refused object calls during the restart, want at most %d: %v", refusedWrites, 4*objects, c.Calls)
	}
}

// An object HNS refuses as unavailable while HNS answers its probe (a
// flaky call, not a restart) keeps its own backoff: it is not retried at
// every probe.
func TestRefusalWhileHNSAnswersKeepsItsBackoff(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2025)
	want := e.threeServices()
	r := e.started(want...)
	start := e.clock.Now()
	e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpUpdateLoadBalancer: 1}})

	want[0].Backends = want[0].Backends[:1]
	upsert(r, want...)
	for range 20 {
		if r.Sync(ctx).HNSReturned {
			t.Error("a refusal while HNS answers its probe was taken for a restart")
		}
		next, ok := r.NextRetry()
		if !ok || next.Sub(start) > 8*time.Second {
			break
		}
		e.clock.SetTime(next)
	}
	c := e.counters()
	// Tries at +0, +1, +3 and +7 s (backoff 1, 2, 4 s), one probe after the first.
	if got := c.Calls[sim.OpUpdateLoadBalancer]["RPCServerUnavailable"]; got != 4 {
		t.Errorf("%d refused updates in 8 s, want 4 (its backoff): %v", got, c.Calls)
	}
	if got := c.Calls[sim.OpGetNetwork][sim.ResultOK]; got > 4 {
		t.Errorf("%d probes HNS answered, want at most one per refusal: %v", got, c.Calls)
	}
}

// A restart during which nothing called HNS is told by the service's
// instance: the first Sync after it that checks (at most every
// instanceCheckInterval) reports HNS back, once; while the service is not
// running nothing is reported.
func TestUnseenRestartIsToldByTheServiceInstance(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	r := e.started(e.threeServices()...)
	if res := r.Sync(ctx); res.HNSReturned {
		t.Fatal("HNSReturned with no restart")
	}
	if err := e.hns.RestartLosing(instanceCheckInterval+time.Second, sim.RestartLosesLoadBalancers); err != nil {
		t.Fatal(err)
	}
	e.clock.SetTime(e.clock.Now().Add(instanceCheckInterval))
	if res := r.Sync(ctx); res.HNSReturned {
		t.Error("HNSReturned while the service is not running")
	}
	e.clock.SetTime(e.clock.Now().Add(instanceCheckInterval))
	if res := r.Sync(ctx); !res.HNSReturned {
		t.Fatal("a restart nobody called HNS during was not reported once HNS ran again")
	}
	for range 3 {
		e.clock.SetTime(e.clock.Now().Add(instanceCheckInterval))
		if res := r.Sync(ctx); res.HNSReturned {
			t.Fatal("one restart reported twice")
		}
	}
	if c := e.counters(); c.Count(sim.OpListLoadBalancers) > 1 {
		t.Errorf("the reconciler listed HNS itself (%d listings); listing is its caller's, after HNSReturned", c.Count(sim.OpListLoadBalancers))
	}
}

// noInstance is HNS whose service instance cannot be told (no service
// control manager to ask, as under Wine).
type noInstance struct{ hnslb.Client }

func (noInstance) ServiceInstance(context.Context) (string, error) {
	return "", errors.New("no service control manager")
}

// An outage that the same HNS instance outlived (calls and probes refused
// as unavailable while the service kept running) is no restart: it costs
// no listing. Where the instance cannot be told, its end counts as one.
func TestOutageWithoutARestartIsNoReturn(t *testing.T) {
	for _, tc := range []struct {
		name   string
		wrap   func(hnslb.Client) hnslb.Client
		report bool
	}{
		{"instance told", func(c hnslb.Client) hnslb.Client { return c }, false},
		{"instance unknown", func(c hnslb.Client) hnslb.Client { return noInstance{c} }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, sim.ProfileWS2025)
			want := e.threeServices()
			r, res := e.start(tc.wrap(e.hns), want...)
			if res.Failed+res.Pending != 0 {
				t.Fatalf("initial sync: %+v", res)
			}
			e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.AnyOp: 1}})
			want[0].Backends = want[0].Backends[:1]
			upsert(r, want...)
			returned := 0
			for i := range 40 {
				if i == 10 {
					e.hns.SetFaults(sim.Faults{})
				}
				e.clock.SetTime(e.clock.Now().Add(outageProbeInterval))
				if r.Sync(ctx).HNSReturned {
					returned++
				}
			}
			if probes := e.counters().CountResult(sim.OpGetNetwork, "RPCServerUnavailable"); probes == 0 {
				t.Fatal("no probe was refused: the outage was never confirmed")
			}
			if want := map[bool]int{false: 0, true: 1}[tc.report]; returned != want {
				t.Errorf("%d Syncs reported HNS back from a restart; want %d", returned, want)
			}
			e.assertRealized(want)
		})
	}
}

// A Sync with no retry due during an HNS outage calls nothing but perhaps
// a refused probe: it says HNS is down, so that the caller does not take
// it for a sync that reached HNS; once a probe is answered it no longer does.
func TestSyncDuringAnOutageSaysHNSIsDown(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2025)
	want := e.threeServices()
	r := e.started(want...)
	e.hns.Restart(10 * time.Second)
	want[0].Backends = want[0].Backends[:len(want[0].Backends)-1]
	upsert(r, want...)
	if res := r.Sync(ctx); res.Failed != 1 || !res.HNSDown {
		t.Fatalf("sync refused by HNS: %+v", res)
	}
	e.clock.SetTime(e.clock.Now().Add(outageProbeInterval))
	if res := r.Sync(ctx); res.Failed != 0 || len(res.Errors) != 0 || !res.HNSDown {
		t.Errorf("sync with nothing due while HNS is down: %+v, want HNSDown", res)
	}
	e.clock.SetTime(e.clock.Now().Add(20 * time.Second))
	if res := r.Sync(ctx); res.HNSDown {
		t.Errorf("sync after HNS answered again: %+v, want not HNSDown", res)
	}
}
