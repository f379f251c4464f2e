package sim

import (
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

func TestNetworks(t *testing.T) {
	h := newSim(t, ProfileWS2022)
	pols := []hnslb.NetworkPolicy{
		hnslb.NewNetworkPolicy(hnslb.NetworkPolicyProviderAddress, hnslb.ProviderAddressNetworkPolicySetting{ProviderAddress: "192.168.1.11"}),
		hnslb.NewNetworkPolicy(hnslb.NetworkPolicyDrMacAddress, hnslb.DrMacAddressNetworkPolicySetting{Address: "01-02-03-04-05-06"}),
		hnslb.NewNetworkPolicy(hnslb.NetworkPolicySourceMacAddress, hnslb.SourceMacAddressNetworkPolicySetting{SourceMacAddress: "00-15-5D-00-00-01"}),
		hnslb.NewNetworkPolicy(hnslb.NetworkPolicyRemoteSubnetRoute, hnslb.RemoteSubnetRoutePolicySetting{
			DestinationPrefix: "10.244.2.0/24", IsolationId: 4096, ProviderAddress: "192.168.1.12", DistributedRouterMacAddress: "01-02-03-04-05-06"}),
	}
	n, err := h.CreateNetwork(ctx, &hnslb.Network{Name: "flannel.4096", Type: hnslb.NetworkTypeOverlay, Policies: pols})
	if err != nil {
		t.Fatal(err)
	}
	if !hnslb.IsGUID(n.ID) || n.SchemaVersion != hnslb.V2 || n.ProviderAddress() != "192.168.1.11" ||
		len(n.RemoteSubnetRoutes()) != 1 || len(n.Policies) != 4 {
		t.Fatalf("created %+v", n)
	}
	byName, err := h.GetNetworkByName(ctx, "flannel.4096")
	if err != nil || byName.ID != n.ID {
		t.Errorf("by name: %+v %v", byName, err)
	}
	_, err = h.GetNetworkByName(ctx, "cbr0")
	wantCode(t, err, hnslb.CodeNetworkNotFound)
	if !hnslb.IsNotFound(err) {
		t.Errorf("IsNotFound(%v) = false", err)
	}
	_, err = h.GetNetworkByID(ctx, "0b5e4c1e-0000-4000-8000-000000000000")
	wantCode(t, err, hnslb.CodeNotFound)

	_, err = h.CreateNetwork(ctx, &hnslb.Network{Name: "flannel.4096", Type: hnslb.NetworkTypeL2Bridge})
	wantCode(t, err, hnslb.CodeNetworkAlreadyExists)
	for name, doc := range map[string]*hnslb.Network{
		"nil":          nil,
		"no name":      {Type: hnslb.NetworkTypeL2Bridge},
		"unknown type": {Name: "x", Type: "Bridge"},
		"bad subnet":   {Name: "x", Type: hnslb.NetworkTypeL2Bridge, Ipams: []hnslb.Ipam{{Subnets: []hnslb.Subnet{{IpAddressPrefix: "10.0.0.0/33"}}}}},
		"bad policy":   {Name: "x", Type: hnslb.NetworkTypeL2Bridge, Policies: []hnslb.NetworkPolicy{{Type: hnslb.NetworkPolicyDrMacAddress, Settings: []byte(`"x"`)}}},
	} {
		if _, err := h.CreateNetwork(ctx, doc); !hnslb.IsInvalidParameter(err) {
			t.Errorf("%s: got %v, want invalid parameter", name, err)
		}
	}
	list, err := h.ListNetworks(ctx)
	if err != nil || len(list) != 1 {
		t.Errorf("list: %d %v", len(list), err)
	}
}

func TestDeleteNetworkDeletesItsEndpoints(t *testing.T) {
	h := newSim(t, ProfileWS2022)
	n := mustNetwork(t, h, "cbr0", hnslb.NetworkTypeL2Bridge)
	keep := mustNetwork(t, h, "other", hnslb.NetworkTypeL2Bridge)
	ep := mustEndpoint(t, h, n.ID, endpointDoc("10.244.1.5"))
	kept := mustEndpoint(t, h, keep.ID, endpointDoc("10.244.1.5"))
	lb, err := h.CreateLoadBalancer(ctx, lbDoc("10.96.0.10", 80, ep.ID, kept.ID))
	if err != nil {
		t.Fatal(err)
	}
	if err := h.DeleteNetwork(ctx, n.ID); err != nil {
		t.Fatal(err)
	}
	wantCode(t, h.DeleteNetwork(ctx, n.ID), hnslb.CodeNotFound)
	snap := h.Snapshot()
	if len(snap.Networks) != 1 || len(snap.Endpoints) != 1 || snap.Endpoints[0].ID != kept.ID {
		t.Errorf("after delete: %d networks, endpoints %+v", len(snap.Networks), snap.Endpoints)
	}
	got, _ := h.GetLoadBalancerByID(ctx, lb.ID)
	if len(got.HostComputeEndpoints) != 1 || got.HostComputeEndpoints[0] != kept.ID {
		t.Errorf("load balancer backends %v", got.HostComputeEndpoints)
	}
	// The name is free again, and the address on a new network too.
	n2 := mustNetwork(t, h, "cbr0", hnslb.NetworkTypeL2Bridge)
	mustEndpoint(t, h, n2.ID, endpointDoc("10.244.1.5"))
}

func TestSetNetworkPolicies(t *testing.T) {
	h := newSim(t, ProfileWS2022)
	n := mustNetwork(t, h, "flannel.4096", hnslb.NetworkTypeOverlay)
	route := hnslb.NewNetworkPolicy(hnslb.NetworkPolicyRemoteSubnetRoute, hnslb.RemoteSubnetRoutePolicySetting{
		DestinationPrefix: "10.244.3.0/24", IsolationId: 4096, ProviderAddress: "192.168.1.13"})
	h.SetFaults(Faults{ErrorRate: map[Op]float64{AnyOp: 1}})
	if err := h.SetNetworkPolicies(n.ID, []hnslb.NetworkPolicy{route}); err != nil {
		t.Fatal(err)
	}
	h.SetFaults(Faults{})
	got, _ := h.GetNetworkByID(ctx, n.ID)
	if r := got.RemoteSubnetRoutes(); len(r) != 1 || r[0].ProviderAddress != "192.168.1.13" {
		t.Errorf("routes %+v", r)
	}
	wantCode(t, h.SetNetworkPolicies("0b5e4c1e-0000-4000-8000-000000000000", nil), hnslb.CodeNotFound)
	wantCode(t, h.SetNetworkPolicies(n.ID, []hnslb.NetworkPolicy{{Type: "X", Settings: []byte("1")}}), hnslb.CodeInvalidParameter)
	if c := h.Counters(); c.Count(OpSetNetworkPolicies) != 3 || c.Writes() != 1 {
		t.Errorf("counters %+v writes %d", c.Calls, c.Writes())
	}
}
