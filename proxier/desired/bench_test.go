package desired

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"runtime"
	"slices"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/internal/liveheap"
)

// benchInputs: n Services (NodePort, one external IP each) × 10 endpoints
// in two slices, a third of them local.
func benchInputs(n int) []ServiceInput {
	out := make([]ServiceInput, n)
	for i := range n {
		var eps []discoveryv1.Endpoint
		for j := range 10 {
			e := ep(fmt.Sprintf("10.%d.%d.%d", 1+i/(250*25), (i/25)%250, (i%25)*10+j+1))
			if j%3 == 0 {
				e = ep(e.Addresses[0], local)
			}
			eps = append(eps, e)
		}
		out[i] = ServiceInput{
			Service: service(fmt.Sprintf("svc-%05d", i),
				clusterIPs(fmt.Sprintf("10.96.%d.%d", i/250, i%250+1)),
				nodePorts(int32(30000+i%2700)),
				externalIPs(fmt.Sprintf("203.0.%d.%d", i/250, i%250+1))),
			Slices: slicesOf(
				slice(fmt.Sprintf("svc-%05d-a", i), 8080, eps[:5]...),
				slice(fmt.Sprintf("svc-%05d-b", i), 8080, eps[5:]...),
			),
		}
	}
	return out
}

// BenchmarkForService maps n Services one by one, without the node state:
// the cost of the mapping alone.
func BenchmarkForService(b *testing.B) {
	for _, n := range []int{1, 1000, 10000} {
		b.Run(fmt.Sprintf("services=%d", n), func(b *testing.B) {
			cfg := config()
			in := benchInputs(n)
			b.ReportAllocs()
			for b.Loop() {
				for i := range in {
					if r := ForService(in[i], cfg); len(r.LBs) != 3 {
						b.Fatalf("got %d load balancers", len(r.LBs))
					}
				}
			}
		})
	}
}

func BenchmarkCompute(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("services=%d", n), func(b *testing.B) {
			cfg := config()
			overlay(&cfg)
			in := benchInputs(n)
			b.ReportAllocs()
			for b.Loop() {
				s := Compute(in, cfg)
				if len(s.Services) != n {
					b.Fatalf("got %d services", len(s.Services))
				}
			}
		})
	}
}

// BenchmarkIncrementalSet is the proxier's path: one Service's endpoints
// changed in a 10k-Service state.
func BenchmarkIncrementalSet(b *testing.B) {
	cfg := config()
	in := benchInputs(10000)
	s := Compute(in, cfg)
	one := in[5000]
	alt := one
	alt.Slices = one.Slices[:1]
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		x := one
		if i%2 == 0 {
			x = alt
		}
		i++
		if ch := s.Set(ForService(x, cfg)); len(ch.LBs) == 0 {
			b.Fatal("no change")
		}
	}
}

// BenchmarkForServiceOverlayNodes maps one Service on an overlay network
// whose remote subnet routes name 100 or 5,000 nodes: the per-change cost
// must not grow with the node count.
func BenchmarkForServiceOverlayNodes(b *testing.B) {
	for _, nodes := range []int{100, 5000} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			cfg := config()
			overlay(&cfg)
			cfg.RemoteSubnets = NewRemoteSubnetIndex(nodeRoutes(nodes))
			in := benchInputs(1)[0]
			b.ReportAllocs()
			for b.Loop() {
				if r := ForService(in, cfg); len(r.LBs) != 3 {
					b.Fatalf("got %d load balancers", len(r.LBs))
				}
			}
		})
	}
}

// nodeRoutes are the remote subnet routes of n nodes: 10.x.y.0/24 each,
// the first holding the benchmarks' endpoints.
func nodeRoutes(n int) []RemoteSubnet {
	routes := make([]RemoteSubnet, 0, n)
	for i := range n {
		routes = append(routes, RemoteSubnet{
			Prefix:          netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(1 + i/256), byte(i % 256), 0}), 24),
			ProviderAddress: netip.AddrFrom4([4]byte{192, 168, byte(i / 256), byte(i % 256)}),
		})
	}
	return routes
}

// BenchmarkRoutesReadAgain is what a read of 5,000 nodes' routes costs the
// index: unchanged (each drift repair's read, HNS's return) it keeps the
// index it has; moved (a node's provider address changed) it builds one;
// "new index" is what every read built before session 61.
func BenchmarkRoutesReadAgain(b *testing.B) {
	routes := nodeRoutes(5000)
	ix := NewRemoteSubnetIndex(routes)
	moved := slices.Clone(routes)
	moved[77].ProviderAddress = netip.MustParseAddr("192.168.200.1")
	for _, c := range []struct {
		name  string
		read  []RemoteSubnet
		index func([]RemoteSubnet) *RemoteSubnetIndex
	}{
		{"unchanged", routes, ix.Reindexed},
		{"moved", moved, ix.Reindexed},
		{"new-index", routes, NewRemoteSubnetIndex},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if got := c.index(c.read); got.Len() != len(routes) {
					b.Fatalf("%d routes", got.Len())
				}
			}
		})
	}
}

// BenchmarkRemoteSubnetsOf is the routes taken from a network whose
// policies route 5,000 nodes, as each read of them does.
func BenchmarkRemoteSubnetsOf(b *testing.B) {
	n := &hnslb.Network{}
	for _, r := range nodeRoutes(5000) {
		s, err := json.Marshal(hnslb.RemoteSubnetRoutePolicySetting{DestinationPrefix: r.Prefix.String(), IsolationId: 4096,
			ProviderAddress: r.ProviderAddress.String(), DistributedRouterMacAddress: "00-15-5d-aa-bb-cc"})
		if err != nil {
			b.Fatal(err)
		}
		n.Policies = append(n.Policies, hnslb.NetworkPolicy{Type: hnslb.NetworkPolicyRemoteSubnetRoute, Settings: s})
	}
	b.ReportAllocs()
	for b.Loop() {
		if got := len(RemoteSubnetsOf(n)); got != 5000 {
			b.Fatalf("%d routes", got)
		}
	}
}

// BenchmarkHeldByState reports as held-B what the State of 10,000
// Services (overlay: three load balancers of 10 backends each) keeps live
// beyond its inputs: with the informer caches, what the collector sizes
// its goal, and the resident size, from.
func BenchmarkHeldByState(b *testing.B) {
	cfg := config()
	overlay(&cfg)
	in := benchInputs(10000)
	var held uint64
	for b.Loop() {
		b.StopTimer()
		before := liveheap.Bytes()
		b.StartTimer()
		s := Compute(in, cfg)
		b.StopTimer()
		held += liveheap.Bytes() - before
		runtime.KeepAlive(s)
		b.StartTimer()
	}
	b.ReportMetric(float64(held)/float64(b.N), "held-B")
}
