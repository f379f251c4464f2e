package reconciler

import (
	"errors"
	"os"
	"testing"

	"github.com/hnsproxy/hnsproxy/sim"
)

// A corrupt snapshot is set aside and its Start is a takeover, as nothing
// tells hnsproxy's load balancers from others'. When that Start fails
// later (HNS not answering its listing, as at boot) and is retried, the
// journal is still there without its snapshot: it holds only the changes
// since that snapshot, so the retry has lost the same ownership and must
// take over too. Here a tenant's external-IP load balancer hnsproxy made,
// recorded only in the lost snapshot, is adopted, not reported as another
// agent's.
func TestRetriedStartAfterACorruptSnapshotTakesOver(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	e.local("10.244.1.60")
	want := append(e.threeServices(), externalLB("203.0.113.5", 80, loc("10.244.1.60")))
	r := e.started(want...)
	if err := r.compactState(); err != nil { // the tenant's load balancer in the snapshot
		t.Fatal(err)
	}
	more := moreServices(1)[0] // and a change after it in the journal
	upsert(r, more)
	e.converge(r)
	want = append(want, more)
	if err := os.WriteFile(e.stateFile, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}

	restarted := e.reconciler()
	upsert(restarted, want...)
	e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpListLoadBalancers: 1}})
	if err := restarted.Start(ctx); err == nil {
		t.Fatal("Start succeeded while HNS refused its listing")
	}
	e.hns.SetFaults(sim.Faults{})
	if err := restarted.Start(ctx); err != nil {
		t.Fatalf("retried Start: %v", err)
	}
	res := restarted.Sync(ctx)
	for _, err := range res.Errors {
		if held := new(ForeignFrontendError); errors.As(err, &held) {
			t.Errorf("hnsproxy's own load balancer %s on a tenant's frontend is reported as another agent's", held.ID)
		}
	}
	if res.Failed+res.Pending != 0 {
		t.Errorf("first Sync after the retried Start: %+v", res)
	}
}
