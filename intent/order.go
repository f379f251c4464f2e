package intent

import (
	"cmp"
	"net/netip"
	"slices"
)

// CompareLBKeys is the one order of load-balancer keys (sorted changes,
// status and debug output, the reconciler's processing order): family, then
// VIP (NodePort's "" first, then by address, see CompareIPs), protocol, port.
func CompareLBKeys(a, b LBKey) int {
	if c := cmp.Compare(a.Family, b.Family); c != 0 {
		return c
	}
	if a.VIP != b.VIP {
		if a.VIP == "" || b.VIP == "" {
			return cmp.Compare(a.VIP, b.VIP)
		}
		return CompareIPs(a.VIP, b.VIP)
	}
	if c := cmp.Compare(a.Protocol, b.Protocol); c != 0 {
		return c
	}
	return cmp.Compare(a.Port, b.Port)
}

// CompareIPs orders IP strings numerically; unparsable ones come last, by text.
func CompareIPs(a, b string) int {
	x, errA := netip.ParseAddr(a)
	y, errB := netip.ParseAddr(b)
	switch {
	case errA == nil && errB == nil:
		return x.Compare(y)
	case errA == nil:
		return -1
	case errB == nil:
		return 1
	}
	return cmp.Compare(a, b)
}

// EqualLB reports whether two desired load balancers are identical.
func EqualLB(a, b *LB) bool {
	return a.Key == b.Key && a.SourceVIP == b.SourceVIP && a.InternalPort == b.InternalPort &&
		a.Distribution == b.Distribution && a.PortFlags == b.PortFlags && a.Flags == b.Flags &&
		a.Owner == b.Owner && a.Origin == b.Origin && slices.Equal(a.Backends, b.Backends) && slices.Equal(a.Spares, b.Spares)
}
