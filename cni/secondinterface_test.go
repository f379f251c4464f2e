package cni_test

import (
	"context"
	"slices"
	"testing"

	"github.com/containernetworking/cni/libcni"
)

// TestSecondInterfacesKeepTheirOwnEndpoints: a pod with several
// interfaces on one network (a Multus-style second network of the same
// HNS network), two of them named so that the name earlier hnscni
// releases gave them ("<containerID>_<ifname>") is the name another of
// the pod's interfaces has now: "cbr0" (the pod's eth0 endpoint is
// "<containerID>_cbr0") and "cbr0_net1" (net1's is
// "<containerID>_cbr0:net1"). Each interface's ADD, CHECK and DEL touches
// its own endpoint and address only: none takes another's endpoint for a
// leftover of its own, which ADD would delete and DEL release.
func TestSecondInterfacesKeepTheirOwnEndpoints(t *testing.T) {
	n1, conf := l2bridgeNode(t, 67)
	rt := newRuntime(t, conf)
	p := pod{id: "multi", netns: n1.createNamespace(t)}
	ifNames := []string{"eth0", "net1", "cbr0", "cbr0_net1"}
	endpoints := []string{"multi_cbr0", "multi_cbr0:net1", "multi_cbr0:cbr0", "multi_cbr0:cbr0_net1"}
	ctx := context.Background()
	attachment := func(ifName string) *libcni.RuntimeConf {
		return &libcni.RuntimeConf{ContainerID: p.id, NetNS: p.netns, IfName: ifName}
	}
	for _, ifName := range ifNames {
		if _, err := rt.cni.AddNetworkList(ctx, rt.list, attachment(ifName)); err != nil {
			t.Fatalf("ADD of interface %s: %v", ifName, err)
		}
	}
	got := names(n1.dump(t))
	want := slices.Sorted(slices.Values(endpoints))
	if !slices.Equal(got, want) {
		t.Fatalf("endpoints after the four ADDs %v, want %v", got, want)
	}
	addresses := allocated(t, conf.dataDir)
	if len(addresses) != len(ifNames) {
		t.Fatalf("addresses after the four ADDs %v, want four", addresses)
	}
	for _, ifName := range ifNames {
		if err := rt.cni.CheckNetworkList(ctx, rt.list, attachment(ifName)); err != nil {
			t.Errorf("CHECK of interface %s: %v", ifName, err)
		}
	}
	// Deleted in reverse, each DEL leaves the interfaces before it whole.
	for i := len(ifNames) - 1; i >= 0; i-- {
		if err := rt.cni.DelNetworkList(ctx, rt.list, attachment(ifNames[i])); err != nil {
			t.Fatalf("DEL of interface %s: %v", ifNames[i], err)
		}
		want := slices.Sorted(slices.Values(endpoints[:i]))
		if got := names(n1.dump(t)); !slices.Equal(got, want) {
			t.Errorf("after the DEL of interface %s: endpoints %v, want %v", ifNames[i], got, want)
		}
		if got := allocated(t, conf.dataDir); len(got) != i {
			t.Errorf("after the DEL of interface %s: addresses %v, want %d", ifNames[i], got, i)
		}
		for _, ifName := range ifNames[:i] {
			if err := rt.cni.CheckNetworkList(ctx, rt.list, attachment(ifName)); err != nil {
				t.Errorf("after the DEL of interface %s, CHECK of interface %s: %v", ifNames[i], ifName, err)
			}
		}
	}
}
