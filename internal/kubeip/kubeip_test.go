package kubeip

import (
	"net"
	"testing"

	netutils "k8s.io/utils/net"
)

func TestParseAddr(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // "" = refused
	}{
		{"10.0.0.11", "10.0.0.11"},
		{"010.0.0.11", "10.0.0.11"},
		{"010.244.1.005", "10.244.1.5"},
		{"2001:db8::0001", "2001:db8::1"},
		{"::ffff:010.0.0.1", "::ffff:10.0.0.1"},
		{"fe80::1%eth0", ""},
		{"10.0.0.1%eth0", ""},
		{"", ""},
		{"10.0.0", ""},
		{"10.0.0.256", ""},
		{" 10.0.0.1", ""},
	} {
		ip, ok := ParseAddr(tc.in)
		if got := map[bool]string{true: ip.String()}[ok]; got != tc.want {
			t.Errorf("ParseAddr(%q) = %q, %v; want %q", tc.in, ip, ok, tc.want)
		}
	}
}

func TestParsePrefix(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // "" = refused
	}{
		{"10.244.1.0/24", "10.244.1.0/24"},
		{"010.244.001.000/24", "10.244.1.0/24"},
		{"10.244.1.7/24", "10.244.1.7/24"},
		{"fd00::/64", "fd00::/64"},
		{"fe80::%eth0/64", ""},
		{"010.244.1.0/33", ""},
		{"10.244.1.0", ""},
		{"", ""},
	} {
		p, ok := ParsePrefix(tc.in)
		if got := map[bool]string{true: p.String()}[ok]; got != tc.want {
			t.Errorf("ParsePrefix(%q) = %q, %v; want %q", tc.in, p, ok, tc.want)
		}
	}
}

// kube-proxy's own parsers are the reference: ParseAddr and ParsePrefix
// accept exactly what ParseIPSloppy and ParseCIDRSloppy accept, and read
// the same address, so the callers that moved from them to this package
// (the flags, the config file) kept their behaviour.
func TestAgreesWithKubeProxysParsers(t *testing.T) {
	for _, s := range []string{
		"10.0.0.1", "010.0.0.1", "10.0.0.01", "0.0.0.0", "255.255.255.255", "256.0.0.1", "1.2.3", "1.2.3.4.5",
		"::", "::1", "fd00::1", "FD00::0001", "::ffff:10.0.0.1", "::ffff:010.0.0.1", "1:2:3:4:5:6:7.8.9.10",
		"fe80::1%eth0", "fe80::1%", "10.0.0.1%eth0", "", " ", "10.0.0.1 ", "[::1]", "0x0a.0.0.1", "1::2::3", "12345::",
	} {
		want := netutils.ParseIPSloppy(s)
		ip, ok := ParseAddr(s)
		if ok != (want != nil) || ok && !net.IP(ip.AsSlice()).Equal(want) {
			t.Errorf("ParseAddr(%q) = %v, %v; ParseIPSloppy reads %v", s, ip, ok, want)
		}
		for _, bits := range []string{"/0", "/8", "/24", "/32", "/64", "/128", "/129", "/-1", "/x", ""} {
			_, wantNet, err := netutils.ParseCIDRSloppy(s + bits)
			p, ok := ParsePrefix(s + bits)
			if ok != (err == nil) {
				t.Errorf("ParsePrefix(%q) = %v, %v; ParseCIDRSloppy: %v", s+bits, p, ok, err)
				continue
			}
			if ok {
				ones, _ := wantNet.Mask.Size()
				if p.Bits() != ones || !wantNet.IP.Equal(net.IP(p.Masked().Addr().AsSlice())) {
					t.Errorf("ParsePrefix(%q) = %v; ParseCIDRSloppy reads %v", s+bits, p, wantNet)
				}
			}
		}
	}
}
