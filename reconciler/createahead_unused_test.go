package reconciler

import (
	"context"
	"slices"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

// failDeletes times out every load balancer delete while on, the
// load balancer left in place (a reply lost, or HNS too slow).
type failDeletes struct {
	hnslb.Client
	on bool
}

func (c *failDeletes) DeleteLoadBalancer(ctx context.Context, id string) error {
	if c.on {
		return hnslb.NewError("delete_load_balancer", hnslb.CodeTimeout, "This operation returned because the timeout period expired.")
	}
	return c.Client.DeleteLoadBalancer(ctx, id)
}

// TestUnusedCreatesMadeAheadStayOursWhenTheirDeleteFails: a load balancer
// made ahead that its turn no longer wants is deleted; when that delete
// fails it is still hnsproxy's, to delete later, not an unowned load
// balancer that the next Sync takes for a tenant's (found by the fault
// soak, seed 3: a leak on an ingress IP, reported as a foreign conflict).
// Adopted for its key meanwhile, it is no longer deleted.
func TestUnusedCreatesMadeAheadStayOursWhenTheirDeleteFails(t *testing.T) {
	var deletes *failDeletes
	e, r, _, lbs := startWithTurnsMadeAhead(t, externalLB, func(c hnslb.Client) hnslb.Client {
		deletes = &failDeletes{Client: c, on: true}
		return deletes
	})
	for _, got := range e.snapshot().LoadBalancers {
		if _, ours := r.ownedLBs[got.ID]; !ours {
			t.Errorf("load balancer %s on %v left in HNS unowned after its delete failed", got.ID, got.FrontendVIPs)
		}
	}
	// Deletes still failing, the next Sync adopts, for its key, the one made
	// ahead with the document now wanted again: no longer to be deleted.
	r.Sync(ctx)
	deletes.on = false
	e.converge(r)
	assertOnlyRealizedAndOurs(t, e, r, lbs)
}

// assertOnlyRealizedAndOurs checks that HNS holds lbs as realized, that no
// frontend is taken for a tenant's, and that every load balancer in HNS is
// hnsproxy's and one of lbs'.
func assertOnlyRealizedAndOurs(t *testing.T, e *env, r *Reconciler, lbs []intent.LB) {
	t.Helper()
	e.assertRealized(lbs)
	if held := r.foreignHeldList(); len(held) != 0 {
		t.Errorf("frontends taken for a tenant's: %v", held)
	}
	for _, got := range e.snapshot().LoadBalancers {
		if _, ours := r.ownedLBs[got.ID]; !ours || !slices.ContainsFunc(lbs, func(d intent.LB) bool { return e.hnsLB(d.Key) != nil && e.hnsLB(d.Key).ID == got.ID }) {
			t.Errorf("load balancer %s on %v is left over (ours %v)", got.ID, got.FrontendVIPs, ours)
		}
	}
}

// commitCreates applies the first create of a load balancer on each of
// vips and answers it with a timeout: HNS made it, the reply was lost.
type commitCreates struct {
	hnslb.Client
	vips map[string]bool
}

func (c *commitCreates) CreateLoadBalancer(ctx context.Context, lb *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	if len(lb.FrontendVIPs) == 0 || !c.vips[lb.FrontendVIPs[0]] {
		return c.Client.CreateLoadBalancer(ctx, lb)
	}
	delete(c.vips, lb.FrontendVIPs[0])
	if _, err := c.Client.CreateLoadBalancer(ctx, lb); err != nil {
		return nil, err
	}
	return nil, hnslb.NewError("create_load_balancer", hnslb.CodeTimeout, "This operation returned because the timeout period expired.")
}

// TestCreatesMadeAheadWithALostReplyAreNotLeftForeign: a load balancer
// made ahead whose reply was lost (HNS made it) and that its turn no longer
// wants as made (another document, or none) may be in HNS; it must not be
// left there unowned, where on a tenant's frontend hnsproxy would take it
// for another agent's and never program that frontend again (found by the
// fault soak, seed 5, with HNS restarts that drop remote endpoints: a leak
// and a frontend held by an older document of its own).
func TestCreatesMadeAheadWithALostReplyAreNotLeftForeign(t *testing.T) {
	for _, afterStart := range []bool{false, true} {
		t.Run(map[bool]string{false: "first Sync", true: "after the takeover"}[afterStart], func(t *testing.T) {
			checkCreatesMadeAheadWithALostReply(t, afterStart)
		})
	}
}

// checkCreatesMadeAheadWithALostReply runs startWithTurnsMadeAhead's
// three load balancers with lost replies on the tenants' frontends, in the
// first Sync (a takeover, where a foreign holder is replaced anyway) or in
// a later one (where it is not).
func checkCreatesMadeAheadWithALostReply(t *testing.T, afterStart bool) {
	wrap := func(c hnslb.Client) hnslb.Client {
		return &commitCreates{Client: c, vips: map[string]bool{"10.96.0.2": true, "10.96.0.3": true}}
	}
	var e *env
	var r *Reconciler
	var lbs []intent.LB
	if afterStart {
		e, r, lbs = startThenTurnsMadeAhead(t, externalLB, wrap)
	} else {
		e, r, _, lbs = startWithTurnsMadeAhead(t, externalLB, wrap)
	}
	e.converge(r)
	assertOnlyRealizedAndOurs(t, e, r, lbs)
}

// startThenTurnsMadeAhead is startWithTurnsMadeAhead with the three load
// balancers given after the first Sync, so that their creates are made
// ahead in a later one, past the takeover.
func startThenTurnsMadeAhead(t *testing.T, newLB func(string, uint16, ...intent.Backend) intent.LB, wrap func(hnslb.Client) hnslb.Client) (*env, *Reconciler, []intent.LB) {
	e, c, lbs := turnsMadeAhead(t, newLB, wrap)
	r, _ := e.start(c)
	upsert(r, lbs...)
	r.Sync(ctx)
	return e, r, lbs
}
