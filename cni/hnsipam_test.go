package cni_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/types"
)

// TestHNSAssignsAddresses: a configuration without "ipam" (as the
// Kubernetes docs allow for win-bridge) gets its pods' addresses from HNS,
// out of the network's subnet; the result carries them with the subnet's
// prefix and gateway; CHECK and GC work; DEL gives the address back to HNS,
// which hands it out again. HNS's answers are as stored, and with every
// echo variant: the address is read back from them.
func TestHNSAssignsAddresses(t *testing.T) {
	forEachEcho(t, hnsAssignsAddresses)
}

func hnsAssignsAddresses(t *testing.T, nodeArgs ...string) {
	node := startNode(t, "n1", append([]string{"--node-ip", "172.16.0.2", "--network-name", "cbr0", "--network-type", "l2bridge", "--subnet", "10.244.7.0/24"}, nodeArgs...)...)
	t.Setenv("HNS_ENDPOINT", "unix://"+node.socket)
	raw, _ := json.Marshal(map[string]any{"cniVersion": "1.1.0", "name": "cbr0", "type": "win-bridge",
		"dns": map[string]any{"nameservers": []string{"10.96.0.10"}}})
	list := confList(t, raw)
	cni := libcni.NewCNIConfigWithCacheDir([]string{dropInDir(t)}, t.TempDir(), nil)
	ctx := context.Background()

	var got []string
	pods := []pod{{id: "a", netns: node.createNamespace(t)}, {id: "b", netns: node.createNamespace(t)}}
	for _, p := range pods {
		res := addAt(t, cni, list, p)
		if len(res.IPs) != 1 || res.IPs[0].Address.String() != res.IPs[0].Address.IP.String()+"/24" || res.IPs[0].Gateway.String() != "10.244.7.1" {
			t.Errorf("%s: result IPs %+v", p.id, res.IPs)
		}
		got = append(got, res.IPs[0].Address.IP.String())
		if err := cni.CheckNetworkList(ctx, list, p.rt()); err != nil {
			t.Errorf("CHECK %s: %v", p.id, err)
		}
	}
	if !slices.Equal(got, []string{"10.244.7.2", "10.244.7.3"}) {
		t.Errorf("HNS assigned %v, want the subnet's first free addresses", got)
	}
	if err := cni.DelNetworkList(ctx, list, pods[0].rt()); err != nil {
		t.Fatal(err)
	}
	if again := addAt(t, cni, list, pod{id: "c", netns: node.createNamespace(t)}); again.IPs[0].Address.IP.String() != "10.244.7.2" {
		t.Errorf("after DEL of a, c got %s, want a's address back", again.IPs[0].Address.IP)
	}
	valid := []types.GCAttachment{{ContainerID: "c", IfName: "eth0"}}
	if err := cni.GCNetworkList(ctx, list, &libcni.GCArgs{ValidAttachments: valid}); err != nil {
		t.Fatal(err)
	}
	if got := names(node.dump(t)); !slices.Equal(got, []string{"c_cbr0"}) {
		t.Errorf("after GC: %v, want only c's endpoint", got)
	}
}
