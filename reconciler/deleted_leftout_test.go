package reconciler

import (
	"context"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
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

// TestARefusedFrontendWhoseListingLeftOutTheHolderIsAskedAgain: a
// Service's load balancer is deleted and HNS keeps it; a new Service on the
// same frontend is refused as taken, and the refusal's listing leaves the
// kept one out, answering that nothing holds the frontend. The next
// listing is asked, up to silentListings, and shows the holder, hnsproxy's
// own: deleted, and the new load balancer made. Before, the one silent
// listing took the port for a host process's, and the Service stayed off
// its frontend until the next drift repair (found by
// TestRandomHistoriesConverge once histories drew listing faults).
func TestARefusedFrontendWhoseListingLeftOutTheHolderIsAskedAgain(t *testing.T) {
	e, r, _ := keptEnv(t)
	old := lb("10.96.0.30", 443, loc("10.244.1.10"))
	upsert(r, old)
	e.converge(r)
	e.removeKept(r, old.Key)
	next := lb("10.96.0.30", 443, loc("10.244.1.11"))
	upsert(r, next)
	e.hns.SetFaults(sim.Faults{LeftOutOfListings: 1, LeftOutInARow: 1})
	res := e.answerAll(r, r.Sync(ctx))
	e.hns.SetFaults(sim.Faults{})
	if res.Failed != 0 || res.Pending != 0 {
		t.Errorf("sync after the lookups: %+v, want the new load balancer made", res)
	}
	e.assertRealized([]intent.LB{next})
}

// TestAKeptEndpointARefusalsListingLeftOutIsAskedAgain: a remote endpoint
// HNS kept after its delete holds a pod IP that a pod on another node now
// has; the new endpoint's create is refused as taken, and the refusal's
// listing leaves the kept one out. The next listing is asked, shows it,
// hnsproxy's own, and it is deleted for the new one. Before, the one
// silent listing took the address for one HNS reserves, and every Service
// the pod backs went without it until the next drift repair (found by
// TestRandomHistoriesConverge once histories drew listing faults).
func TestAKeptEndpointARefusalsListingLeftOutIsAskedAgain(t *testing.T) {
	e, r, _ := keptEnv(t)
	after, old := e.keptEndpointReused(r)
	e.hns.SetFaults(sim.Faults{LeftOutOfListings: 1, LeftOutInARow: 1})
	res := e.answerAll(r, r.Sync(ctx))
	e.hns.SetFaults(sim.Faults{})
	if res.Failed+res.Pending != 0 || e.hasObject(old) {
		t.Errorf("sync after the lookups: %+v; the kept endpoint still there: %v", res, e.hasObject(old))
	}
	if got := e.remoteAt("10.244.3.31"); got.ProviderAddress != "192.168.0.4" {
		t.Errorf("remote endpoint at 10.244.3.31 has provider address %q, want the new node's", got.ProviderAddress)
	}
	if err := r.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	e.converge(r)
	e.assertRealized([]intent.LB{after})
}
