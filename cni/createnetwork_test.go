package cni

import (
	"context"
	"net"
	"testing"

	current "github.com/containernetworking/cni/pkg/types/100"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
)

// createdNetwork is the network ADD creates on an empty node for the
// configuration stdin, with the pod address 10.244.1.7/24 from IPAM.
func createdNetwork(t *testing.T, stdin string) *hnslb.Network {
	t.Helper()
	n, err := parseConfig([]byte(stdin))
	if err != nil {
		t.Fatal(err)
	}
	ipcs := []*current.IPConfig{{Address: net.IPNet{IP: net.IPv4(10, 244, 1, 7), Mask: net.CIDRMask(24, 32)}}}
	created, err := hnsClient{sim.New(sim.Options{})}.createNetwork(context.Background(), n, ipcs)
	if err != nil {
		t.Fatal(err)
	}
	return created
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
