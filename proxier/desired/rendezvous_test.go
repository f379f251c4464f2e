package desired

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"

	"github.com/hnsproxy/hnsproxy/intent"
)

func candidates(node string, ips []netip.Addr, locals map[netip.Addr]bool) []*endpoint {
	h := nodeHash(node)
	out := make([]*endpoint, len(ips))
	for i, ip := range ips {
		out[i] = &endpoint{ip: ip, local: locals[ip], ready: true, serving: true, weight: rendezvousWeight(h, ip),
			backend: intent.Backend{IP: ip.String(), Local: locals[ip]}}
	}
	slices.SortFunc(out, compareEndpointIPs)
	return out
}

func ipSet(eps []*endpoint) map[netip.Addr]bool {
	m := map[netip.Addr]bool{}
	for _, e := range eps {
		m[e.ip] = true
	}
	return m
}

// slotChanges counts endpoints in a but not in b.
func slotChanges(a, b []*endpoint) int {
	in := ipSet(b)
	n := 0
	for _, e := range a {
		if !in[e.ip] {
			n++
		}
	}
	return n
}

func randomIPs(rng *rand.Rand, n int) []netip.Addr {
	seen := map[netip.Addr]bool{}
	var out []netip.Addr
	for len(out) < n {
		ip := netip.AddrFrom4([4]byte{10, byte(rng.IntN(4)), byte(rng.IntN(256)), byte(rng.IntN(254) + 1)})
		if !seen[ip] {
			seen[ip] = true
			out = append(out, ip)
		}
	}
	return out
}

func TestRendezvousJoinLeaveMovesAtMostOneSlot(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 300 {
		n, limit := 20+rng.IntN(200), 1+rng.IntN(64)
		ips := randomIPs(rng, n+1)
		locals := map[netip.Addr]bool{}
		for _, ip := range ips {
			if rng.IntN(10) == 0 {
				locals[ip] = true
			}
		}
		node := fmt.Sprintf("node-%d", trial)
		before, _, _ := capEndpoints(candidates(node, ips[:n], locals), limit)
		after, _, _ := capEndpoints(candidates(node, ips, locals), limit) // one joins
		if c := slotChanges(before, after); c > 1 {
			t.Fatalf("trial %d: a join changed %d slots", trial, c)
		}
		if len(after) != min(n+1, limit) {
			t.Fatalf("trial %d: %d kept, want %d", trial, len(after), min(n+1, limit))
		}
		gone := ips[rng.IntN(n)]
		left := slices.DeleteFunc(slices.Clone(ips[:n]), func(ip netip.Addr) bool { return ip == gone })
		afterLeave, _, _ := capEndpoints(candidates(node, left, locals), limit) // one leaves
		if c := slotChanges(afterLeave, before); c > 1 {
			t.Fatalf("trial %d: a leave changed %d slots", trial, c)
		}
	}
}

func TestRendezvousLocalFirstAndStable(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	ips := randomIPs(rng, 100)
	locals := map[netip.Addr]bool{ips[3]: true, ips[50]: true, ips[99]: true}
	kept, _, dropped := capEndpoints(candidates("node-a", ips, locals), 10)
	if dropped != 90 || len(kept) != 10 {
		t.Fatalf("kept %d dropped %d", len(kept), dropped)
	}
	set := ipSet(kept)
	for ip := range locals {
		if !set[ip] {
			t.Errorf("local %s not kept", ip)
		}
	}
	// Same inputs in another order, in another "process": same subset.
	shuffledIPs := slices.Clone(ips)
	rng.Shuffle(len(shuffledIPs), func(a, b int) { shuffledIPs[a], shuffledIPs[b] = shuffledIPs[b], shuffledIPs[a] })
	again, _, _ := capEndpoints(candidates("node-a", shuffledIPs, locals), 10)
	if slotChanges(kept, again) != 0 {
		t.Error("subset depends on input order")
	}
	// More locals than the cap: locals only, still by weight.
	many := map[netip.Addr]bool{}
	for _, ip := range ips[:20] {
		many[ip] = true
	}
	kept, _, _ = capEndpoints(candidates("node-a", ips, many), 10)
	for _, e := range kept {
		if !e.local {
			t.Errorf("remote %s kept while locals exceed the cap", e.ip)
		}
	}
}

func TestRendezvousNodesDiffer(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	ips := randomIPs(rng, 200)
	const nodes, limit = 40, 20
	covered := map[netip.Addr]bool{}
	var subsets []map[netip.Addr]bool
	for i := range nodes {
		kept, _, _ := capEndpoints(candidates(fmt.Sprintf("win-%02d", i), ips, nil), limit)
		s := ipSet(kept)
		for ip := range s {
			covered[ip] = true
		}
		for j, o := range subsets {
			same := 0
			for ip := range s {
				if o[ip] {
					same++
				}
			}
			// Independent random subsets of 20 from 200 share about 2.
			if same > limit/2 {
				t.Errorf("nodes %d and %d share %d of %d backends", i, j, same, limit)
			}
		}
		subsets = append(subsets, s)
	}
	// 40 nodes × 20 slots over 200 endpoints should reach nearly all.
	if len(covered) < 180 {
		t.Errorf("only %d of %d endpoints reached by any node", len(covered), len(ips))
	}
}

func TestRendezvousWeightIsStable(t *testing.T) {
	// Pinned values: the ranking must not change between releases, or every
	// node would reshuffle its subset on upgrade.
	h := nodeHash("node-a")
	got := []uint64{rendezvousWeight(h, addr("10.1.0.2")), rendezvousWeight(h, addr("fd01::2"))}
	want := []uint64{0xd062e9163d8f17b6, 0x2514cb00aacfeaa6}
	if !slices.Equal(got, want) {
		t.Errorf("weights = %#x, want %#x", got, want)
	}
	// And it is what its doc says: FNV-1a (as hash/fnv computes it) of
	// name, 0xff, 16-byte address, then the splitmix64 finalizer.
	for i, ip := range []string{"10.1.0.2", "fd01::2"} {
		f := fnv.New64a()
		f.Write([]byte("node-a\xff"))
		b := addr(ip).As16()
		f.Write(b[:])
		x := f.Sum64()
		x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
		x = (x ^ x>>27) * 0x94d049bb133111eb
		x ^= x >> 31
		if x != got[i] {
			t.Errorf("%s: weight %#x, reference %#x", ip, got[i], x)
		}
	}
	if rendezvousWeight(nodeHash("node-b"), addr("10.1.0.2")) == got[0] {
		t.Error("node name does not change the weight")
	}
}

// TestSparesStandReadyForLocals (F10): over the cap, the next-ranked
// candidates left out are handed down as spares, one per local backend
// kept (only a local pod's HNS endpoint can be missing), in rank order.
func TestSparesStandReadyForLocals(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	ips := randomIPs(rng, 30)
	locals := map[netip.Addr]bool{ips[1]: true, ips[2]: true, ips[3]: true, ips[4]: true, ips[5]: true}
	kept, spares, _ := capEndpoints(candidates("node-a", ips, locals), 3)
	if len(kept) != 3 || len(spares) != 3 {
		t.Fatalf("kept %d, spares %d; want 3 and 3 (one per local kept)", len(kept), len(spares))
	}
	if !spares[0].local || !spares[1].local || spares[2].local {
		t.Errorf("spares must follow the rank: the two locals left, then the best remote")
	}
	in := ipSet(kept)
	for _, s := range spares {
		if in[s.ip] {
			t.Errorf("spare %s is also kept", s.ip)
		}
	}
	// No local kept: nothing can be missing, no spares.
	if _, spares, _ := capEndpoints(candidates("node-a", ips, nil), 3); len(spares) != 0 {
		t.Errorf("spares without locals: %d", len(spares))
	}
	// Under the cap: no spares.
	if _, spares, _ := capEndpoints(candidates("node-a", ips[:3], locals), 3); spares != nil {
		t.Errorf("spares under the cap: %d", len(spares))
	}
}

// TestSparesRemoteEndpointsAreDesired: a remote spare's endpoint is in the
// desired set, so it exists the moment the spare stands in.
func TestSparesRemoteEndpointsAreDesired(t *testing.T) {
	cfg := config()
	cfg.MaxBackends = 1
	in := ServiceInput{Service: service("web"), Slices: slicesOf(twoEndpoints()...)} // 10.1.0.2 local, 10.1.0.3 remote
	s := Compute([]ServiceInput{in}, cfg)
	lb := s.LBs[key("10.0.0.1", 80)]
	if len(lb.Backends) != 1 || !lb.Backends[0].Local || len(lb.Spares) != 1 || lb.Spares[0].IP != "10.1.0.3" {
		t.Fatalf("load balancer %+v", lb)
	}
	if _, ok := s.RemoteEndpoints["10.1.0.3"]; !ok {
		t.Error("the remote spare has no desired endpoint")
	}
}
