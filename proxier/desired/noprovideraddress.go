package desired

import (
	"net/netip"
	"slices"
)

// providerAddressesUnknown reports the Service's overlay backends in no
// remote subnet, reached through this node as external addresses. Pods of
// another node there and addresses on no node (a Service's own
// EndpointSlice naming hosts outside the cluster, or pods a hand-written or
// mirrored slice gives no nodeName) are two node causes: the
// latter lasts as long as its Service, and were it the same cause it would
// keep the Node from hearing of a node whose route the CNI has not added.
func (b *serviceBuilder) providerAddressesUnknown() {
	var onNodes, outside []netip.Addr
	for ip, onNode := range b.unknownPA {
		if onNode {
			onNodes = append(onNodes, ip)
		} else {
			outside = append(outside, ip)
		}
	}
	slices.SortFunc(onNodes, netip.Addr.Compare)
	slices.SortFunc(outside, netip.Addr.Compare)
	all := slices.Concat(onNodes, outside)
	slices.SortFunc(all, netip.Addr.Compare)
	b.r.NoProviderAddress = all
	if len(onNodes) > 0 {
		b.problem(note(ReasonProviderAddressUnknown,
			"%d remote endpoints on other nodes (first %s) are in no remote subnet of the overlay network: treated as external addresses reached through this node",
			len(onNodes), onNodes[0]).
			because("backends on other nodes are in no remote subnet of the overlay network on this node, as when the CNI has not added a node's route yet: they are treated as external addresses reached through this node"))
	}
	if len(outside) > 0 {
		b.problem(note(ReasonProviderAddressUnknown,
			"%d remote endpoints on no node (first %s) are in no remote subnet of the overlay network: treated as external addresses reached through this node",
			len(outside), outside[0]).
			because("backends their EndpointSlice places on no node (hosts outside the cluster, or pods whose slice was written without a nodeName) are in no remote subnet of the overlay network on this node: they are treated as external addresses reached through this node"))
	}
}
