package desired

import (
	"cmp"
	"net/netip"
	"slices"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

// RemoteSubnetIndex answers "which node hosts this pod IP" from the overlay
// network's RemoteSubnetRoute policies. It is built once when the policies
// change (NewRemoteSubnetIndex) and then only read, shared by every
// Service's computation: a lookup costs at most one map probe per distinct
// prefix length (one where every node's subnet has the same length), not a
// walk over every node's subnet, so the per-Service cost does not grow with
// the number of nodes. The nil index holds no routes.
type RemoteSubnetIndex struct {
	// routes are the usable routes, masked, longest prefix first (then by
	// address and provider address): the index's content, for equality.
	routes []RemoteSubnet
	// byLength has one table per prefix length and family, longest first;
	// a prefix routed to several nodes keeps the lowest provider address.
	byLength []subnetTable
	// nodes are the provider addresses themselves: a host-network pod's IP
	// is its node's PA.
	nodes map[netip.Addr]*overlayNode
	// nodesFirst: some provider address lies inside a routed subnet, so a
	// lookup asks nodes before the subnets (the node itself wins). Else a
	// pod IP, the common case, is answered by the subnets alone.
	nodesFirst bool
}

// overlayNode is one node's provider address and its text, formatted once
// for every backend on that node. Lookups return it whole, so a backend
// costs one map probe, not one for its node and one for the text.
type overlayNode struct {
	pa   netip.Addr
	text string
}

// subnetTable is the routes of one prefix length and family, keyed by the
// masked address.
type subnetTable struct {
	bits int
	is4  bool
	node map[netip.Addr]*overlayNode
}

// NewRemoteSubnetIndex indexes routes, leaving out those without a valid
// prefix or provider address.
func NewRemoteSubnetIndex(routes []RemoteSubnet) *RemoteSubnetIndex {
	return indexOf(usableRoutes(routes))
}

// Reindexed returns ix if routes are what it indexes, else
// NewRemoteSubnetIndex(routes): a re-read of the routes that changed
// nothing (each drift repair's, HNS's return) keeps the index, which
// configChanged takes for no change, and builds none (at 5,000 nodes its
// maps are some 1 MB of garbage).
func (ix *RemoteSubnetIndex) Reindexed(routes []RemoteSubnet) *RemoteSubnetIndex {
	usable := usableRoutes(routes)
	var have []RemoteSubnet
	if ix != nil {
		have = ix.routes
	}
	if slices.Equal(usable, have) {
		return ix
	}
	return indexOf(usable)
}

// usableRoutes are routes with a valid prefix and provider address,
// masked, in the index's order.
func usableRoutes(routes []RemoteSubnet) []RemoteSubnet {
	out := make([]RemoteSubnet, 0, len(routes))
	for _, r := range routes {
		if r.Prefix.IsValid() && r.ProviderAddress.IsValid() {
			out = append(out, RemoteSubnet{Prefix: r.Prefix.Masked(), ProviderAddress: r.ProviderAddress})
		}
	}
	slices.SortFunc(out, func(a, b RemoteSubnet) int {
		if c := cmp.Compare(b.Prefix.Bits(), a.Prefix.Bits()); c != 0 {
			return c
		}
		if c := a.Prefix.Addr().Compare(b.Prefix.Addr()); c != 0 {
			return c
		}
		return a.ProviderAddress.Compare(b.ProviderAddress)
	})
	return out
}

// indexOf indexes routes, which usableRoutes gave.
func indexOf(routes []RemoteSubnet) *RemoteSubnetIndex {
	ix := &RemoteSubnetIndex{routes: routes, nodes: map[netip.Addr]*overlayNode{}}
	for _, r := range routes {
		if ix.nodes[r.ProviderAddress] == nil {
			ix.nodes[r.ProviderAddress] = &overlayNode{pa: r.ProviderAddress, text: r.ProviderAddress.String()}
		}
		bits, is4 := r.Prefix.Bits(), r.Prefix.Addr().Is4()
		if n := len(ix.byLength); n == 0 || ix.byLength[n-1].bits != bits || ix.byLength[n-1].is4 != is4 {
			ix.byLength = append(ix.byLength, subnetTable{bits: bits, is4: is4, node: map[netip.Addr]*overlayNode{}})
		}
		t := ix.byLength[len(ix.byLength)-1]
		if _, dup := t.node[r.Prefix.Addr()]; !dup { // sorted: the lowest provider address comes first
			t.node[r.Prefix.Addr()] = ix.nodes[r.ProviderAddress]
		}
	}
	for pa := range ix.nodes {
		if _, routed := ix.subnetOf(pa); routed {
			ix.nodesFirst = true
			break
		}
	}
	return ix
}

// Routes are the usable routes, longest prefix first.
func (ix *RemoteSubnetIndex) Routes() []RemoteSubnet {
	if ix == nil {
		return nil
	}
	return slices.Clone(ix.routes)
}

// Len is the number of usable routes.
func (ix *RemoteSubnetIndex) Len() int {
	if ix == nil {
		return 0
	}
	return len(ix.routes)
}

// nodeOf returns the node hosting ip: the node itself if ip is a provider
// address, else the one the longest matching remote subnet routes to.
func (ix *RemoteSubnetIndex) nodeOf(ip netip.Addr) (*overlayNode, bool) {
	if ix == nil {
		return nil, false
	}
	if ix.nodesFirst {
		if n, ok := ix.nodes[ip]; ok {
			return n, true
		}
	}
	if n, ok := ix.subnetOf(ip); ok {
		return n, true
	}
	n, ok := ix.nodes[ip]
	return n, ok
}

// subnetOf returns the node the longest remote subnet holding ip routes to.
func (ix *RemoteSubnetIndex) subnetOf(ip netip.Addr) (*overlayNode, bool) {
	for _, t := range ix.byLength {
		if t.is4 != ip.Is4() {
			continue
		}
		if n, ok := t.node[netip.PrefixFrom(ip, t.bits).Masked().Addr()]; ok {
			return n, true
		}
	}
	return nil, false
}

// text is a provider address's text, formatted when the index was built
// if it is a node's.
func (ix *RemoteSubnetIndex) text(pa netip.Addr) string {
	if ix != nil {
		if n, ok := ix.nodes[pa]; ok {
			return n.text
		}
	}
	return pa.String()
}

// ProviderOf returns the provider address of the longest route that holds
// the whole of prefix: where a node's pod CIDR is routed, if Flannel has
// routed it.
func (ix *RemoteSubnetIndex) ProviderOf(prefix netip.Prefix) (netip.Addr, bool) {
	if ix == nil || !prefix.IsValid() {
		return netip.Addr{}, false
	}
	for _, t := range ix.byLength {
		if t.is4 != prefix.Addr().Is4() || t.bits > prefix.Bits() {
			continue
		}
		if n, ok := t.node[netip.PrefixFrom(prefix.Addr(), t.bits).Masked().Addr()]; ok {
			return n.pa, true
		}
	}
	return netip.Addr{}, false
}

// RemoteSubnetsOf reads a network's RemoteSubnetRoute policies, leaving out
// those whose prefix or provider address does not parse.
func RemoteSubnetsOf(n *hnslb.Network) []RemoteSubnet {
	routes := n.RemoteSubnetRoutes()
	out := make([]RemoteSubnet, 0, len(routes))
	for _, r := range routes {
		prefix, perr := netip.ParsePrefix(r.DestinationPrefix)
		pa, aerr := netip.ParseAddr(r.ProviderAddress)
		if perr != nil || aerr != nil {
			continue
		}
		out = append(out, RemoteSubnet{Prefix: prefix, ProviderAddress: pa})
	}
	return out
}

// SourceVIPEndpoints returns, on overlay, the endpoint carrying the source
// VIP for each family that has both a source VIP and a node IP: IP = source
// VIP, MAC = host MAC. Like winkernel, it is a local endpoint (Local: no
// RemoteEndpoint flag, no provider-address policy). Nil on l2bridge.
func SourceVIPEndpoints(cfg Config) []intent.RemoteEndpoint {
	if cfg.Mode != Overlay {
		return nil
	}
	var out []intent.RemoteEndpoint
	for _, fam := range []intent.IPFamily{intent.IPv4, intent.IPv6} {
		vip := cfg.SourceVIP[fam]
		if !vip.IsValid() || !cfg.NodeIPs[fam].IsValid() {
			continue
		}
		out = append(out, intent.RemoteEndpoint{IP: vip.String(), MAC: cfg.HostMAC, Local: true})
	}
	return out
}

// serviceVIPEndpoint is winkernel's overlay endpoint for a cluster IP: a
// remote endpoint with the host MAC whose provider address is this node.
func serviceVIPEndpoint(cfg *Config, clusterIP, nodeIP string) intent.RemoteEndpoint {
	return intent.RemoteEndpoint{IP: clusterIP, MAC: cfg.HostMAC, ProviderAddress: nodeIP}
}
