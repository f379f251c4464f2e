package reconciler

import (
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
)

// Found by the fault soak: a create HNS applied but whose reply was lost,
// then hnsproxy killed before it found the object again, left a load
// balancer and a remote endpoint nobody owned; once the Service went away
// they stayed forever. The keys being created are now saved first, and the
// restarted reconciler claims what they made.
func TestRestartClaimsWhatAnInterruptedCreateMade(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	e.local("10.244.1.12")
	want := lb("10.96.0.10", 80, loc("10.244.1.12"), rem("10.244.2.20", "192.168.0.2"))
	r := e.reconciler()
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	upsert(r, want)
	// Every create is applied, and every reply lost.
	e.hns.SetFaults(sim.Faults{
		ErrorRate: map[sim.Op]float64{sim.OpCreateLoadBalancer: 1, sim.OpCreateEndpoint: 1},
		Errors:    []hnslb.ErrorCode{hnslb.CodeTimeout},
		Committed: 1,
	})
	if res := r.Sync(ctx); res.Failed == 0 {
		t.Fatalf("sync with lost replies: %+v, want failures", res)
	}
	e.hns.SetFaults(sim.Faults{})
	if snap := e.snapshot(); len(snap.LoadBalancers) != 1 || len(snap.Endpoints) != 2 {
		t.Fatalf("HNS holds %d load balancers and %d endpoints, want the 1 and 1 the lost creates made beside the pod's", len(snap.LoadBalancers), len(snap.Endpoints))
	}

	// hnsproxy is killed here; the Service is deleted before it comes back.
	_, res := e.start(e.hns)
	if res.Failed+res.Pending != 0 {
		t.Errorf("first sync after the restart: %+v", res)
	}
	if snap := e.snapshot(); len(snap.LoadBalancers) != 0 || len(snap.Endpoints) != 1 || snap.Endpoints[0].IsRemote() {
		t.Errorf("after the restart HNS holds %d load balancers and endpoints %+v, want only the pod's endpoint", len(snap.LoadBalancers), snap.Endpoints)
	}
	if s := readState(t, e.stateFile); len(s.LoadBalancers)+len(s.RemoteEndpoints)+len(s.CreatingLoadBalancers)+len(s.CreatingRemoteEndpoints) != 0 {
		t.Errorf("state file after cleanup: %+v", s)
	}
}

// A foreign load balancer on a key nobody was creating stays foreign.
func TestRestartClaimsOnlyDeclaredKeys(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	lbID, epID := e.foreign()
	e.started(lb("10.96.0.10", 80, rem("10.244.2.20", "192.168.0.2")))
	e.start(e.hns)
	snap := e.snapshot()
	if len(snap.LoadBalancers) != 1 || snap.LoadBalancers[0].ID != lbID {
		t.Errorf("load balancers %+v, want only the foreign %s", snap.LoadBalancers, lbID)
	}
	if len(snap.Endpoints) != 1 || snap.Endpoints[0].ID != epID {
		t.Errorf("endpoints %+v, want only the foreign %s", snap.Endpoints, epID)
	}
}
