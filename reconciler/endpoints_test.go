package reconciler

import (
	"slices"
	"testing"

	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// TestRemoteEndpointsAreGivenNotDerived: a load balancer's remote backend
// gets no endpoint of its own accord; the load balancer leaves it out until
// UpsertEndpoint asks for it, and DeleteEndpoint waits for the realized load
// balancers still using the endpoint.
func TestRemoteEndpointsAreGivenNotDerived(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	e.local("10.244.1.10")
	pod := rem("10.244.2.20", "192.168.0.2")
	want := lb("10.96.0.10", 80, loc("10.244.1.10"), pod)
	rec := &recorder{Client: e.hns}
	r, _ := e.start(rec)

	r.Upsert(want)
	if res := r.Sync(ctx); res.Created != 1 || res.Pending != 1 {
		t.Fatalf("load balancer without its remote endpoint: %+v", res)
	}
	if got := e.remoteIPs(); len(got) != 0 {
		t.Errorf("remote endpoints %v derived from a backend", got)
	}
	if s := r.Statuses(); len(s) != 1 || !slices.Equal(s[0].MissingBackends, []string{pod.IP}) {
		t.Errorf("statuses %+v, want %s missing", s, pod.IP)
	}

	// The endpoint arrives: created first, then the waiting load balancer uses it.
	r.UpsertEndpoint(intent.EndpointOf(pod))
	if res := r.Sync(ctx); res.Failed+res.Pending != 0 {
		t.Fatalf("after UpsertEndpoint: %+v", res)
	}
	e.assertRealized([]intent.LB{want})

	// Withdrawn while the load balancer still lists the backend: the load
	// balancer is rewritten without it first, then the endpoint goes.
	var epID string
	for _, ep := range e.snapshot().Endpoints {
		if ep.IsRemote() && ep.IP() == pod.IP {
			epID = ep.ID
		}
	}
	rec.ops = nil
	r.DeleteEndpoint(pod.IP)
	if res := r.Sync(ctx); res.Failed != 0 || res.Pending != 1 {
		t.Fatalf("after DeleteEndpoint: %+v", res)
	}
	if n := len(rec.ops); n < 2 || rec.ops[n-1] != "delete-ep "+epID || slices.Contains(rec.ops, "uses "+epID) {
		t.Errorf("writes %v: want the load balancer rewritten without %s, then %s deleted", rec.ops, epID, epID)
	}
	if got := e.remoteIPs(); len(got) != 0 {
		t.Errorf("remote endpoints %v left after DeleteEndpoint", got)
	}
	if got := e.backendIPs(e.hnsLB(want.Key)); !slices.Equal(got, []string{"10.244.1.10"}) {
		t.Errorf("load balancer backends %v, want the withdrawn endpoint left out", got)
	}
}

// TestUpsertEndpointUnchangedIsNoOp: handing over the same endpoint again
// marks nothing for the next Sync.
func TestUpsertEndpointUnchangedIsNoOp(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	want := e.threeServices()
	r := e.started(want...)
	for _, b := range want[1].Backends {
		if !b.Local {
			r.UpsertEndpoint(intent.EndpointOf(b))
		}
	}
	if res := r.Sync(ctx); res.Created+res.Updated+res.Deleted+res.Pending != 0 || e.counters().Writes() != 0 {
		t.Errorf("unchanged endpoints made work: %+v %v", res, e.counters().Calls)
	}
}
