package reconciler

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/sim/historytest"
)

// reconcilerOps are the HNS calls a reconciler makes in a Sync, a Repair
// and a Lookup.
var reconcilerOps = []sim.Op{
	sim.OpCreateLoadBalancer, sim.OpUpdateLoadBalancer, sim.OpDeleteLoadBalancer, sim.OpGetLoadBalancer, sim.OpListLoadBalancers,
	sim.OpCreateEndpoint, sim.OpDeleteEndpoint, sim.OpGetEndpoint, sim.OpListEndpoints,
	sim.OpGetNetwork, sim.OpGetNamespace, sim.OpListNamespaces,
}

// TestEveryCodeOnEveryCallConverges: whatever code HNS answers any one call
// of a change's Syncs, repairs and lookups with, applied or not, once HNS
// answers again the reconciler converges to exactly the desired state, and
// nothing but a network read by name that says "not found" reports the
// network changed.
func TestEveryCodeOnEveryCallConverges(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2019, sim.ProfileWS2025} {
		for _, op := range reconcilerOps {
			for _, code := range historytest.AnyCodes() {
				for _, committed := range []float64{0, 1} {
					if committed == 0 && saysGone(op, code) {
						continue // a delete HNS says found nothing, while it keeps the object: taken at its word (goneOnDelete)
					}
					name := fmt.Sprintf("%s/%s/%#x/committed=%v", profile, op, uint32(code), committed)
					t.Run(name, func(t *testing.T) { testCodeOnCall(t, profile, op, code, committed) })
				}
			}
		}
	}
}

func testCodeOnCall(t *testing.T, profile string, op sim.Op, code hnslb.ErrorCode, committed float64) {
	e := newEnv(t, profile)
	e.tweak = func(o *Options) { o.NetworkName = "cbr0" }
	want := e.threeServices()
	r := e.started(want...)

	// A change that creates, updates and deletes load balancers and
	// remote endpoints.
	e.local("10.244.1.12")
	want[0] = lb("10.96.0.10", 53, loc("10.244.1.12"), rem("10.244.4.40", "192.168.0.4"))
	upsert(r, want[0], lb("10.96.0.40", 8080, loc("10.244.1.10")))
	remove(r, want[2].Key)
	want = append(want[:2], lb("10.96.0.40", 8080, loc("10.244.1.10")))

	e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{op: 1}, Errors: []hnslb.ErrorCode{code}, Committed: committed})
	changed := false
	for i := 0; i < 6; i++ {
		res := r.Sync(ctx)
		changed = changed || res.NetworkChanged != nil
		if res.ListingWanted {
			_ = r.Lookup(ctx)
		}
		var nc *NetworkChangedError
		if err := r.Repair(ctx); errors.As(err, &nc) {
			changed = true
		}
		e.clock.Step(time.Minute)
	}
	e.hns.SetFaults(sim.Faults{})
	goneByName := op == sim.OpGetNetwork && hnslb.IsNotFound(&hnslb.Error{Code: code})
	if changed != goneByName {
		t.Errorf("network reported changed: %v, want %v", changed, goneByName)
	}
	if goneByName {
		return // the daemon restarts: the proxier's tests hold that
	}
	if err := r.Repair(ctx); err != nil {
		t.Fatal("repair once HNS answers:", err)
	}
	e.converge(r)
	e.assertRealized(want)
}

// saysGone reports a delete's code that names the deleted object's
// absence, which the reconciler takes at its word (goneOnDelete).
func saysGone(op sim.Op, code hnslb.ErrorCode) bool {
	switch op {
	case sim.OpDeleteLoadBalancer:
		return goneOnDelete(recordLoadBalancer, &hnslb.Error{Code: code})
	case sim.OpDeleteEndpoint:
		return goneOnDelete(recordRemoteEndpoint, &hnslb.Error{Code: code})
	}
	return false
}

// TestEveryCodeOnEveryStartCallIsRetried: a restart's Start that HNS
// answers any code on any call either starts, or fails with an error the
// proxier retries (hnslb.IsTransient), except a network read by name that
// says "not found" (the daemon restarts); once HNS answers, the restarted
// reconciler converges to the desired state.
func TestEveryCodeOnEveryStartCallIsRetried(t *testing.T) {
	for _, op := range reconcilerOps {
		for _, code := range historytest.AnyCodes() {
			t.Run(fmt.Sprintf("%s/%#x", op, uint32(code)), func(t *testing.T) {
				e := newEnv(t, sim.ProfileWS2022)
				e.tweak = func(o *Options) { o.NetworkName = "cbr0" }
				want := e.threeServices()
				e.started(want...)
				want[0] = lb("10.96.0.10", 53, loc("10.244.1.11"))

				r := e.reconciler()
				upsert(r, want...)
				e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{op: 1}, Errors: []hnslb.ErrorCode{code}})
				err := r.Start(ctx)
				var changed *NetworkChangedError
				switch {
				case errors.As(err, &changed):
					if op != sim.OpGetNetwork && op != sim.OpListEndpoints || !hnslb.IsNotFound(&hnslb.Error{Code: code}) {
						t.Fatalf("start reported the network changed: %v", err)
					}
					return // the daemon restarts
				case err != nil && !hnslb.IsTransient(err):
					t.Fatalf("start failed for good: %v", err)
				}
				e.hns.SetFaults(sim.Faults{})
				if err != nil {
					if err := r.Start(ctx); err != nil {
						t.Fatal("start once HNS answers:", err)
					}
				}
				e.converge(r)
				if err := r.Repair(ctx); err != nil {
					t.Fatal("repair:", err)
				}
				e.converge(r)
				e.assertRealized(want)
			})
		}
	}
}
