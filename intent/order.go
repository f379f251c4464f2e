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
	return compareKeys(a, b, func() int { return CompareIPs(a.VIP, b.VIP) })
}

// compareKeys is CompareLBKeys with the comparison of two distinct,
// non-empty VIPs given (SortLBKeys has them parsed already).
func compareKeys(a, b LBKey, vips func() int) int {
	if c := cmp.Compare(a.Family, b.Family); c != 0 {
		return c
	}
	if a.VIP != b.VIP {
		if a.VIP == "" || b.VIP == "" {
			return cmp.Compare(a.VIP, b.VIP)
		}
		return vips()
	}
	return cmp.Or(cmp.Compare(a.Protocol, b.Protocol), cmp.Compare(a.Port, b.Port))
}

// CompareIPs orders IP strings numerically; unparsable ones come last, by text.
func CompareIPs(a, b string) int { return parseIP(a).compare(parseIP(b)) }

// EqualLB reports whether two desired load balancers are identical.
func EqualLB(a, b *LB) bool {
	return a.Key == b.Key && a.SourceVIP == b.SourceVIP && a.InternalPort == b.InternalPort &&
		a.Distribution == b.Distribution && a.PortFlags == b.PortFlags && a.Flags == b.Flags &&
		a.Owner == b.Owner && a.Origin == b.Origin && slices.Equal(a.Backends, b.Backends) && slices.Equal(a.Spares, b.Spares)
}

// SortLBKeys sorts keys in CompareLBKeys order, parsing each VIP once
// rather than at every comparison: a cold start sorts 10,000 keys.
func SortLBKeys(keys []LBKey) {
	if len(keys) < 2 {
		return
	}
	parsed := make([]parsedKey, len(keys))
	for i, k := range keys {
		parsed[i] = parsedKey{key: k, ip: parseIP(k.VIP)}
	}
	slices.SortFunc(parsed, func(a, b parsedKey) int {
		return compareKeys(a.key, b.key, func() int { return a.ip.compare(b.ip) })
	})
	for i := range parsed {
		keys[i] = parsed[i].key
	}
}

// SortIPs sorts IP strings in CompareIPs order, parsing each once.
func SortIPs(ips []string) {
	if len(ips) < 2 {
		return
	}
	parsed := make([]parsedIP, len(ips))
	for i, s := range ips {
		parsed[i] = parseIP(s)
	}
	slices.SortFunc(parsed, parsedIP.compare)
	for i := range parsed {
		ips[i] = parsed[i].text
	}
}

type parsedKey struct {
	key LBKey
	ip  parsedIP
}

// parsedIP is an IP string with its address, if it parses.
type parsedIP struct {
	text string
	addr netip.Addr
	ok   bool
}

func parseIP(s string) parsedIP {
	a, err := netip.ParseAddr(s)
	return parsedIP{text: s, addr: a, ok: err == nil}
}

// compare is CompareIPs on parsed strings.
func (x parsedIP) compare(y parsedIP) int {
	switch {
	case x.ok && y.ok:
		return x.addr.Compare(y.addr)
	case x.ok:
		return -1
	case y.ok:
		return 1
	}
	return cmp.Compare(x.text, y.text)
}
