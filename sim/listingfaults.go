package sim

// A listing through hcn is not one answer from HNS: hcn enumerates the IDs
// a query matches, then opens, queries and closes each object (hcsshim
// hcn/hcnloadbalancer.go enumerateLoadBalancers, hcn/hcnendpoint.go
// enumerateEndpoints), and HNS is not transactional. No public capture
// shows a listing answer the same object twice, but nothing in that
// sequence rules it out, so it is a fault (Faults.ListedTwice): a caller
// must not take a duplicate for a second object.

// listedTimes draws how many times a listing answers one object: 1, or 2
// (listed twice). Without the fault it draws nothing, so the other faults'
// draws stay as they were. Called with h.mu held.
func (h *HNS) listedTimes() int {
	if h.faults.ListedTwice > 0 && h.faultRng.Float64() < h.faults.ListedTwice {
		return 2
	}
	return 1
}
