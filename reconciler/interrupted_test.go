package reconciler

import (
	"slices"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
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

// Found by the fault soak (2026-11-29): a cluster IP's declaration stands
// after its create (without ModifyLoadBalancer every change is a delete and
// a create, and a standing key spares each its fsync). A change's create
// was applied with its reply lost, and the listing that would find it was
// refused; a later Sync no longer wanted the key (here: the Service is
// deleted), and its settling withdrew the standing declaration while the
// create was still uncertain; hnsproxy was killed, and the restart took
// the load balancer for a
// leftover on a frontend nobody wanted: it stayed forever. A standing key
// that stops standing while its create is uncertain now stays declared
// until the create is settled.
func TestStandingKeyStaysDeclaredWhileItsCreateIsUncertain(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	e.local("10.244.1.11")
	e.local("10.244.1.12")
	a := lb("10.96.0.10", 80, loc("10.244.1.11"))
	r := e.started(a)
	if !has(r.standingLBs, a.Key) {
		t.Fatal("the cluster IP's key does not stand after its create; the test needs it to")
	}
	// The change's create is applied and its reply lost; the listing that
	// looks for it is refused.
	e.hns.SetFaults(sim.Faults{
		ErrorRate: map[sim.Op]float64{sim.OpCreateLoadBalancer: 1, sim.OpListLoadBalancers: 1},
		Errors:    []hnslb.ErrorCode{hnslb.CodeTimeout},
		Committed: 1,
	})
	a.Backends = []intent.Backend{loc("10.244.1.12")}
	upsert(r, a)
	if res := r.Sync(ctx); res.Failed == 0 {
		t.Fatalf("sync with a lost reply: %+v, want a failure", res)
	}
	remove(r, a.Key) // the Service is deleted while the create is uncertain
	r.Sync(ctx)
	e.hns.SetFaults(sim.Faults{})
	if n := len(e.snapshot().LoadBalancers); n != 1 {
		t.Fatalf("HNS holds %d load balancers, want the one the lost create made", n)
	}
	if s := readState(t, e.stateFile); !slices.Contains(s.CreatingLoadBalancers, a.Key) {
		t.Errorf("the state file declares %v while the create on %s is uncertain, want it declared", s.CreatingLoadBalancers, a.Key)
	}

	// hnsproxy is killed here.
	if _, res := e.start(e.hns); res.Failed+res.Pending != 0 {
		t.Errorf("first sync after the restart: %+v", res)
	}
	if snap := e.snapshot(); len(snap.LoadBalancers) != 0 {
		t.Errorf("after the restart HNS holds %+v, want no load balancer: the lost create's is hnsproxy's and nothing wants it", snap.LoadBalancers)
	}
}
