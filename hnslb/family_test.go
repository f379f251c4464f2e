package hnslb

import "testing"

// TestIsIPv6ReadsTheAddressesWhereTheFlagIsNotEchoed: the family of a
// listed load balancer, with and without the IPv6 flag HNS may not echo.
func TestIsIPv6ReadsTheAddressesWhereTheFlagIsNotEchoed(t *testing.T) {
	for _, c := range []struct {
		name string
		lb   LoadBalancer
		want bool
	}{
		{"IPv4 cluster IP", LoadBalancer{FrontendVIPs: []string{"10.96.0.10"}, SourceVIP: "10.244.1.2"}, false},
		{"IPv6 cluster IP, flag echoed", LoadBalancer{Flags: LoadBalancerFlagsIPv6, FrontendVIPs: []string{"fd00:96::a"}}, true},
		{"IPv6 cluster IP, flag dropped", LoadBalancer{FrontendVIPs: []string{"fd00:96::a"}}, true},
		{"IPv6 cluster IP in long form", LoadBalancer{FrontendVIPs: []string{"fd00:0096:0000:0000:0000:0000:0000:000a"}}, true},
		{"IPv6 node port by its source VIP", LoadBalancer{SourceVIP: "fd00:244:1::2"}, true},
		{"IPv4 node port", LoadBalancer{SourceVIP: "10.244.1.2"}, false},
		{"IPv4-mapped frontend", LoadBalancer{FrontendVIPs: []string{"::ffff:10.96.0.10"}}, false},
		{"flag alone", LoadBalancer{Flags: LoadBalancerFlagsIPv6 | LoadBalancerFlagsDSR}, true},
		{"no address, no flag", LoadBalancer{Flags: LoadBalancerFlagsDSR}, false},
		{"unreadable frontend", LoadBalancer{FrontendVIPs: []string{"not-an-ip"}, SourceVIP: "fd00::2"}, false},
	} {
		if got := c.lb.IsIPv6(); got != c.want {
			t.Errorf("%s: IsIPv6 = %v, want %v", c.name, got, c.want)
		}
	}
}
