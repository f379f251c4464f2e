package intent

import (
	"math/rand/v2"
	"net/netip"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

func TestCompareIPs(t *testing.T) {
	ordered := []string{"9.0.0.1", "10.0.0.1", "::1", "not-an-ip", "zzz"}
	for i := 1; i < len(ordered); i++ {
		if CompareIPs(ordered[i-1], ordered[i]) >= 0 || CompareIPs(ordered[i], ordered[i-1]) <= 0 {
			t.Errorf("%s should sort before %s", ordered[i-1], ordered[i])
		}
	}
}

func TestCompareLBKeys(t *testing.T) {
	keys := []LBKey{
		{Family: IPv4, VIP: "", Protocol: hnslb.ProtocolTCP, Port: 30000},
		{Family: IPv4, VIP: "9.0.0.1", Protocol: hnslb.ProtocolTCP, Port: 80},
		{Family: IPv4, VIP: "10.0.0.1", Protocol: hnslb.ProtocolTCP, Port: 80},
		{Family: IPv4, VIP: "10.0.0.1", Protocol: hnslb.ProtocolTCP, Port: 443},
		{Family: IPv4, VIP: "10.0.0.1", Protocol: hnslb.ProtocolUDP, Port: 53},
		{Family: IPv6, VIP: "", Protocol: hnslb.ProtocolTCP, Port: 30000},
	}
	for i := 1; i < len(keys); i++ {
		if CompareLBKeys(keys[i-1], keys[i]) >= 0 || CompareLBKeys(keys[i], keys[i-1]) <= 0 {
			t.Errorf("%s should sort before %s", keys[i-1], keys[i])
		}
	}
	if c := CompareLBKeys(keys[1], keys[1]); c != 0 {
		t.Errorf("a key compares %d to itself", c)
	}
}

func TestEqualLB(t *testing.T) {
	backends := []Backend{{IP: "10.1.0.5", Local: true}, {IP: "10.2.0.7", ProviderAddress: "192.168.0.2"}}
	mk := func() LB {
		return LB{Key: LBKey{Family: IPv4, VIP: "10.0.0.1", Protocol: hnslb.ProtocolTCP, Port: 80},
			InternalPort: 8080, Backends: append([]Backend(nil), backends...), Owner: "default/web:http"}
	}
	x, y := mk(), mk()
	if !EqualLB(&x, &y) {
		t.Error("identical load balancers differ")
	}
	y.Backends = y.Backends[:1]
	if EqualLB(&x, &y) {
		t.Error("different backends compare equal")
	}
	y = mk()
	y.Owner = "default/other:http"
	if EqualLB(&x, &y) {
		t.Error("different owners compare equal")
	}
}

// TestEveryFieldOfALoadBalancerCountsForEquality: the desired state hands
// the reconciler only the keys whose load balancer is not EqualLB to the
// one before, and the reconciler's Upsert drops one EqualLB to what it
// holds: a field EqualLB skipped would be a change HNS never sees (an
// overlay load balancer's source VIP turning to the node IP, a spare for a
// local backend, DSR turned on).
func TestEveryFieldOfALoadBalancerCountsForEquality(t *testing.T) {
	mk := func() LB {
		return LB{Key: LBKey{Family: IPv4, VIP: "10.0.0.1", Protocol: hnslb.ProtocolTCP, Port: 80},
			SourceVIP: "10.1.0.250", InternalPort: 8080, Distribution: hnslb.DistributionNone,
			PortFlags: hnslb.PortMappingFlagsNone, Flags: hnslb.LoadBalancerFlagsNone,
			Backends: []Backend{{IP: "10.1.0.5", Local: true}, {IP: "10.2.0.7", ProviderAddress: "192.168.0.2"}},
			Spares:   []Backend{{IP: "10.2.0.8", ProviderAddress: "192.168.0.2"}},
			Owner:    "default/web:http", Origin: OriginClusterIP}
	}
	for name, change := range map[string]func(*LB){
		"key":               func(l *LB) { l.Key.Port = 81 },
		"source VIP":        func(l *LB) { l.SourceVIP = "192.168.0.10" },
		"internal port":     func(l *LB) { l.InternalPort = 9090 },
		"distribution":      func(l *LB) { l.Distribution = hnslb.DistributionSourceIP },
		"port flags":        func(l *LB) { l.PortFlags = hnslb.PortMappingFlagsVipExternalIP },
		"flags":             func(l *LB) { l.Flags = hnslb.LoadBalancerFlagsDSR },
		"a backend's field": func(l *LB) { l.Backends[1].ProviderAddress = "192.168.0.3" },
		"spares":            func(l *LB) { l.Spares = nil },
		"a spare's field":   func(l *LB) { l.Spares[0].IP = "10.2.0.9" },
		"owner":             func(l *LB) { l.Owner = "default/other:http" },
		"origin":            func(l *LB) { l.Origin = OriginExternalIP },
	} {
		x, y := mk(), mk()
		change(&y)
		if EqualLB(&x, &y) || EqualLB(&y, &x) {
			t.Errorf("load balancers differing in their %s compare equal", name)
		}
	}
}

func TestFamilyOf(t *testing.T) {
	for s, want := range map[string]IPFamily{"10.0.0.1": IPv4, "::ffff:10.0.0.1": IPv4, "fd00::1": IPv6, "::1": IPv6} {
		if got := FamilyOf(netip.MustParseAddr(s)); got != want {
			t.Errorf("FamilyOf(%s) = %s, want %s", s, got, want)
		}
	}
	if s := IPv6.String(); s != "IPv6" {
		t.Errorf("IPv6.String() = %q", s)
	}
}

func TestEndpointOf(t *testing.T) {
	b := Backend{IP: "10.2.0.7", ProviderAddress: "192.168.0.2"}
	want := RemoteEndpoint{IP: b.IP, MAC: "02-11-0a-02-00-07", ProviderAddress: b.ProviderAddress}
	if got := EndpointOf(b); got != want {
		t.Errorf("EndpointOf = %+v, want %+v", got, want)
	}
	if got := EndpointOf(Backend{IP: "not an IP"}); got.MAC != "" {
		t.Errorf("EndpointOf an unparsable IP conjured MAC %q", got.MAC)
	}
}

// TestSortsParseOnceKeepTheOrder: SortLBKeys and SortIPs give the order of
// CompareLBKeys and CompareIPs, including NodePort's empty VIP, unparsable
// text and two spellings of one IPv6 address.
func TestSortsParseOnceKeepTheOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	vips := []string{"", "10.96.0.1", "10.96.0.10", "10.96.0.9", "192.168.1.1", "fd00::1", "FD00::1", "fd00::a", "not-an-ip", "zz", "1.2.3"}
	for round := range 200 {
		seen := map[LBKey]bool{}
		var keys []LBKey
		var ips []string
		for range rng.IntN(40) {
			k := LBKey{Family: []IPFamily{IPv4, IPv6}[rng.IntN(2)], VIP: vips[rng.IntN(len(vips))], Protocol: uint32(6 + 11*rng.IntN(2)), Port: uint16(rng.IntN(4))}
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
			ips = append(ips, vips[rng.IntN(len(vips))])
		}
		SortLBKeys(keys)
		for i := 1; i < len(keys); i++ {
			if CompareLBKeys(keys[i-1], keys[i]) > 0 {
				t.Fatalf("round %d: SortLBKeys put %v before %v", round, keys[i-1], keys[i])
			}
		}
		SortIPs(ips)
		for i := 1; i < len(ips); i++ {
			if CompareIPs(ips[i-1], ips[i]) > 0 {
				t.Fatalf("round %d: SortIPs put %q before %q", round, ips[i-1], ips[i])
			}
		}
	}
}

// A load balancer's key reads as an address and port do: an IPv6 VIP is
// bracketed, so events, logs and hnsproxy-diag do not print
// "fd00:96::20:80/tcp", where the port cannot be told from the address.
func TestLBKeyStringTellsThePortFromAnIPv6VIP(t *testing.T) {
	for _, tc := range []struct {
		key  LBKey
		want string
	}{
		{LBKey{Family: IPv4, VIP: "10.96.0.20", Protocol: hnslb.ProtocolTCP, Port: 80}, "10.96.0.20:80/tcp"},
		{LBKey{Family: IPv6, VIP: "fd00:96::20", Protocol: hnslb.ProtocolUDP, Port: 53}, "[fd00:96::20]:53/udp"},
		{LBKey{Family: IPv6, Protocol: hnslb.ProtocolTCP, Port: 30080}, "nodeport/v6:30080/tcp"},
	} {
		if got := tc.key.String(); got != tc.want {
			t.Errorf("%+v.String() = %q, want %q", tc.key, got, tc.want)
		}
	}
}
