package hnslb

import (
	"fmt"
	"slices"
)

// FlagWords names a load balancer's flags, its port mapping's flags and its
// distribution in words, for tables people read (DSR, IPv6,
// local-routed-VIP, VIP-external-IP, client-IP-affinity, SNAT-to-<source VIP>, ...).
func (lb *LoadBalancer) FlagWords() []string {
	var w []string
	if lb.Flags&LoadBalancerFlagsDSR != 0 {
		w = append(w, "DSR")
	}
	if lb.Flags&LoadBalancerFlagsIPv6 != 0 {
		w = append(w, "IPv6")
	}
	for _, pm := range lb.PortMappings {
		for _, f := range []struct {
			flag PortMappingFlags
			word string
		}{
			{PortMappingFlagsILB, "internal"},
			{PortMappingFlagsLocalRoutedVIP, "local-routed-VIP"},
			{PortMappingFlagsUseMux, "mux"},
			{PortMappingFlagsPreserveDIP, "preserve-destination"},
			{PortMappingFlagsVipExternalIP, "VIP-external-IP"},
		} {
			if pm.Flags&f.flag != 0 && !slices.Contains(w, f.word) {
				w = append(w, f.word)
			}
		}
		if pm.DistributionType != DistributionNone {
			w = append(w, pm.DistributionType.Word())
		}
	}
	// Without DSR the load balancer rewrites the source to its source VIP
	// (with DSR the field is set too, but unused).
	if lb.SourceVIP != "" && lb.Flags&LoadBalancerFlagsDSR == 0 {
		w = append(w, "SNAT-to-"+lb.SourceVIP)
	}
	return w
}

// Word names a distribution for tables people read: "no-affinity" (a
// backend per connection), "client-IP-affinity", "client-IP+protocol-affinity".
func (d Distribution) Word() string {
	switch d {
	case DistributionNone:
		return "no-affinity"
	case DistributionSourceIP:
		return "client-IP-affinity"
	case DistributionSourceIPProtocol:
		return "client-IP+protocol-affinity"
	}
	return fmt.Sprintf("distribution-%d", uint32(d))
}

// ProtocolName is "TCP", "UDP" or "protocol N".
func ProtocolName(p uint32) string {
	switch p {
	case ProtocolTCP:
		return "TCP"
	case ProtocolUDP:
		return "UDP"
	}
	return fmt.Sprintf("protocol %d", p)
}
