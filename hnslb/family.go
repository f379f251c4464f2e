package hnslb

import "net/netip"

// IsIPv6 reports a load balancer's address family as a listing gives it:
// by the IPv6 flag, else by its frontend VIP, else by its source VIP. HNS
// refuses an IPv6 address on a load balancer without the flag, but no
// public capture shows a listing echo the flag (docs/simulator.md, echo
// drop-unconfirmed-flags), so the addresses tell where the flag is absent.
func (lb *LoadBalancer) IsIPv6() bool {
	if lb.Flags&LoadBalancerFlagsIPv6 != 0 {
		return true
	}
	addr := lb.SourceVIP
	if len(lb.FrontendVIPs) > 0 {
		addr = lb.FrontendVIPs[0]
	}
	a, err := netip.ParseAddr(addr)
	return err == nil && a.Is6() && !a.Is4In6()
}
