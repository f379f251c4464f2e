package reconciler

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// Waiting for a listing is not a failure: a create whose reply is lost
// again and again backs off 1, 2, 4 s, once per failure, although before
// each retry it waits for the listing that says whether the last one made
// the load balancer. Counted as failures, the waits made it 1, 4, 16 s
// (the fault soak, seed 32: 16 s idle after its faults ended).
func TestWaitingForAListingDoesNotLengthenTheBackoff(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	e.local("10.244.1.10")
	r := e.started()
	e.hns.SetFaults(sim.Faults{
		ErrorRate: map[sim.Op]float64{sim.OpCreateLoadBalancer: 1},
		Errors:    []hnslb.ErrorCode{hnslb.CodeTimeout},
	})
	want := lb("10.96.0.10", 80, loc("10.244.1.10"))
	upsert(r, want)
	for i := range 3 {
		var res SyncResult
		if i == 0 {
			res = r.Sync(ctx)
		} else {
			next, _ := r.NextRetry()
			e.clock.Step(next.Sub(e.clock.Now()))
			res = e.syncListed(r) // the retry waits for a listing, then creates
		}
		if res.Failed != 1 {
			t.Fatalf("attempt %d: %+v, want its create failed", i+1, res)
		}
		if got, due := statusOf(r, want.Key).NextRetry.Sub(e.clock.Now()), DefaultRetryBase<<i; got != due {
			t.Errorf("after failure %d the retry is in %v, want %v", i+1, got, due)
		}
	}
	e.hns.SetFaults(sim.Faults{})
	e.converge(r)
	e.assertRealized([]intent.LB{want})
}

// A load balancer written again as its backends' endpoints come is making
// progress, not failing: each write with some backends still left out
// doubled its backoff, so a real failure after four of them waited 32 s
// (the fault soak on ws2019 and ws2022-kb5005619 overlay, seed 23: a big
// Service's cluster IP idle 31 s after the faults ended).
func TestALoadBalancerFillingUpKeepsAShortBackoff(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	e.local("10.244.1.10")
	r := e.started()
	var reserved []netip.Addr
	backends := []intent.Backend{loc("10.244.1.10")}
	for i := range 5 {
		ip := fmt.Sprintf("10.244.3.%d", 31+i)
		reserved = append(reserved, netip.MustParseAddr(ip))
		backends = append(backends, rem(ip, "192.168.0.3"))
	}
	e.hns.SetFaults(sim.Faults{ReservedAddresses: reserved})
	want := lb("10.96.0.30", 443, backends...)
	upsert(r, want)
	e.answerAll(r, e.syncListed(r)) // the first refusal looks for a holder; none, in each listing
	// HNS takes the addresses one by one: each endpoint made is a write of
	// the load balancer with one backend more.
	for len(reserved) > 1 {
		reserved = reserved[1:]
		e.hns.SetFaults(sim.Faults{ReservedAddresses: reserved})
		e.clock.Step(DefaultRetryMax)
		r.Sync(ctx)
		if l := e.hnsLB(want.Key); l == nil || len(l.HostComputeEndpoints) != len(backends)-len(reserved) {
			t.Fatalf("with %d addresses reserved the load balancer is %+v", len(reserved), l)
		}
	}
	// The last one comes, and HNS refuses the load balancer's write.
	e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpDeleteLoadBalancer: 1},
		Errors: []hnslb.ErrorCode{hnslb.CodeInvalidParameter}})
	e.clock.Step(DefaultRetryMax)
	if res := r.Sync(ctx); res.Failed == 0 {
		t.Fatalf("the last write: %+v, want it failed", res)
	}
	if got := statusOf(r, want.Key).NextRetry.Sub(e.clock.Now()); got > 2*DefaultRetryBase {
		t.Errorf("the failed write is retried in %v, want at most %v", got, 2*DefaultRetryBase)
	}
	e.hns.SetFaults(sim.Faults{})
	e.converge(r)
	e.assertRealized([]intent.LB{want})
}
