package sim

import (
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// TestEchoUpperGUIDsAnswersTheNamespaceReferenceInUpperCase: upper-guids
// answers every GUID an endpoint carries in upper case, the namespace it is
// attached to too (docs/simulator.md, "IDs, backend, network and namespace
// references"), while HNS stores it lower case.
func TestEchoUpperGUIDsAnswersTheNamespaceReferenceInUpperCase(t *testing.T) {
	h := newSim(t, ProfileWS2022)
	n := mustNetwork(t, h, "cbr0", hnslb.NetworkTypeL2Bridge)
	ep := mustEndpoint(t, h, n.ID, endpointDoc("10.244.1.5"))
	ns, err := h.CreateNamespace(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.AddNamespaceEndpoint(ctx, ns.ID, ep.ID); err != nil {
		t.Fatal(err)
	}
	h.SetEcho(Echo{UpperGUIDs: true})
	got, err := h.GetEndpointByID(ctx, ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.HostComputeNamespace != strings.ToUpper(ns.ID) {
		t.Errorf("answered namespace %q, want %q", got.HostComputeNamespace, strings.ToUpper(ns.ID))
	}
	if stored := h.Snapshot().Endpoints[0].HostComputeNamespace; stored != strings.ToLower(ns.ID) {
		t.Errorf("stored namespace %q, want lower case", stored)
	}
}

// TestEchoDropUnconfirmedFlagsDropsTheIPv6Flag: drop-unconfirmed-flags
// answers an IPv6 load balancer without load balancer flag 2 (IPv6), which
// no capture shows echoed; DSR stays, and HNS keeps both.
func TestEchoDropUnconfirmedFlagsDropsTheIPv6Flag(t *testing.T) {
	h := newSim(t, ProfileWS2025)
	backend := sharedBackend(t, h)
	lb := lbDoc("fd00:96::10", 80, backend)
	lb.Flags = hnslb.LoadBalancerFlagsIPv6 | hnslb.LoadBalancerFlagsDSR
	created, err := h.CreateLoadBalancer(ctx, lb)
	if err != nil {
		t.Fatal(err)
	}
	h.SetEcho(Echo{DropUnconfirmedFlags: true})
	got, err := h.GetLoadBalancerByID(ctx, created.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Flags != hnslb.LoadBalancerFlagsDSR {
		t.Errorf("answered flags %v, want DSR alone", got.Flags)
	}
	if stored := h.Snapshot().LoadBalancers[0].Flags; stored != lb.Flags {
		t.Errorf("stored flags %v, want %v", stored, lb.Flags)
	}
}
