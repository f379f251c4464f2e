package reconciler

import (
	"slices"
	"testing"

	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// A remote endpoint whose create lost its reply, and that is no longer
// wanted, is found by a listing and deleted. Found, it is ours: owned in
// the state file before its delete, as a load balancer a lost create made
// is (resolveUncertainLB). Before, its ID was taken without being owned,
// and its declaration withdrawn at the Sync's end: a failed delete and a
// restart left it in HNS for good, another program's to the new process.
func TestLostEndpointCreateNoLongerWantedStaysOursUntilDeleted(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	e.declaringEndpoints() // no name says whose it is: only the state file does
	e.local("10.244.1.10")
	alone := lb("10.96.0.10", 80, loc("10.244.1.10"))
	r := e.started(alone)

	e.endpointCreateLost(r, lb("10.96.0.10", 80, loc("10.244.1.10"), rem("10.244.2.20", "192.168.0.2")))

	// No longer wanted; the listing finds it, and its delete fails.
	e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpDeleteEndpoint: 1}})
	upsert(r, alone)
	for range 4 {
		if r.Sync(ctx).ListingWanted {
			if err := r.Lookup(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n := e.counters().Count(sim.OpDeleteEndpoint); n == 0 {
		t.Fatal("the endpoint the lost create made was never deleted: the test wants its delete to fail")
	}

	// hnsproxy restarts with HNS answering again.
	e.hns.SetFaults(sim.Faults{})
	r2 := e.started(alone)
	e.converge(r2)
	if err := r2.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	e.converge(r2)
	if got := e.remoteIPs(); len(got) != 0 {
		t.Errorf("remote endpoints %v left in HNS after the restart, want none", got)
	}
	e.assertRealized([]intent.LB{alone})
}

// endpointCreateLost upserts want, whose one remote endpoint's create
// reaches HNS and loses its reply, and requires that HNS made it.
func (e *env) endpointCreateLost(r *Reconciler, want intent.LB) {
	e.t.Helper()
	e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpCreateEndpoint: 1}, Committed: 1})
	upsert(r, want)
	r.Sync(ctx)
	e.hns.SetFaults(sim.Faults{})
	var remote []string
	for _, b := range want.Backends {
		if !b.Local {
			remote = append(remote, b.IP)
		}
	}
	if got := e.remoteIPs(); !slices.Equal(got, remote) {
		e.t.Fatalf("remote endpoints in HNS %v, want the one the lost create made, %v", got, remote)
	}
}
