package cni

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/containernetworking/cni/pkg/types"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// addressRefusedWhat heads the errors of an address HNS refuses.
const addressRefusedWhat = "create HNS endpoint: HNS refuses the pod's address"

// addressRefused is the CNI error for an endpoint create HNS refused for
// the pod's address (hnslb.IsAddressRefused: "already exists" or "invalid or
// reserved", whichever code this HNS gives). It names what holds the
// address. A service proxy's remote endpoint for a pod that had the address
// on another node is the known holder (kubernetes/kubernetes#130963 on
// builds that allow no local and remote endpoint on one address): the proxy
// that counts it deletes it once it sees that pod gone, so the runtime
// should try again later. One no proxy counts stays for good: kube-proxy's
// left on a node moved to hnsproxy, which deletes only its own, or one
// kube-proxy lost count of at a restart. No program tells those apart from
// here, so the error names the way out for that case; the runtime's
// retries would otherwise promise what never comes. Anything else is
// reported as it is. eps is the network's listing.
func addressRefused(eps []hnslb.Endpoint, spec endpointSpec, refused error) error {
	var held, removes []string
	remoteOnly := true
	for _, a := range spec.addrs {
		for i := range eps {
			if ep := &eps[i]; ep.HasAddress(a.addr.Addr()) {
				remoteOnly = remoteOnly && ep.IsRemote()
				held = append(held, fmt.Sprintf("%s held by %s endpoint %s %q", a.addr.Addr(), ep.KindWord(), ep.ID, ep.Name))
				removes = append(removes, "'hnsdiag delete endpoints "+ep.ID+"'")
			}
		}
	}
	switch {
	case len(held) == 0:
		return types.NewError(types.ErrInternal, addressRefusedWhat,
			fmt.Sprintf("no endpoint on the network holds it, so HNS takes it for invalid or reserved there (a subnet's own, broadcast or gateway address, or one the host holds): %v", refused))
	case remoteOnly:
		return types.NewError(types.ErrTryAgainLater, addressRefusedWhat,
			fmt.Sprintf("%s: a service proxy's endpoint for a pod that had the address on another node, deleted once the proxy that counts it sees that pod gone; if none does (one kube-proxy left: hnsproxy deletes only its own), nothing deletes it: check that no pod on another node has the address and remove it with %s: %v",
				strings.Join(held, "; "), strings.Join(removes, " and "), refused))
	}
	return types.NewError(types.ErrInternal, addressRefusedWhat, fmt.Sprintf("%s: %v", strings.Join(held, "; "), refused))
}

// createOverLeftovers answers an endpoint create HNS refused for the pod's
// address. IPAM handed the address to this attachment, so whatever attachment
// had it released it; an endpoint hnscni made for another attachment that
// still holds it, attached to no namespace (read from the endpoint and from
// the namespaces), is a leftover: a create HNS
// applied after its plugin had answered (a hung call given up on, a plugin
// the runtime killed) and after the runtime's DEL. It is removed, with a
// warning, and the create made once more. What else holds the address is
// reported (addressRefused) and left alone.
func (s *session) createOverLeftovers(ctx context.Context, networkID string, spec endpointSpec, refused error) (*hnslb.Endpoint, error) {
	eps, err := s.hns.ListEndpointsOfNetwork(ctx, networkID)
	if err != nil {
		return nil, hnsError(addressRefusedWhat, refused)
	}
	removed := 0
	var namespaces []hnslb.Namespace
	listed := false // namespaces are read for the first candidate only
	for i := range eps {
		ep := &eps[i]
		if ep.Name == spec.name || ep.HostComputeNamespace != "" || !s.conf.ours(ep) || !holdsAny(ep, spec) {
			continue
		}
		// Attached is read from both sides, as CHECK reads it.
		if !listed {
			if namespaces, err = s.hns.ListNamespaces(ctx); err != nil {
				return nil, hnsError("list HNS namespaces", err)
			}
			listed = true
		}
		if slices.ContainsFunc(namespaces, func(ns hnslb.Namespace) bool { return namespaceHasEndpoint(&ns, ep.ID) }) {
			continue
		}
		if err := s.hns.deleteEndpoint(ctx, ep); err != nil {
			return nil, err
		}
		fmt.Fprintf(os.Stderr, "hnscni: warning: removed endpoint %s %q, attached to no namespace, which held %s that IPAM gave this pod: a create HNS applied after its plugin had answered\n", ep.ID, ep.Name, ep.IP())
		removed++
	}
	if removed == 0 {
		return nil, addressRefused(eps, spec, refused)
	}
	ep, err := s.hns.CreateEndpoint(ctx, networkID, s.conf.buildEndpoint(spec))
	if hnslb.IsAddressRefused(err) {
		if eps, lerr := s.hns.ListEndpointsOfNetwork(ctx, networkID); lerr == nil {
			return nil, addressRefused(eps, spec, err)
		}
	}
	return ep, err
}

// holdsAny reports whether ep has one of the pod's addresses.
func holdsAny(ep *hnslb.Endpoint, spec endpointSpec) bool {
	for _, a := range spec.addrs {
		if ep.HasAddress(a.addr.Addr()) {
			return true
		}
	}
	return false
}
