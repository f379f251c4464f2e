package cni

import (
	"context"
	"fmt"
	"strings"

	"github.com/containernetworking/cni/pkg/types"
)

// addressRefused is the CNI error for an endpoint create HNS refused for
// the pod's address (hnslb.IsAddressRefused: "already exists" or "invalid or
// reserved", whichever code this HNS gives). It names what holds the
// address. A service proxy's remote endpoint for a pod that had the address
// on another node is the known holder (kubernetes/kubernetes#130963 on
// builds that allow no local and remote endpoint on one address): the proxy
// deletes it once it sees that pod gone, so the runtime should try again
// later. Anything else is reported as it is.
func addressRefused(ctx context.Context, c hnsClient, networkID string, spec endpointSpec, refused error) error {
	const what = "create HNS endpoint: HNS refuses the pod's address"
	eps, err := c.ListEndpointsOfNetwork(ctx, networkID)
	if err != nil {
		return hnsError(what, refused)
	}
	var held []string
	remoteOnly := true
	for _, a := range spec.addrs {
		for i := range eps {
			if ep := &eps[i]; ep.HasAddress(a.addr.Addr()) {
				remoteOnly = remoteOnly && ep.IsRemote()
				held = append(held, fmt.Sprintf("%s held by %s endpoint %s %q", a.addr.Addr(), ep.KindWord(), ep.ID, ep.Name))
			}
		}
	}
	switch {
	case len(held) == 0:
		return types.NewError(types.ErrInternal, what,
			fmt.Sprintf("no endpoint on the network holds it, so HNS takes it for invalid or reserved there (a subnet's own, broadcast or gateway address, or one the host holds): %v", refused))
	case remoteOnly:
		return types.NewError(types.ErrTryAgainLater, what,
			fmt.Sprintf("%s: a service proxy's endpoint for a pod that had the address on another node, deleted once the proxy sees that pod gone: %v", strings.Join(held, "; "), refused))
	}
	return types.NewError(types.ErrInternal, what, fmt.Sprintf("%s: %v", strings.Join(held, "; "), refused))
}
