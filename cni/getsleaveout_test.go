package cni_test

import (
	"testing"
)

// TestGetsThatLeaveOutObjects: where HNS's gets, which hcn makes as
// filtered listings, leave an object out (hnssim --gets-leave-out), two in
// a row at most, ADD and DEL look again before they take "not found" for
// gone. Before, an ADD whose read of the pod's namespace left it out
// failed "HNS namespace does not exist", and a DEL whose lookup of the
// endpoint by name left it out answered done with the endpoint in HNS and
// its address released to IPAM, for the next pod to be refused.
func TestGetsThatLeaveOutObjects(t *testing.T) {
	n1, conf := l2bridgeNode(t, 81)
	rt := newRuntime(t, conf)
	p := pod{id: "looked-for", netns: n1.createNamespace(t)}
	leaveOut := func() {
		n1.hnssim(t, "faults", "--left-out-of-listings", "1", "--left-out-in-a-row", "2", "--gets-leave-out")
	}
	leaveOut()
	rt.add(t, p)
	n1.hnssim(t, "faults")
	snap := n1.dump(t)
	if len(snap.Networks) != 1 {
		t.Errorf("after the ADD, HNS holds %d networks; want the one there before", len(snap.Networks))
	}
	if ep := endpointByName(snap, p.endpointName("cbr0")); ep == nil || len(allocated(t, conf.dataDir)) != 1 {
		t.Fatalf("after the ADD: endpoint %v, addresses %v; want one of each", ep, allocated(t, conf.dataDir))
	}
	leaveOut()
	rt.del(t, p)
	n1.hnssim(t, "faults")
	if ep, addrs := endpointByName(n1.dump(t), p.endpointName("cbr0")), allocated(t, conf.dataDir); ep != nil || len(addrs) != 0 {
		t.Errorf("after the DEL: endpoint %v, addresses %v; want neither", ep, addrs)
	}
}
