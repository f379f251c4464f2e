package kubeip

import "testing"

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
