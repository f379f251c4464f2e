package reconciler

import "github.com/hnsproxy/hnsproxy/hnslb"

// A listing is hcn's enumeration of IDs followed by a read of each object,
// and HNS is not transactional (docs/simulator.md, listing faults): nothing
// rules out one answering the same object twice. Start takes every listed
// object it cannot match to a desired one for a duplicate of ours, or one
// in the way, and deletes it: a load balancer listed twice was adopted and
// then deleted as its own duplicate, cutting its Service until a Sync made
// it again (TestARestartWhoseListingAnswersEachObjectTwiceDeletesNothing).
// So the slice listings enter the reconciler (deadline_calls.go) with each
// ID once, after its GUIDs are lower-cased; the walks feed maps by ID.

// onceByID keeps the first object of each ID, in listing order; it reuses
// docs' array.
func onceByID[T any](docs []T, id func(*T) string) []T {
	if len(docs) < 2 {
		return docs
	}
	seen := make(map[string]struct{}, len(docs))
	out := docs[:0]
	for i := range docs {
		k := id(&docs[i])
		if _, dup := seen[k]; dup {
			continue
		}
		seen[k] = struct{}{}
		out = append(out, docs[i])
	}
	clear(docs[len(out):]) // no stale copies held past the new length
	return out
}

func lbID(lb *hnslb.LoadBalancer) string { return lb.ID }
func epID(ep *hnslb.Endpoint) string     { return ep.ID }
