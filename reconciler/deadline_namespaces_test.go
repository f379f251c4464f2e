package reconciler

import (
	"slices"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// A Sync lists the node's namespaces to find a new pod's endpoint, holding
// the lock the sync loop waits for: that listing has the call deadline, as
// every other call of a Sync, so a hung HNS holds the loop one call
// deadline, not the listing deadline (two minutes by default) meant for
// the listings beside it.
func TestANamespaceListingInASyncHasTheCallDeadline(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	w := e.withHangWatch(0)
	e.local("10.244.1.10")
	first := lb("10.96.0.10", 80, loc("10.244.1.10"))
	r := w.watch(e.started(first))
	e.local("10.244.1.20") // a pod after Start: its endpoint is found through its namespace
	e.hns.SetFaults(sim.Faults{Hang: []sim.Op{sim.OpListNamespaces}})
	added := lb("10.96.0.20", 80, loc("10.244.1.20"))
	upsert(r, added)
	done := make(chan SyncResult, 1)
	go func() { done <- r.Sync(ctx) }()
	if err := e.hns.WaitHeld(ctx, 1); err != nil {
		t.Fatal(err)
	}
	e.clock.Step(DefaultCallTimeout)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		e.clock.Step(DefaultListTimeout)
		<-done
		t.Fatal("a Sync whose namespace listing hung still waited one call deadline later")
	}
	if got := w.ops(); !slices.Equal(got, []string{hnslb.OpListNamespaces}) {
		t.Errorf("timed-out operations %v, want the namespace listing", got)
	}
	e.hns.SetFaults(sim.Faults{})
	<-w.returned
	e.converge(r)
	e.assertRealized([]intent.LB{first, added})
}
