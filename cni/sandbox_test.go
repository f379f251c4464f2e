package cni_test

import (
	"slices"
	"strings"
	"testing"
)

// TestLateDelOfARecreatedSandboxLeavesItsSuccessor: a pod's sandbox dies
// and the runtime makes another, whose ADD IPAM hands the same address
// (host-local with one address here; Calico's or Azure's IPAM give a pod
// its address back). A DEL of the dead sandbox that comes again after that
// ADD (the kubelet stops a dead sandbox again before it removes it) finds
// its own endpoint by its own container ID and nothing else: the new
// sandbox keeps its endpoint, attached, and its address, and CHECK of it
// passes. A DEL that removed by address, or released the address whoever
// holds it, would take the new sandbox's network away.
func TestLateDelOfARecreatedSandboxLeavesItsSuccessor(t *testing.T) {
	n1, conf, rt, _ := oneAddressNode(t, "0x1392")
	old := pod{id: "sandbox-old", netns: n1.createNamespace(t)}
	first := rt.add(t, old)
	rt.del(t, old)
	successor := pod{id: "sandbox-new", netns: n1.createNamespace(t)}
	second := rt.add(t, successor)
	if first.IPs[0].Address.IP.String() != second.IPs[0].Address.IP.String() {
		t.Fatalf("the new sandbox got %v, want the dead one's %v", second.IPs[0].Address.IP, first.IPs[0].Address.IP)
	}
	before := endpointByName(n1.dump(t), successor.endpointName("cbr0"))
	if before == nil {
		t.Fatal("the new sandbox has no endpoint")
	}

	rt.del(t, old)

	snap := n1.dump(t)
	after := endpointByName(snap, successor.endpointName("cbr0"))
	if after == nil || !strings.EqualFold(after.ID, before.ID) {
		t.Fatalf("the new sandbox's endpoint after the late DEL: %+v, want %s kept", after, before.ID)
	}
	if ns := namespaceByID(snap, successor.netns); ns == nil || !slices.ContainsFunc(namespaceEndpoints(t, ns), func(id string) bool { return strings.EqualFold(id, before.ID) }) {
		t.Errorf("the new sandbox's endpoint is no longer attached to its namespace")
	}
	if got := allocated(t, conf.dataDir); !slices.Equal(got, []string{"10.244.6.10"}) {
		t.Errorf("host-local holds %v after the late DEL, want the new sandbox's 10.244.6.10", got)
	}
	if err := rt.check(successor); err != nil {
		t.Errorf("CHECK of the new sandbox: %v", err)
	}
}
