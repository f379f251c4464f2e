package reconciler

import (
	"context"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
)

// TestADeleteKeptThatOneListingLeavesOutIsStillDeletedAgain: HNS reports
// the deletes of a load balancer and a remote endpoint done and keeps both
// (microsoft/Windows-Containers#631), and the next Repair's listing leaves
// them out (Faults.LeftOutOfListings). That silence is not proof: the
// deletes stay unconfirmed, so the Repair after, whose listing shows them,
// finds them kept and the Sync deletes them again. Before, the first
// listing's silence forgot them, and the two stayed in HNS for good,
// another program's, the load balancer holding its frontend.
func TestADeleteKeptThatOneListingLeavesOutIsStillDeletedAgain(t *testing.T) {
	e, r, kept := keptEnv(t)
	gone := lb("10.96.0.30", 443, rem("10.244.3.31", "192.168.0.3"))
	upsert(r, gone)
	e.converge(r)
	lbID, epID := e.hnsLB(gone.Key).ID, e.remoteID("10.244.3.31")
	if res := e.removeKept(r, gone.Key); res.Deleted != 2 {
		t.Fatalf("sync of the removal: %+v", res)
	}

	e.hns.SetFaults(sim.Faults{LeftOutOfListings: 1})
	if err := r.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	e.hns.SetFaults(sim.Faults{})
	if res := r.Sync(ctx); res.Deleted != 0 {
		t.Errorf("sync after the repair whose listing left them out: %+v, want nothing deleted", res)
	}
	e.repairDeletesKept(r, kept, lbID, epID)
}

// TestADeleteIsConfirmedBySilentListings: a delete HNS did apply is
// forgotten once silentListings Repairs' listings have not shown it, not
// before.
func TestADeleteIsConfirmedBySilentListings(t *testing.T) {
	e, r, _ := keptEnv(t)
	gone := lb("10.96.0.30", 443, loc("10.244.1.11"))
	upsert(r, gone)
	e.converge(r)
	remove(r, gone.Key)
	r.Sync(ctx)
	for i := 1; i <= silentListings; i++ {
		if n := len(r.unconfirmed.byID); n != 1 {
			t.Fatalf("before repair %d: %d deletes unconfirmed, want 1", i, n)
		}
		if err := r.Repair(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(r.unconfirmed.byID); n != 0 {
		t.Errorf("%d deletes unconfirmed after %d listings did not show them", n, silentListings)
	}
}

// TestCleanupWhoseConfirmingListingLeavesOutAKeptDelete: --cleanup's
// deletes are reported done and kept, and the first listing that would
// confirm them leaves them out. Cleanup lists again: the next listing shows
// them, so they are failures and the state file stays for the next run.
// Before, the one silent listing counted them deleted and removed the state
// file, and the kept objects were nobody's for good.
func TestCleanupWhoseConfirmingListingLeavesOutAKeptDelete(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	foreignLB, foreignEP := e.foreign()
	e.started(e.threeServices()...)

	e.hns.SetFaults(sim.Faults{KeptOnDelete: 1})
	res, err := Cleanup(ctx, &silentListing{Client: e.hns, silent: 2}, e.options())
	if err == nil || res.StateRemoved || len(res.Failed) != 6 || res.DeletedLoadBalancers+res.DeletedEndpoints != 0 {
		t.Fatalf("cleanup whose first confirming listing leaves out the kept deletes: %+v, %v; want 6 failures, the state kept", res, err)
	}
	if !strings.Contains(err.Error(), "still lists the object") {
		t.Errorf("error %q does not say HNS kept the objects", err)
	}

	e.hns.SetFaults(sim.Faults{})
	res, err = Cleanup(ctx, e.hns, e.options())
	if err != nil || !res.StateRemoved || res.DeletedLoadBalancers != 3 || res.DeletedEndpoints != 3 {
		t.Errorf("cleanup after HNS let go: %+v, %v", res, err)
	}
	e.assertOnlyForeignLeft(foreignLB, foreignEP)
}

// silentListing answers its silent-th listing of load balancers and of
// endpoints (counted apart, from 1) with nothing: a listing that leaves
// out every object.
type silentListing struct {
	hnslb.Client
	silent   int
	lbs, eps int
}

func (s *silentListing) ListLoadBalancers(ctx context.Context) ([]hnslb.LoadBalancer, error) {
	lbs, err := s.Client.ListLoadBalancers(ctx)
	if s.lbs++; s.lbs == s.silent {
		return nil, err
	}
	return lbs, err
}

func (s *silentListing) ListEndpoints(ctx context.Context) ([]hnslb.Endpoint, error) {
	eps, err := s.Client.ListEndpoints(ctx)
	if s.eps++; s.eps == s.silent {
		return nil, err
	}
	return eps, err
}
