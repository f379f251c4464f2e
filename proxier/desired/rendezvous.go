package desired

import (
	"cmp"
	"net/netip"
	"slices"
)

// Backend cap by rendezvous (highest-random-weight) hashing: each node ranks
// endpoints by a hash of (node name, endpoint IP) and keeps the top ones,
// local endpoints first. The ranking of two endpoints never depends on the
// others, so a node's subset is stable across syncs and restarts, one
// endpoint joining or leaving changes at most one slot, and different nodes
// keep different subsets. The hash is FNV-1a finished with a 64-bit mixer:
// stable across processes and Go versions, unlike hash/maphash.

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// nodeHash is the FNV-1a state after the node name and a separator.
func nodeHash(node string) uint64 {
	h := uint64(fnvOffset)
	for i := 0; i < len(node); i++ {
		h ^= uint64(node[i])
		h *= fnvPrime
	}
	h ^= 0xff // separator: 0xff never occurs in a node name (a DNS subdomain)
	h *= fnvPrime
	return h
}

func rendezvousWeight(node uint64, ip netip.Addr) uint64 {
	h := node
	b := ip.As16()
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime
	}
	// splitmix64 finalizer: FNV's low-entropy high bits would otherwise
	// favour some addresses.
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

// capEndpoints returns at most limit endpoints (all of them when limit <= 0
// or they fit): local ones first, each group by descending weight, ties by
// IP. The result is sorted by IP; dropped is how many were left out.
//
// spares are the next-ranked of those left out, one per local backend
// kept, in rank order: a local pod's HNS endpoint may not exist (the CNI
// has not made it, or it is gone), and only the reconciler can tell; it
// puts a spare in each such place (intent.LB.Spares), so that only
// backends HNS can realize compete for the cap.
func capEndpoints(eps []*endpoint, limit int) (kept, spares []*endpoint, dropped int) {
	if limit <= 0 || len(eps) <= limit {
		return eps, nil, 0
	}
	ranked := slices.Clone(eps)
	slices.SortFunc(ranked, func(a, b *endpoint) int {
		if a.local != b.local {
			if a.local {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(b.weight, a.weight); c != 0 {
			return c
		}
		return a.ip.Compare(b.ip)
	})
	kept = ranked[:limit:limit]
	locals := 0
	for _, e := range kept {
		if e.backend.Local { // the traffic policies' remote too (ownsPodAddress)
			locals++
		}
	}
	spares = ranked[limit:min(len(ranked), limit+locals)]
	slices.SortFunc(kept, compareEndpointIPs)
	return kept, spares, len(eps) - limit
}
