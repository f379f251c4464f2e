package cni_test

import (
	"context"
	"testing"

	"github.com/containernetworking/cni/libcni"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// TestWinBridgeOnAnL2TunnelNetwork: win-bridge wires pods into an
// L2Tunnel network as into an L2Bridge one (its ADD accepts either type),
// so hnscni installed under its name does too: ADD, STATUS and DEL.
func TestWinBridgeOnAnL2TunnelNetwork(t *testing.T) {
	cniPath := dropInDir(t)
	node := startNode(t, "n1", "--node-ip", "172.16.0.2", "--network-name", "other", "--network-type", "l2bridge", "--subnet", "10.244.9.0/24")
	t.Setenv("HNS_ENDPOINT", "unix://"+node.socket)
	_, err := node.client.CreateNetwork(context.Background(), &hnslb.Network{
		Name: "cbr0", Type: hnslb.NetworkTypeL2Tunnel, SchemaVersion: hnslb.V2,
		Ipams: []hnslb.Ipam{{Type: "Static", Subnets: []hnslb.Subnet{{IpAddressPrefix: "192.168.1.0/24",
			Routes: []hnslb.Route{{NextHop: "192.168.1.1", DestinationPrefix: "0.0.0.0/0"}}}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	cni := libcni.NewCNIConfigWithCacheDir([]string{cniPath}, t.TempDir(), nil)
	dataDir := t.TempDir()
	list := referenceList(t, "flannel-host-gw-win-bridge.json", "1.1.0", dataDir)
	if err := cni.GetStatusNetworkList(context.Background(), list); err != nil {
		t.Errorf("STATUS: %v", err)
	}
	p := pod{id: "tunnel", netns: node.createNamespace(t)}
	res := addAt(t, cni, list, p)
	if len(res.IPs) != 1 || res.IPs[0].Gateway.String() != "192.168.1.2" {
		t.Errorf("result IPs %+v, want one via win-bridge's 192.168.1.2", res.IPs)
	}
	if e := endpointByName(node.dump(t), "tunnel_cbr0"); e == nil {
		t.Errorf("no endpoint tunnel_cbr0: %v", names(node.dump(t)))
	}
	if err := cni.DelNetworkList(context.Background(), list, p.rt()); err != nil {
		t.Errorf("DEL: %v", err)
	}
	if s := node.dump(t); len(s.Endpoints) != 0 || len(allocatedOn(t, dataDir, list.Name)) != 0 {
		t.Errorf("after DEL: endpoints %v, addresses %v", names(s), allocatedOn(t, dataDir, list.Name))
	}
}
