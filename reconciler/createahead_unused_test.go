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
	e.assertRealized(lbs)
	if held := r.foreignHeldList(); len(held) != 0 {
		t.Errorf("frontends taken for a tenant's: %v", held)
	}
	for _, got := range e.snapshot().LoadBalancers {
		if _, ours := r.ownedLBs[got.ID]; !ours || !slices.ContainsFunc(lbs, func(d intent.LB) bool { return e.hnsLB(d.Key) != nil && e.hnsLB(d.Key).ID == got.ID }) {
			t.Errorf("load balancer %s on %v is left over", got.ID, got.FrontendVIPs)
		}
	}
}
