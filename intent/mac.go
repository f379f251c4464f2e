package intent

import "net/netip"

// ConjureMAC makes the MAC HNS gets for a remote endpoint, as kube-proxy's
// winkernel does: "02-11-" then the four IPv4 bytes, or for IPv6 the last
// four bytes in reverse order. The MAC never goes on the wire; it only needs
// to differ between endpoints. A function of the IP alone, so a backend
// carries none: its endpoint (EndpointOf) is given one.
func ConjureMAC(ip netip.Addr) string {
	ip = ip.Unmap()
	switch {
	case ip.Is4():
		b := ip.As4()
		return macOf(b[0], b[1], b[2], b[3])
	case ip.Is6():
		b := ip.As16()
		return macOf(b[15], b[14], b[13], b[12])
	}
	return "02-11-22-33-44-55"
}

// macOf is "02-11-" and the four bytes in lowercase hex, without fmt: one
// per remote endpoint, it showed in cold-start profiles.
func macOf(b ...byte) string {
	const hex = "0123456789abcdef"
	out := []byte("02-11-xx-xx-xx-xx")
	for i, v := range b {
		out[6+3*i], out[7+3*i] = hex[v>>4], hex[v&0xf]
	}
	return string(out)
}
