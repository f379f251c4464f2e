package sim

// A listing through hcn is not one answer from HNS: hcn enumerates the IDs
// a query matches, then opens, queries and closes each object (hcsshim
// hcn/hcnloadbalancer.go enumerateLoadBalancers, hcn/hcnendpoint.go
// enumerateEndpoints), and HNS is not transactional. No public capture
// shows a listing answer the same object twice, or leave out one HNS holds,
// but nothing in that sequence rules either out, so both are faults
// (Faults.ListedTwice, Faults.LeftOutOfListings): a caller must not take a
// duplicate for a second object, nor one listing's silence for a delete.

// listedTimes draws how many times a listing answers the object id: 0
// (left out), 1, or 2 (listed twice); past Faults.LeftOutInARow listings
// in a row that left it out, the next lists it. Without either fault it
// draws nothing, so the other faults' draws stay as they were. Called with
// h.mu held.
func (h *HNS) listedTimes(id string) int {
	if h.faults.LeftOutOfListings > 0 && h.faultRng.Float64() < h.faults.LeftOutOfListings {
		if h.faults.LeftOutInARow <= 0 {
			return 0
		}
		if h.leftOutRuns[id] < h.faults.LeftOutInARow {
			h.leftOutRuns[id]++
			return 0
		}
	}
	delete(h.leftOutRuns, id)
	if h.faults.ListedTwice > 0 && h.faultRng.Float64() < h.faults.ListedTwice {
		return 2
	}
	return 1
}
