package reconciler

import (
	"fmt"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// TestARepairDoesNotDisownALoadBalancerASyncReplacedDuringItsListing: a
// remote endpoint replaced (its pod IP now on another node, which one
// Service's slice says before another's does) has the load balancers
// using it rewritten without it (removeEP), though the Sync was handed
// the endpoint alone. Without modify each rewrite is a new ID. With the
// new endpoint's create refused, those load balancers were never noted
// as the Sync's work, so a drift repair listing under way judged the
// rewrite it did not list as vanished and disowned hnsproxy's own live
// load balancer: on a tenant's frontend the Service then stayed stuck
// behind it with a ForeignFrontendError.
func TestARepairDoesNotDisownALoadBalancerASyncReplacedDuringItsListing(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2019) // HNS without modify: every update a delete and a create
	e.local("10.244.1.10")
	ext := lb("203.0.113.5", 80, loc("10.244.1.10"), rem("10.244.4.40", "192.168.0.4"))
	ext.Origin = intent.OriginExternalIP
	ext.Owner = "default/ext"
	r, _ := e.start(e.hns, ext)
	e.converge(r)
	e.assertRealized([]intent.LB{ext})
	before := e.hnsLB(ext.Key).ID

	e.hns.SetFaults(sim.Faults{HangReply: []sim.Op{sim.OpListLoadBalancers}})
	repaired := make(chan error, 1)
	go func() { repaired <- r.Repair(ctx) }()
	if err := e.hns.WaitHeld(ctx, 1); err != nil {
		t.Fatal(err)
	}
	// Another Service's slice already has the pod on another node.
	e.hns.SetFaults(sim.Faults{HangReply: []sim.Op{sim.OpListLoadBalancers},
		ErrorRate: map[sim.Op]float64{sim.OpCreateEndpoint: 1}, Errors: []hnslb.ErrorCode{hnslb.CodeInvalidParameter}})
	r.UpsertEndpoint(intent.EndpointOf(rem("10.244.4.40", "192.168.0.9")))
	res := r.Sync(ctx)
	t.Logf("sync during the listing: %+v", res)
	mid := e.hnsLB(ext.Key)
	if mid == nil || mid.ID == before {
		t.Fatalf("expected the load balancer replaced during the listing: %v", mid)
	}
	e.hns.SetFaults(sim.Faults{})
	if err := <-repaired; err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	_, owned := r.ownedLBs[mid.ID]
	realized := r.lbs[ext.Key].realizedID
	r.mu.Unlock()
	if !owned || realized != mid.ID {
		t.Errorf("after the repair, load balancer %s (made by the Sync during the listing, still in HNS) is owned=%v, realized ID %q", mid.ID, owned, realized)
	}
	// The rest of the change comes: the Service's slice follows.
	ext2 := ext
	ext2.Backends = []intent.Backend{loc("10.244.1.10"), rem("10.244.4.40", "192.168.0.9")}
	upsert(r, ext2)
	for range 20 {
		if r.Sync(ctx).ListingWanted {
			_ = r.Lookup(ctx)
		}
		e.clock.Step(20e9)
	}
	e.assertRealized([]intent.LB{ext2})
	for _, s := range r.Statuses() {
		if s.LastError != "" {
			t.Errorf("%s: %s", s.Key, s.LastError)
		}
	}
}

// TestARewriteForAReplacedEndpointIsDeclared: the load balancers of a
// replaced remote endpoint are rewritten without it before it is deleted
// (removeEP), though the Sync was handed the endpoint alone. Without
// modify each rewrite is a new load balancer, on a tenant's frontend
// too, whose key must be declared before its create, like those of the
// Sync's own work: killed right after it, a restart would otherwise find
// hnsproxy's load balancer on a frontend nobody declared and leave it
// there as another agent's, the Service stuck behind it. With the new
// endpoint's create refused the rewrite is all the Sync writes; with it
// made, the load balancer is written once more, with it.
func TestARewriteForAReplacedEndpointIsDeclared(t *testing.T) {
	for _, refused := range []bool{true, false} {
		t.Run(fmt.Sprintf("refused=%v", refused), func(t *testing.T) {
			e := newEnv(t, sim.ProfileWS2022)
			e.declaringEndpoints() // declaredClient checks the endpoints' creates too
			e.local("10.244.1.10")
			ext := lb("203.0.113.5", 80, loc("10.244.1.10"), rem("10.244.4.40", "192.168.0.4"))
			ext.Origin = intent.OriginExternalIP
			ext.Owner = "default/ext"
			r := New(&declaredClient{Client: e.hns, t: t, stateFile: e.stateFile}, e.options())
			upsert(r, ext)
			if err := r.Start(ctx); err != nil {
				t.Fatal(err)
			}
			e.converge(r)
			before := e.hnsLB(ext.Key).ID
			if refused {
				e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpCreateEndpoint: 1}, Errors: []hnslb.ErrorCode{hnslb.CodeInvalidParameter}})
			}
			r.UpsertEndpoint(intent.EndpointOf(rem("10.244.4.40", "192.168.0.9")))
			res := r.Sync(ctx)
			if res.Updated == 0 {
				t.Fatalf("sync: %+v, want the load balancer rewritten", res)
			}
			if got := e.hnsLB(ext.Key); got == nil || got.ID == before {
				t.Fatalf("HNS holds %+v, want the load balancer replaced", got)
			}
		})
	}
}
