package intent

import (
	"net/netip"
	"testing"
)

func TestConjureMAC(t *testing.T) {
	for _, tc := range []struct {
		ip   netip.Addr
		want string
	}{
		{netip.MustParseAddr("10.244.1.23"), "02-11-0a-f4-01-17"},
		{netip.MustParseAddr("::ffff:10.244.1.23"), "02-11-0a-f4-01-17"},
		// IPv6: the last four bytes, last first (winkernel's order).
		{netip.MustParseAddr("fd00::aa:bb:ccdd:eeff"), "02-11-ff-ee-dd-cc"},
		{netip.Addr{}, "02-11-22-33-44-55"},
	} {
		if got := ConjureMAC(tc.ip); got != tc.want {
			t.Errorf("ConjureMAC(%s) = %s, want %s", tc.ip, got, tc.want)
		}
	}
}
