package hnslb_test

import (
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// The VSID policy is stored raw in Subnet.Policies, so its bytes are what
// HNS (and hcn's SubnetPolicy{Type, Settings}) sees.
func TestNewVSIDSubnetPolicy(t *testing.T) {
	for vni, want := range map[uint32]string{
		4096: `{"Type":"VSID","Settings":{"IsolationId":4096}}`,
		0:    `{"Type":"VSID","Settings":{"IsolationId":0}}`,
	} {
		if got := string(hnslb.NewVSIDSubnetPolicy(vni)); got != want {
			t.Errorf("NewVSIDSubnetPolicy(%d) = %s, want %s", vni, got, want)
		}
	}
}

// TestPoliciesAreReadByType: a network's remote subnet routes are its
// RemoteSubnetRoute policies alone, and its and an endpoint's provider
// address come from their ProviderAddress policy, not from another policy
// with a field of that name.
func TestPoliciesAreReadByType(t *testing.T) {
	n := &hnslb.Network{Policies: []hnslb.NetworkPolicy{
		hnslb.NewNetworkPolicy(hnslb.NetworkPolicyRemoteSubnetRoute, hnslb.RemoteSubnetRoutePolicySetting{DestinationPrefix: "10.244.2.0/24", ProviderAddress: "192.168.0.12"}),
		hnslb.NewNetworkPolicy(hnslb.NetworkPolicyProviderAddress, hnslb.ProviderAddressNetworkPolicySetting{ProviderAddress: "192.168.0.10"}),
	}}
	if routes := n.RemoteSubnetRoutes(); len(routes) != 1 || routes[0].DestinationPrefix != "10.244.2.0/24" {
		t.Errorf("remote subnet routes %+v, want the one route", routes)
	}
	n.Policies = n.Policies[:1]
	if pa := n.ProviderAddress(); pa != "" {
		t.Errorf("network provider address %q from a route, want none", pa)
	}
	ep := &hnslb.Endpoint{Policies: []hnslb.EndpointPolicy{
		hnslb.NewEndpointPolicy(hnslb.EndpointPolicySDNRoute, map[string]string{"ProviderAddress": "192.168.0.99"}),
		hnslb.NewEndpointPolicy(hnslb.EndpointPolicyProviderAddress, hnslb.ProviderAddressEndpointPolicySetting{ProviderAddress: "192.168.0.12"}),
	}}
	if pa := ep.ProviderAddress(); pa != "192.168.0.12" {
		t.Errorf("endpoint provider address %q, want 192.168.0.12", pa)
	}
}
