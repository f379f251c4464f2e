package desired

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

func TestConjureMAC(t *testing.T) {
	for _, tc := range []struct {
		ip   netip.Addr
		want string
	}{
		{addr("10.244.1.23"), "02-11-0a-f4-01-17"},
		{addr("::ffff:10.244.1.23"), "02-11-0a-f4-01-17"},
		// IPv6: the last four bytes, last first (winkernel's order).
		{addr("fd00::aa:bb:ccdd:eeff"), "02-11-ff-ee-dd-cc"},
		{netip.Addr{}, "02-11-22-33-44-55"},
	} {
		if got := ConjureMAC(tc.ip); got != tc.want {
			t.Errorf("ConjureMAC(%s) = %s, want %s", tc.ip, got, tc.want)
		}
	}
}

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

// TestBackendRemoteEndpoints: the State derives one remote endpoint per
// remote backend IP (local backends need none), sorted by IP in the Change.
func TestBackendRemoteEndpoints(t *testing.T) {
	a := intent.LB{Key: key("10.0.0.1", 80), Backends: []intent.Backend{localBE("10.1.0.2"), remote("10.1.0.30"), remote("10.1.0.4")}}
	b := intent.LB{Key: key("10.0.0.1", 443), Backends: []intent.Backend{remote("10.1.0.4"), {IP: "fd01::3", MAC: "m", ProviderAddress: "p"}}}
	s := NewState(config())
	ch := s.Set(ServiceResult{Name: nsName("ns", "web"), LBs: []intent.LB{a, b}})
	if want := []string{"10.1.0.4", "10.1.0.30", "fd01::3"}; !reflect.DeepEqual(ch.RemoteEndpoints, want) {
		t.Errorf("changed remote endpoints %v, want %v", ch.RemoteEndpoints, want)
	}
	want := map[string]intent.RemoteEndpoint{
		"10.1.0.4":  {IP: "10.1.0.4", MAC: "02-11-0a-01-00-04"},
		"10.1.0.30": {IP: "10.1.0.30", MAC: "02-11-0a-01-00-1e"},
		"fd01::3":   {IP: "fd01::3", MAC: "m", ProviderAddress: "p"},
	}
	if !reflect.DeepEqual(s.RemoteEndpoints, want) {
		t.Errorf("remote endpoints %+v, want %+v", s.RemoteEndpoints, want)
	}
}

func TestCompareHelpers(t *testing.T) {
	ordered := []string{"9.0.0.1", "10.0.0.1", "::1", "not-an-ip", "zzz"}
	for i := 1; i < len(ordered); i++ {
		if compareIPStrings(ordered[i-1], ordered[i]) >= 0 || compareIPStrings(ordered[i], ordered[i-1]) <= 0 {
			t.Errorf("%s should sort before %s", ordered[i-1], ordered[i])
		}
	}
	keys := []intent.LBKey{
		{Family: intent.IPv4, VIP: "", Protocol: hnslb.ProtocolTCP, Port: 30000},
		{Family: intent.IPv4, VIP: "9.0.0.1", Protocol: hnslb.ProtocolTCP, Port: 80},
		{Family: intent.IPv4, VIP: "10.0.0.1", Protocol: hnslb.ProtocolTCP, Port: 80},
		{Family: intent.IPv4, VIP: "10.0.0.1", Protocol: hnslb.ProtocolTCP, Port: 443},
		{Family: intent.IPv4, VIP: "10.0.0.1", Protocol: hnslb.ProtocolUDP, Port: 53},
		{Family: intent.IPv6, VIP: "", Protocol: hnslb.ProtocolTCP, Port: 30000},
	}
	for i := 1; i < len(keys); i++ {
		if CompareLBKeys(keys[i-1], keys[i]) >= 0 || CompareLBKeys(keys[i], keys[i-1]) <= 0 {
			t.Errorf("%s should sort before %s", keys[i-1], keys[i])
		}
	}
	x := lb(key("10.0.0.1", 80), 0, 0, both...)
	y := lb(key("10.0.0.1", 80), 0, 0, both...)
	if !EqualLB(x, y) {
		t.Error("identical load balancers differ")
	}
	y.Backends = []intent.Backend{both[0]}
	if EqualLB(x, y) {
		t.Error("different backends compare equal")
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
