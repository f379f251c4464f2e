package desired

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

func TestSourceVIPEndpoints(t *testing.T) {
	cfg := config()
	if got := SourceVIPEndpoints(cfg); got != nil {
		t.Errorf("l2bridge: %+v", got)
	}
	overlay(&cfg)
	cfg.SourceVIP[intent.IPv6] = addr("fd01::fa")
	want := []intent.RemoteEndpoint{
		{IP: "10.1.0.250", MAC: "00-15-5d-00-00-01", Local: true},
		{IP: "fd01::fa", MAC: "00-15-5d-00-00-01", Local: true},
	}
	if got := SourceVIPEndpoints(cfg); !reflect.DeepEqual(got, want) {
		t.Errorf("overlay: %+v", got)
	}
	delete(cfg.NodeIPs, intent.IPv6)
	if got := SourceVIPEndpoints(cfg); len(got) != 1 {
		t.Errorf("no IPv6 node IP: %+v", got)
	}
}

// TestRemoteEndpointsOfBackends: the state holds one remote endpoint per
// remote backend IP, none for local ones, and the change lists them sorted.
func TestRemoteEndpointsOfBackends(t *testing.T) {
	a := intent.LB{Key: key("10.0.0.1", 80), Backends: []intent.Backend{localBE("10.1.0.2"), remote("10.1.0.30"), remote("10.1.0.4")}}
	b := intent.LB{Key: key("10.0.0.1", 443), Backends: []intent.Backend{remote("10.1.0.4"), {IP: "fd01::3", ProviderAddress: "p"}}}
	s := NewState(Config{})
	ch := s.Set(ServiceResult{Name: nsName("ns", "web"), LBs: []intent.LB{a, b}})
	want := []intent.RemoteEndpoint{
		{IP: "10.1.0.4", MAC: "02-11-0a-01-00-04"},
		{IP: "10.1.0.30", MAC: "02-11-0a-01-00-1e"},
		{IP: "fd01::3", MAC: "02-11-03-00-00-00", ProviderAddress: "p"},
	}
	var got []intent.RemoteEndpoint
	for _, ip := range ch.RemoteEndpoints {
		got = append(got, s.RemoteEndpoints[ip])
	}
	if !reflect.DeepEqual(got, want) || len(s.RemoteEndpoints) != len(want) {
		t.Errorf("got %+v (state %+v)", got, s.RemoteEndpoints)
	}
}

func TestConfigValidate(t *testing.T) {
	good := config()
	if err := good.Validate(); err != nil {
		t.Errorf("good l2bridge config: %v", err)
	}
	ov := config()
	overlay(&ov)
	delete(ov.NodeIPs, intent.IPv6)
	if err := ov.Validate(); err != nil {
		t.Errorf("good overlay config: %v", err)
	}
	// An overlay node whose Node lists an IPv6 address too needs no IPv6
	// source VIP: overlay serves no IPv6.
	dual := config()
	overlay(&dual)
	if err := dual.Validate(); err != nil {
		t.Errorf("overlay config with an IPv6 node IP and an IPv4 source VIP only: %v", err)
	}
	for _, tc := range []struct {
		name string
		mod  func(*Config)
		want string
	}{
		{"no node name", func(c *Config) { c.NodeName = "" }, "node name"},
		{"no node IPs", func(c *Config) { c.NodeIPs = nil }, "no node IP"},
		{"node IP of the wrong family", func(c *Config) { c.NodeIPs[intent.IPv6] = addr("10.0.0.9") }, "is not IPv6"},
		{"unknown mode", func(c *Config) { c.Mode = "transparent" }, "unknown network mode"},
		{"overlay without source VIP", func(c *Config) { overlay(c); c.SourceVIP = nil }, "source VIP"},
		{"overlay without host MAC", func(c *Config) { overlay(c); c.HostMAC = "" }, "host MAC"},
		{"DSR without HNS support", func(c *Config) { c.EnableDSR = true; oldHNS(c) }, "DSR"},
	} {
		c := config()
		tc.mod(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
}

// TestServesFamilyIsWhereTheMappingServesClusterIPs: the proxier counts a
// slice change by ServesFamily (as kube-proxy counts only its proxier's
// families), so it must say what ForService does: IPv4 always, IPv6 only on
// HNS with dual stack and a network that is not overlay, FQDN never.
func TestServesFamilyIsWhereTheMappingServesClusterIPs(t *testing.T) {
	v6 := ServiceInput{
		Service: service("web", clusterIPs("fd00:20::1")),
		Slices:  slicesOf(slice("web-1", 8080, ep("fd01::3"))),
	}
	for _, tc := range []struct {
		name string
		mod  func(*Config)
		v6   bool
	}{
		{"l2bridge, HNS with dual stack", func(*Config) {}, true},
		{"l2bridge, HNS without IPv6", oldHNS, false},
		{"overlay, HNS with dual stack", overlay, false},
	} {
		cfg := config()
		tc.mod(&cfg)
		if !cfg.ServesFamily(intent.IPv4) || cfg.ServesFamily(0) {
			t.Errorf("%s: ServesFamily(IPv4) = %v, ServesFamily(FQDN) = %v; want true, false", tc.name, cfg.ServesFamily(intent.IPv4), cfg.ServesFamily(0))
		}
		r := ForService(v6, cfg)
		if got := cfg.ServesFamily(intent.IPv6); got != tc.v6 || (len(r.LBs) > 0) != tc.v6 {
			t.Errorf("%s: ServesFamily(IPv6) = %v, IPv6 load balancers %s; want served %v", tc.name, got, keysOf(r), tc.v6)
		}
	}
}

// TestBackendCapIsLoweredOnlyBelowTheCapInForce: a cap the reconciler
// learned lowers the one in force only if it is lower; lowered, the
// proxier raises an event and computes every Service again, so a cap
// learned again (every Sync reports it) must change nothing.
func TestBackendCapIsLoweredOnlyBelowTheCapInForce(t *testing.T) {
	for _, tc := range []struct {
		name         string
		max, learned int
		was, now     int
		lowered      bool
	}{
		{"the build's cap, learned lower", 0, 64, 1024, 64, true},
		{"a configured cap, learned lower", 100, 64, 100, 64, true},
		{"learned again: as in force", 64, 64, 0, 64, false},
		{"learned higher than in force", 64, 100, 0, 64, false},
		{"nothing learned", 0, 0, 0, 0, false},
	} {
		cfg := config() // HNS 15.5: 1024
		cfg.MaxBackends = tc.max
		was, lowered := cfg.LowerBackendCap(tc.learned)
		if was != tc.was || lowered != tc.lowered || cfg.MaxBackends != tc.now {
			t.Errorf("%s: LowerBackendCap(%d) from %d = (%d, %v), cap now %d; want (%d, %v), %d",
				tc.name, tc.learned, tc.max, was, lowered, cfg.MaxBackends, tc.was, tc.lowered, tc.now)
		}
	}
}

func TestRemoteSubnetIndex(t *testing.T) {
	route := func(prefix, pa string) RemoteSubnet {
		return RemoteSubnet{Prefix: netip.MustParsePrefix(prefix), ProviderAddress: addr(pa)}
	}
	routes := []RemoteSubnet{
		route("10.1.0.0/16", "192.168.0.12"),
		route("10.1.1.7/24", "192.168.0.11"), // stored masked
		route("10.1.2.0/24", "192.168.0.14"),
		route("10.1.2.0/24", "192.168.0.13"), // the same subnet twice: the lower PA wins
		route("fd01:1::/64", "fd00::11"),
		{Prefix: netip.MustParsePrefix("10.9.0.0/16")}, // no PA: left out
		{},
	}
	ix := NewRemoteSubnetIndex(routes)
	for _, tc := range []struct{ ip, pa string }{
		{"10.1.1.5", "192.168.0.11"},
		{"10.1.2.5", "192.168.0.13"},
		{"10.1.3.5", "192.168.0.12"},
		{"fd01:1::5", "fd00::11"},
		{"192.168.0.14", "192.168.0.14"}, // a node's own address
		{"10.9.0.1", ""},
		{"10.2.0.1", ""},
		{"fd01:2::5", ""},
	} {
		pa, ok := paOf(t, ix, addr(tc.ip))
		if got := map[bool]string{true: pa.String(), false: ""}[ok]; got != tc.pa {
			t.Errorf("the node of %s is %q, want %q", tc.ip, got, tc.pa)
		}
	}
	if got := ix.Len(); got != 5 {
		t.Errorf("Len = %d, want the 5 usable routes", got)
	}
	if first := ix.Routes()[0]; first != route("fd01:1::/64", "fd00::11") {
		t.Errorf("Routes()[0] = %v, want the longest prefix first", first)
	}
	reversed := slices.Clone(routes)
	slices.Reverse(reversed)
	if ix.Reindexed(reversed) != ix {
		t.Error("the same routes in another order: a new index, want the same")
	}
	if other := ix.Reindexed(routes[:2]); other == ix || other.Len() != 2 {
		t.Errorf("other routes: the same index or %d routes, want a new one of 2", other.Len())
	}
	if ix.Reindexed(nil).Len() != 0 {
		t.Error("no routes: an index that holds some")
	}
	var none *RemoteSubnetIndex
	if none.Reindexed(routes[len(routes)-2:]) != nil {
		t.Error("no index and routes none of which is usable: an index, want none")
	}
	if got := none.Reindexed(reversed); got.Len() != 5 {
		t.Errorf("no index, then the routes: %d routes, want the 5 usable", got.Len())
	}
	for prefix, want := range map[string]string{
		"10.1.1.0/24": "192.168.0.11", "10.1.1.128/25": "192.168.0.11", "10.1.7.0/24": "192.168.0.12", // the /16 holds it
		"10.1.2.0/24": "192.168.0.13", "10.1.0.0/15": "", "10.9.0.0/16": "", "fd01:1::/64": "fd00::11", "fd01:1::/63": "",
	} {
		pa, ok := ix.ProviderOf(netip.MustParsePrefix(prefix))
		if got := map[bool]string{true: pa.String(), false: ""}[ok]; got != want {
			t.Errorf("ProviderOf(%s) = %q, want %q", prefix, got, want)
		}
	}
	if _, ok := none.ProviderOf(netip.MustParsePrefix("10.1.1.0/24")); ok {
		t.Error("the nil index routes a prefix")
	}
	if _, ok := paOf(t, none, addr("10.1.1.5")); ok || NewRemoteSubnetIndex(nil).Len() != 0 || none.Routes() != nil {
		t.Error("the nil index is not empty")
	}
}

// paOf is the provider address of the node hosting ip; the node's text
// must be that address's.
func paOf(t *testing.T, ix *RemoteSubnetIndex, ip netip.Addr) (netip.Addr, bool) {
	t.Helper()
	n, ok := ix.nodeOf(ip)
	if !ok {
		return netip.Addr{}, false
	}
	if n.text != n.pa.String() {
		t.Fatalf("node %v carries the text %q", n.pa, n.text)
	}
	return n.pa, true
}

// The index answers what a walk over every route, longest prefix first,
// answers, for random routes of mixed lengths: with the provider addresses
// outside every route, and with some routes holding provider addresses
// (where a node's own address wins over the subnet around it).
func TestRemoteSubnetIndexMatchesALinearWalk(t *testing.T) {
	for _, paRouted := range []bool{false, true} {
		t.Run(fmt.Sprintf("providerAddressesRouted=%v", paRouted), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			randomPA := func() netip.Addr {
				return netip.AddrFrom4([4]byte{192, 168, byte(rng.IntN(4)), byte(rng.IntN(256))})
			}
			var routes []RemoteSubnet
			for range 300 {
				a := netip.AddrFrom4([4]byte{10, byte(rng.IntN(4)), byte(rng.IntN(256)), byte(rng.IntN(256))})
				p, _ := a.Prefix([]int{8, 16, 20, 24, 26}[rng.IntN(5)])
				routes = append(routes, RemoteSubnet{Prefix: p, ProviderAddress: randomPA()})
			}
			if paRouted {
				for range 20 {
					p, _ := randomPA().Prefix([]int{16, 24, 30}[rng.IntN(3)])
					routes = append(routes, RemoteSubnet{Prefix: p, ProviderAddress: randomPA()})
				}
			}
			ix := NewRemoteSubnetIndex(routes)
			if ix.nodesFirst != paRouted {
				t.Fatalf("nodesFirst = %v, want %v", ix.nodesFirst, paRouted)
			}
			walk := ix.Routes() // longest first, then by address and PA
			nodes := 0
			for range 5000 {
				ip := netip.AddrFrom4([4]byte{10, byte(rng.IntN(5)), byte(rng.IntN(256)), byte(rng.IntN(256))})
				if rng.IntN(2) == 0 {
					ip = randomPA()
				}
				var want netip.Addr
				if _, node := ix.nodes[ip]; node {
					want = ip
					nodes++
				} else {
					for _, r := range walk {
						if r.Prefix.Contains(ip) {
							want = r.ProviderAddress
							break
						}
					}
				}
				if got, _ := paOf(t, ix, ip); got != want {
					t.Fatalf("the node of %s is %v, the walk says %v", ip, got, want)
				}
			}
			if nodes == 0 {
				t.Fatal("no lookup was of a node's own address")
			}
		})
	}
}

func TestRemoteSubnetsOfReadsTheNetworksRoutes(t *testing.T) {
	nw := &hnslb.Network{Policies: []hnslb.NetworkPolicy{
		hnslb.NewNetworkPolicy(hnslb.NetworkPolicyRemoteSubnetRoute, hnslb.RemoteSubnetRoutePolicySetting{DestinationPrefix: "10.244.2.0/24", ProviderAddress: "10.0.0.12", IsolationId: 4096}),
		hnslb.NewNetworkPolicy(hnslb.NetworkPolicyRemoteSubnetRoute, hnslb.RemoteSubnetRoutePolicySetting{DestinationPrefix: "bogus", ProviderAddress: "10.0.0.13"}),
		hnslb.NewNetworkPolicy(hnslb.NetworkPolicyProviderAddress, hnslb.ProviderAddressEndpointPolicySetting{ProviderAddress: "10.0.0.11"}),
	}}
	want := []RemoteSubnet{{Prefix: netip.MustParsePrefix("10.244.2.0/24"), ProviderAddress: addr("10.0.0.12")}}
	if got := RemoteSubnetsOf(nw); !reflect.DeepEqual(got, want) {
		t.Errorf("RemoteSubnetsOf = %v, want %v", got, want)
	}
}
