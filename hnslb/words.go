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
		switch pm.DistributionType {
		case DistributionSourceIP:
			w = append(w, "client-IP-affinity")
		case DistributionSourceIPProtocol:
			w = append(w, "client-IP+protocol-affinity")
		}
	}
	// Without DSR the load balancer rewrites the source to its source VIP
	// (with DSR the field is set too, but unused).
	if lb.SourceVIP != "" && lb.Flags&LoadBalancerFlagsDSR == 0 {
		w = append(w, "SNAT-to-"+lb.SourceVIP)
	}
	return w
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
