package hnslb

import (
	"slices"
	"testing"
)

func TestFlagWords(t *testing.T) {
	for _, tc := range []struct {
		name string
		lb   LoadBalancer
		want []string
	}{
		{"plain", LoadBalancer{}, nil},
		{"a port mapping without affinity says nothing of it", LoadBalancer{PortMappings: []PortMapping{{}}}, nil},
		{"DSR keeps the source, so no SNAT word", LoadBalancer{Flags: LoadBalancerFlagsDSR, SourceVIP: "10.0.0.2"}, []string{"DSR"}},
		{"NodePort with affinity", LoadBalancer{
			SourceVIP: "10.244.1.2",
			PortMappings: []PortMapping{{
				Flags:            PortMappingFlagsLocalRoutedVIP | PortMappingFlagsVipExternalIP,
				DistributionType: DistributionSourceIP,
			}},
		}, []string{"local-routed-VIP", "VIP-external-IP", "client-IP-affinity", "SNAT-to-10.244.1.2"}},
		{"preserve-destination on IPv6", LoadBalancer{
			Flags:        LoadBalancerFlagsDSR | LoadBalancerFlagsIPv6,
			PortMappings: []PortMapping{{Flags: PortMappingFlagsUseMux | PortMappingFlagsPreserveDIP | PortMappingFlagsILB, DistributionType: DistributionSourceIPProtocol}},
		}, []string{"DSR", "IPv6", "internal", "mux", "preserve-destination", "client-IP+protocol-affinity"}},
	} {
		if got := tc.lb.FlagWords(); !slices.Equal(got, tc.want) {
			t.Errorf("%s: FlagWords() = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestProtocolName(t *testing.T) {
	for p, want := range map[uint32]string{ProtocolTCP: "TCP", ProtocolUDP: "UDP", 132: "protocol 132"} {
		if got := ProtocolName(p); got != want {
			t.Errorf("ProtocolName(%d) = %q, want %q", p, got, want)
		}
	}
}
