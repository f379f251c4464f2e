package intent

import (
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// TestLBKeyStringNamesItsProtocol: a foreign load balancer on a protocol
// other than TCP or UDP (HNS takes any, 0 for all) is named by its number,
// not taken for TCP; IPv6 VIPs keep their port apart.
func TestLBKeyStringNamesItsProtocol(t *testing.T) {
	for _, tc := range []struct {
		key  LBKey
		want string
	}{
		{LBKey{Family: IPv4, VIP: "10.96.0.10", Protocol: hnslb.ProtocolTCP, Port: 80}, "10.96.0.10:80/tcp"},
		{LBKey{Family: IPv4, VIP: "10.96.0.10", Protocol: hnslb.ProtocolUDP, Port: 53}, "10.96.0.10:53/udp"},
		{LBKey{Family: IPv4, VIP: "10.96.0.10", Protocol: 1, Port: 0}, "10.96.0.10:0/protocol-1"},
		{LBKey{Family: IPv6, VIP: "fd00::20", Protocol: 0, Port: 80}, "[fd00::20]:80/protocol-0"},
		{LBKey{Family: IPv4, Protocol: hnslb.ProtocolTCP, Port: 30080}, "nodeport/v4:30080/tcp"},
		{LBKey{Family: IPv6, Protocol: 132, Port: 30080}, "nodeport/v6:30080/protocol-132"},
	} {
		if got := tc.key.String(); got != tc.want {
			t.Errorf("%#v.String() = %q, want %q", tc.key, got, tc.want)
		}
	}
}
