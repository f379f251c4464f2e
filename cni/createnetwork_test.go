package cni

import (
	"context"
	"errors"
	"net"
	"testing"

	"github.com/containernetworking/cni/pkg/types"
	current "github.com/containernetworking/cni/pkg/types/100"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
)

// createdNetwork is the network ADD creates on an empty node for the
// configuration stdin (createNetworkOn).
func createdNetwork(t *testing.T, stdin string) *hnslb.Network {
	t.Helper()
	created, err := createNetworkOn(t, sim.New(sim.Options{}), stdin)
	if err != nil {
		t.Fatal(err)
	}
	return created
}

// createNetworkOn is ADD's create of the configured network on HNS h, with
// the pod address 10.244.1.7/24 from IPAM.
func createNetworkOn(t *testing.T, h hnslb.Client, stdin string) (*hnslb.Network, error) {
	t.Helper()
	n, err := parseConfig([]byte(stdin))
	if err != nil {
		t.Fatal(err)
	}
	ipcs := []*current.IPConfig{{Address: net.IPNet{IP: net.IPv4(10, 244, 1, 7), Mask: net.CIDRMask(24, 32)}}}
	return hnsClient{h}.createNetwork(context.Background(), n, ipcs)
}

// TestCalicoVNIShapesTheNetworkItCreates: Calico for Windows gives the
// VXLAN id as "vxlan_vni"; an overlay network hnscni creates from a Calico
// configuration carries it as its subnet's VSID, not the default 4096.
func TestCalicoVNIShapesTheNetworkItCreates(t *testing.T) {
	created := createdNetwork(t, `{"cniVersion": "0.3.1", "name": "Calico", "type": "calico", "mode": "vxlan", "vxlan_vni": 4097,
		"providerAddress": "192.168.0.11", "ipam": {"type": "host-local"}}`)
	if got := created.Ipams[0].Subnets[0].Policies; len(got) != 1 || !jsonEqual(got[0], hnslb.NewVSIDSubnetPolicy(4097)) {
		t.Errorf("subnet policies %s, want the VSID 4097", got)
	}
}

// TestANetworkCreatedMeanwhileMustHaveTheModesType: ADD creates the
// network the node lacks; one another ADD (or the node's provisioning)
// created meanwhile under the name is taken only if its type is the
// mode's: pods are not wired into an overlay network as into an l2bridge
// one.
func TestANetworkCreatedMeanwhileMustHaveTheModesType(t *testing.T) {
	h := sim.New(sim.Options{})
	if _, err := h.CreateNetwork(context.Background(), &hnslb.Network{Name: "cbr0", Type: hnslb.NetworkTypeOverlay,
		Ipams: []hnslb.Ipam{{Type: "Static", Subnets: []hnslb.Subnet{{IpAddressPrefix: "10.244.1.0/24"}}}}}); err != nil {
		t.Fatal(err)
	}
	_, err := createNetworkOn(t, h, `{"cniVersion": "1.0.0", "name": "pods", "type": "hnscni", "mode": "l2bridge", "network": "cbr0", "ipam": {"type": "host-local"}}`)
	var te *types.Error
	if !errors.As(err, &te) || te.Code != types.ErrInvalidNetworkConfig {
		t.Errorf("l2bridge ADD finding an overlay network created meanwhile: %v, want code %d", err, types.ErrInvalidNetworkConfig)
	}
}

// TestTheNetworksProviderAddressWinsOverTheConfigured: an overlay pod's
// provider address is the one the HNS network carries; the configured
// providerAddress is for a network that carries none (or one hnscni
// creates), so a configuration written for another node, or before the
// node's address changed, does not put a wrong PA on the endpoint.
func TestTheNetworksProviderAddressWinsOverTheConfigured(t *testing.T) {
	n, err := parseConfig([]byte(`{"cniVersion": "1.0.0", "name": "vxlan0", "type": "hnscni", "mode": "overlay", "providerAddress": "192.168.0.99"}`))
	if err != nil {
		t.Fatal(err)
	}
	network := &hnslb.Network{Name: "vxlan0", Policies: []hnslb.NetworkPolicy{hnslb.NewNetworkPolicy(hnslb.NetworkPolicyProviderAddress,
		hnslb.ProviderAddressNetworkPolicySetting{ProviderAddress: "192.168.0.11"})}}
	if pa, err := providerAddress(network, n); err != nil || pa.String() != "192.168.0.11" {
		t.Errorf("provider address %s (%v), want the network's 192.168.0.11", pa, err)
	}
	if pa, err := providerAddress(&hnslb.Network{Name: "vxlan0"}, n); err != nil || pa.String() != "192.168.0.99" {
		t.Errorf("provider address of a network without one %s (%v), want the configured 192.168.0.99", pa, err)
	}
}

// TestAnOverlayNetworkOnTheDefaultPortHasNoVxlanPortPolicy: an overlay
// network hnscni creates without vxlanPort runs on VXLAN's 4789 and
// carries no VxlanPort policy (one with port 0 would not be that).
func TestAnOverlayNetworkOnTheDefaultPortHasNoVxlanPortPolicy(t *testing.T) {
	created := createdNetwork(t, `{"cniVersion": "1.0.0", "name": "vxlan0", "type": "hnscni", "mode": "overlay",
		"providerAddress": "192.168.0.11", "ipam": {"type": "host-local"}}`)
	for _, p := range created.Policies {
		if p.Type == hnslb.NetworkPolicyVxlanPort {
			t.Errorf("network policy %s %s on the default port", p.Type, p.Settings)
		}
	}
}
