package reconciler

import "github.com/hnsproxy/hnsproxy/intent"

// Repair lists HNS without the lock, so syncs go on while it lists. The
// listing may then show an object a Sync changed meanwhile before or after
// the change, so Repair does not judge those: a listingChanges records what
// Syncs touched between the start of the listing and its end, and the next
// repair judges them. Nor does it judge an object an abandoned call
// (deadline.go) held as the listing began: HNS may have applied the call
// before the listing read it, though the call returned only later.
type listingChanges struct {
	lbs  map[intent.LBKey]struct{} // load balancers a Sync processed
	eps  map[string]struct{}       // remote endpoint IPs a Sync processed
	ids  map[string]struct{}       // HNS IDs a Sync recorded as owned
	busy map[string]struct{}       // tokens abandoned calls held as the listing began
}

func newListingChanges(busy map[string]struct{}) *listingChanges {
	return &listingChanges{lbs: map[intent.LBKey]struct{}{}, eps: map[string]struct{}{}, ids: map[string]struct{}{}, busy: busy}
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

// keepIndexChanges is the local endpoint index a listing found, except
// where Syncs changed the index while it listed (a pod's endpoint found, or
// forgotten after HNS said it was gone): there the Sync's view is newer.
func keepIndexChanges(listed, before, now map[string]string) map[string]string {
	keep := func(ip string) {
		if id, ok := now[ip]; ok {
			listed[ip] = id
		} else {
			delete(listed, ip)
		}
	}
	for ip, id := range now {
		if before[ip] != id {
			keep(ip)
		}
	}
	for ip := range before {
		if _, ok := now[ip]; !ok {
			keep(ip)
		}
	}
	return listed
}

func (c *listingChanges) touchedLB(k intent.LBKey) bool { _, ok := c.lbs[k]; return ok }
func (c *listingChanges) touchedEP(ip string) bool      { _, ok := c.eps[ip]; return ok }
func (c *listingChanges) touchedID(id string) bool      { _, ok := c.ids[id]; return ok }

// unjudged reports whether a Repair leaves the object named by tokens to
// the next one: an abandoned call on it runs now, or ran as the listing
// began.
func (r *Reconciler) unjudged(c *listingChanges, tokens ...string) bool {
	if r.client.busy(tokens...) {
		return true
	}
	for _, t := range tokens {
		if t != "" && has(c.busy, t) {
			return true
		}
	}
	return false
}
