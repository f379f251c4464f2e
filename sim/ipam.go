package sim

import (
	"net/netip"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// assignAddress is HNS's own IPAM: a copy of a local endpoint document
// without an address, given the lowest free address of the network's
// first IPv4 subnet (not the subnet's own address, its broadcast address,
// or a gateway its routes name) with the subnet's prefix length, and a
// default route through the subnet's gateway unless the document has one.
// The address returns to the pool when the endpoint is deleted.
func (h *HNS) assignAddress(op Op, n *hnslb.Network, e *hnslb.Endpoint) (*hnslb.Endpoint, error) {
	for _, ipam := range n.Ipams {
		for _, s := range ipam.Subnets {
			p, err := netip.ParsePrefix(s.IpAddressPrefix)
			if err != nil || !p.Addr().Is4() {
				continue
			}
			p = p.Masked()
			reserved := map[netip.Addr]bool{p.Addr(): true}
			var gateway netip.Addr
			for _, r := range s.Routes {
				if gw, err := netip.ParseAddr(r.NextHop); err == nil {
					reserved[gw] = true
					gateway = gw
				}
			}
			for a := p.Addr().Next(); p.Contains(a); a = a.Next() {
				if reserved[a] || !p.Contains(a.Next()) || len(h.state.endpointsWithIP(n.ID, a)) > 0 {
					continue // reserved, broadcast, or held
				}
				out := copyEndpoint(e)
				out.IpConfigurations = []hnslb.IPConfig{{IpAddress: a.String(), PrefixLength: uint8(p.Bits())}}
				if len(out.Routes) == 0 && gateway.IsValid() {
					out.Routes = []hnslb.Route{{NextHop: gateway.String(), DestinationPrefix: "0.0.0.0/0"}}
				}
				return out, nil
			}
			return nil, hnsError(op, hnslb.CodeInvalidParameter, "subnet %s of network %s has no free address", p, n.Name)
		}
	}
	return nil, hnsError(op, hnslb.CodeInvalidParameter, "endpoint has no IP configuration and network %s no IPv4 subnet to assign one from", n.Name)
}
