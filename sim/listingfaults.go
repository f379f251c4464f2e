package sim

import "strings"

// A listing through hcn is not one answer from HNS: hcn enumerates the IDs
// a query matches, then opens, queries and closes each object (hcsshim
// hcn/hcnloadbalancer.go enumerateLoadBalancers, hcn/hcnendpoint.go
// enumerateEndpoints), and HNS is not transactional. No public capture
// shows a listing answer the same object twice, or leave out one HNS holds,
// but nothing in that sequence rules either out, so both are faults
// (Faults.ListedTwice, Faults.LeftOutOfListings): a caller must not take a
// duplicate for a second object, nor one listing's silence for a delete.
// A get by ID or by name is such a listing, filtered, in hcn; whether HNS
// ever leaves an object out of one is a fault of its own
// (Faults.GetsLeaveOut).

// listedTimes draws how many times a listing answers the object id: 0
// (left out), 1, or 2 (listed twice). Without either fault it draws
// nothing, so the other faults' draws stay as they were. Called with h.mu
// held.
func (h *HNS) listedTimes(id string) int {
	if h.leftOut(id) {
		return 0
	}
	if h.faults.ListedTwice > 0 && h.faultRng.Float64() < h.faults.ListedTwice {
		return 2
	}
	return 1
}

// leftOutOfGet draws whether a get by ID or by name answers "not found"
// for the object id, which HNS holds (Faults.GetsLeaveOut); a get never
// answers one object twice. Called with h.mu held.
func (h *HNS) leftOutOfGet(id string) bool {
	return h.faults.GetsLeaveOut && h.leftOut(strings.ToLower(id))
}

// leftOut draws whether a listing, or a get, leaves out the object id (in
// lower case); past Faults.LeftOutInARow of them in a row that left it
// out, the next shows it.
func (h *HNS) leftOut(id string) bool {
	if h.faults.LeftOutOfListings > 0 && h.faultRng.Float64() < h.faults.LeftOutOfListings {
		if h.faults.LeftOutInARow <= 0 {
			return true
		}
		if h.leftOutRuns[id] < h.faults.LeftOutInARow {
			h.leftOutRuns[id]++
			return true
		}
	}
	delete(h.leftOutRuns, id)
	return false
}
