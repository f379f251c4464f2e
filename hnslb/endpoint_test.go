package hnslb_test

import (
	"net/netip"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

func TestParseUnixEndpoint(t *testing.T) {
	for _, tc := range []struct {
		in, want string // want "" means rejected
	}{
		{"unix:///tmp/x.sock", "/tmp/x.sock"},
		{"unix:///run/hnssim.sock", "/run/hnssim.sock"},
		{"unix:///C:/x/hns.sock", "C:/x/hns.sock"},
		{"unix:///C:/ProgramData/h", "C:/ProgramData/h"},
		{"unix://C:\\ProgramData\\h", "C:\\ProgramData\\h"},
		{"unix://relative", ""},
		{"unix://relative/x", ""},
		{"unix://", ""}, // empty path
		{"unix:///C:", ""},
		{"unix://1:/x", ""},
		{"", ""},
		{"sim", ""},
		{"/run/x.sock", ""},
		{"tcp://127.0.0.1:1", ""},
	} {
		got, err := hnslb.ParseUnixEndpoint(tc.in)
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("ParseUnixEndpoint(%q) = %q, want an error", tc.in, got)
		case tc.want != "" && (err != nil || got != tc.want):
			t.Errorf("ParseUnixEndpoint(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// TestEndpointHasAddressAndKind: every address of a dual-stack endpoint is
// its own, an IPv4-mapped form too; an unparsable one matches nothing.
func TestEndpointHasAddressAndKind(t *testing.T) {
	ep := &hnslb.Endpoint{IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.1.5"}, {IpAddress: "fd00::5"}, {IpAddress: "garbage"}}}
	for _, c := range []struct {
		addr string
		want bool
	}{{"10.244.1.5", true}, {"::ffff:10.244.1.5", true}, {"fd00::5", true}, {"10.244.1.6", false}} {
		if got := ep.HasAddress(netip.MustParseAddr(c.addr)); got != c.want {
			t.Errorf("HasAddress(%s) = %v, want %v", c.addr, got, c.want)
		}
	}
	if ep.KindWord() != "local" {
		t.Errorf("kind of a local endpoint: %q", ep.KindWord())
	}
	ep.Flags = hnslb.EndpointFlagsRemoteEndpoint
	if ep.KindWord() != "remote" {
		t.Errorf("kind of a remote endpoint: %q", ep.KindWord())
	}
}

// TestAnEndpointsIPv4MappedAddressIsItsIPv4One: an endpoint whose address
// HNS gives in the IPv4-mapped form holds the IPv4 address too.
func TestAnEndpointsIPv4MappedAddressIsItsIPv4One(t *testing.T) {
	ep := &hnslb.Endpoint{IpConfigurations: []hnslb.IPConfig{{IpAddress: "::ffff:10.244.1.5"}}}
	if !ep.HasAddress(netip.MustParseAddr("10.244.1.5")) {
		t.Error("an endpoint at ::ffff:10.244.1.5 does not hold 10.244.1.5")
	}
}
