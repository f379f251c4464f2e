package reconciler

import "github.com/hnsproxy/hnsproxy/intent"

// Repair lists HNS without the lock, so syncs go on while it lists. The
// listing may then show an object a Sync changed meanwhile before or after
// the change, so Repair does not judge those: a listingChanges records what
// Syncs touched between the start of the listing and its end, and the next
// repair judges them.
type listingChanges struct {
	lbs map[intent.LBKey]struct{} // load balancers a Sync processed
	eps map[string]struct{}       // remote endpoint IPs a Sync processed
	ids map[string]struct{}       // HNS IDs a Sync recorded as owned
}

func newListingChanges() *listingChanges {
	return &listingChanges{lbs: map[intent.LBKey]struct{}{}, eps: map[string]struct{}{}, ids: map[string]struct{}{}}
}

// noteSync records the objects one Sync processed; nil-safe.
func (c *listingChanges) noteSync(lbs map[intent.LBKey]struct{}, ips []string) {
	if c == nil {
		return
	}
	for k := range lbs {
		c.lbs[k] = struct{}{}
	}
	for _, ip := range ips {
		c.eps[ip] = struct{}{}
	}
}

// noteOwned records an ID that became ours; nil-safe.
func (c *listingChanges) noteOwned(id string) {
	if c != nil {
		c.ids[id] = struct{}{}
	}
}

func (c *listingChanges) touchedLB(k intent.LBKey) bool { _, ok := c.lbs[k]; return ok }
func (c *listingChanges) touchedEP(ip string) bool      { _, ok := c.eps[ip]; return ok }
func (c *listingChanges) touchedID(id string) bool      { _, ok := c.ids[id]; return ok }
