package app

import (
	"slices"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// kube-proxy on Windows runs dual-stack wherever HNS supports IPv6 dual
// stack on a network that is not overlay (cmd/kube-proxy/app
// server_windows.go platformCheckSupported, pkg/proxy/winkernel
// supported.go DualStackCompatible), and then opens every health-check
// node port on 0.0.0.0 (tcp4) and :: (tcp6): it never reads
// --cluster-cidr for that. hnsproxy serves IPv6 Services on the same
// condition (proxier/desired familyUnsupported), so an IPv6 load
// balancer's probes of an externalTrafficPolicy Local Service must find a
// listener on :: whether or not --cluster-cidr names an IPv6 range.
func TestHealthCheckPortsListenInEveryFamilyServed(t *testing.T) {
	for _, tc := range []struct {
		name         string
		clusterCIDRs []string
		servesIPv6   bool
		want         []string
	}{
		{"IPv6 served, no --cluster-cidr", nil, true, []string{"0.0.0.0", "::"}},
		{"IPv6 served, IPv4 --cluster-cidr", []string{"10.244.0.0/16"}, true, []string{"0.0.0.0", "::"}},
		{"IPv6 served, dual-stack --cluster-cidr", []string{"10.244.0.0/16", "fd00::/56"}, true, []string{"0.0.0.0", "::"}},
		{"IPv6 not served", nil, false, []string{"0.0.0.0"}},
		{"IPv6 not served, IPv6 --cluster-cidr", []string{"fd00::/56"}, false, []string{"::"}},
	} {
		if got := healthCheckListenIPs(tc.clusterCIDRs, tc.servesIPv6); !slices.Equal(got, tc.want) {
			t.Errorf("%s: health checks listen on %v, want %v", tc.name, got, tc.want)
		}
	}
	dual := Capabilities{Features: hnslb.Features{IPv6DualStack: true}}
	if servesIPv6(dual, &hnslb.Network{Type: hnslb.NetworkTypeOverlay}) {
		t.Error("overlay networks serve no IPv6")
	}
	if servesIPv6(Capabilities{}, &hnslb.Network{Type: hnslb.NetworkTypeL2Bridge}) {
		t.Error("an HNS without IPv6 dual stack serves no IPv6")
	}
}
