package reconciler

import (
	"fmt"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// A listing that leaves out what a failed create left (sim
// Faults.LeftOutOfListings) does not end the search for it: the failed
// create is remembered until a listing finds its leftover or
// silentListings listings have looked. Before, the one listing that
// looked forgot it, and the load balancer without port mappings was
// nobody's for good; holding its frontend, it kept the Service off it
// (the fault soak). Whether the listing left out is a drift repair's or a
// restart's, and whether the leftover holds the frontend or not.
func TestALeftoverOneListingLeavesOutIsStillDeleted(t *testing.T) {
	for _, holds := range []bool{false, true} {
		for _, where := range []string{"repair", "start"} {
			t.Run(fmt.Sprintf("%s/holds-%v", where, holds), func(t *testing.T) {
				e := newEnv(t, sim.ProfileWS2022)
				r, d := e.failedCreate(holds)
				e.hns.SetFaults(sim.Faults{LeftOutOfListings: 1})
				if where == "start" {
					r, _ = e.start(e.hns, d) // killed: a new process starts on the same state file
				} else if err := r.Repair(ctx); err != nil {
					t.Fatal(err)
				}
				e.hns.SetFaults(sim.Faults{})
				e.leftOutSettles(r)
				if left := e.portless(); len(left) != 0 {
					t.Errorf("load balancers without port mappings %v left in HNS, want the failed create's deleted", left)
				}
				e.assertRealized([]intent.LB{d})
				e.assertStateFileMatchesHNS()
				if s := e.stateOnDisk(); len(s.FailedLoadBalancerCreates) != 0 {
					t.Errorf("state file still remembers failed creates %v after its leftover was found", s.FailedLoadBalancerCreates)
				}
			})
		}
	}
}

// After silentListings listings found nothing, a failed create is
// forgotten, in the state file too: most failed creates leave nothing.
func TestAFailedCreateIsForgottenAfterItsLooks(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	r, _ := e.failedCreate(false)
	if err := e.hns.DeleteLoadBalancer(ctx, e.portless()[0]); err != nil { // it left nothing
		t.Fatal(err)
	}
	for look := 1; look <= silentListings; look++ {
		if err := r.Repair(ctx); err != nil {
			t.Fatal(err)
		}
		e.converge(r)
		remembered := len(e.stateOnDisk().FailedLoadBalancerCreates)
		if want := map[bool]int{true: 1, false: 0}[look < silentListings]; remembered != want {
			t.Errorf("after %d listings looked, the state file remembers %d failed creates, want %d", look, remembered, want)
		}
	}
}

// A load balancer without port mappings on a carried declaration's VIP is
// not claimed by a repair during whose listing a Sync processed a key on
// that VIP: HNS's create is not known to be atomic, so it may be that
// Sync's create, part made. The next repair, with nothing processed
// there, claims and deletes it.
func TestACarriedVIPASyncWroteDuringTheListingIsLeftToTheNextRepair(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	e.local("10.244.1.11")
	other := e.local("10.244.1.12")
	r := e.started()
	d := e.backedLB("10.244.1.10", "10.96.0.40", false, intent.OriginClusterIP, false)
	upsert(r, d)
	e.createTried(r, hnslb.CodeManagerStopped, 0) // declared, not made; hnsproxy killed then

	r = e.reconciler()
	upsert(r, d)
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if !has(r.carried.lbs, d.Key) {
		t.Fatalf("%s is not carried after the restart", d.Key)
	}
	// Not what the failed create sent (another backend): only the carried
	// declaration can claim it.
	part, err := e.hns.PutLoadBalancerOutOfBand(hnslb.LoadBalancer{FrontendVIPs: []string{d.Key.VIP}, SourceVIP: d.SourceVIP, HostComputeEndpoints: []string{other}})
	if err != nil {
		t.Fatal(err)
	}
	e.hns.SetFaults(sim.Faults{HangReply: []sim.Op{sim.OpListLoadBalancers}})
	repaired := make(chan error, 1)
	go func() { repaired <- r.Repair(ctx) }()
	if err := e.hns.WaitHeld(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if res := r.Sync(ctx); res.Created != 1 {
		t.Fatalf("sync during the listing: %+v, want %s created", res, d.Key)
	}
	e.hns.SetFaults(sim.Faults{})
	if err := <-repaired; err != nil {
		t.Fatal(err)
	}
	e.converge(r)
	if !e.hasLB(part.ID) {
		t.Fatalf("the repair whose listing a Sync wrote %s during claimed %s on its VIP", d.Key, part.ID)
	}
	if err := r.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	e.converge(r)
	if e.hasLB(part.ID) {
		t.Errorf("the next repair left %s, without port mappings on the carried VIP", part.ID)
	}
	e.assertRealized([]intent.LB{d})
}
