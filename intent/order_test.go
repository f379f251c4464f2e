package intent

import (
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
	backends := []Backend{{IP: "10.1.0.5", Local: true}, {IP: "10.2.0.7", ProviderAddress: "192.168.0.2", MAC: "02-11-0a-02-00-07"}}
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
	b := Backend{IP: "10.2.0.7", ProviderAddress: "192.168.0.2", MAC: "02-11-0a-02-00-07"}
	want := RemoteEndpoint{IP: b.IP, MAC: b.MAC, ProviderAddress: b.ProviderAddress}
	if got := EndpointOf(b); got != want {
		t.Errorf("EndpointOf = %+v, want %+v", got, want)
	}
}
