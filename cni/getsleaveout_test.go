package cni_test

import (
	"context"
	"slices"
	"testing"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/types"
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

// TestGCLooksUpWhatItsListingLeftOut: GC lists the network's endpoints, and
// a listing can leave out an endpoint HNS holds (hnssim
// --left-out-of-listings). Before, a stale endpoint of hnscni's that GC's
// listing left out stayed in HNS while host-local's GC released its
// address, for the next pod given it to be refused. GC now looks up, by
// name, the endpoint of each attachment whose address host-local would
// release and which the listing did not show, asking again while HNS
// answers "not found" (gets leave objects out too, two in a row at most),
// and collects what it finds. An attachment whose lookup HNS fails keeps
// its address, and GC answers "try again later". A GC with nothing stale
// makes no lookup (BenchmarkBusyOverlayNode's GC costs what it did).
func TestGCLooksUpWhatItsListingLeftOut(t *testing.T) {
	n1, conf := l2bridgeNode(t, 83)
	rt := newRuntime(t, conf)
	running, gone := pod{id: "running", netns: n1.createNamespace(t)}, pod{id: "gone", netns: n1.createNamespace(t)}
	rt.add(t, running)
	newRuntime(t, conf).add(t, gone) // the cache of a runtime that has since lost it: no DEL comes
	kept := endpointByName(n1.dump(t), running.endpointName("cbr0")).IP()

	n1.hnssim(t, "faults", "--left-out-of-listings", "1", "--left-out-in-a-row", "2", "--gets-leave-out")
	listed := []types.GCAttachment{{ContainerID: running.id, IfName: "eth0"}}
	if err := rt.cni.GCNetworkList(context.Background(), rt.list, &libcni.GCArgs{ValidAttachments: listed}); err != nil {
		t.Fatalf("GC: %v", err)
	}
	n1.hnssim(t, "faults")
	if got := names(n1.dump(t)); !slices.Equal(got, []string{running.endpointName("cbr0")}) {
		t.Errorf("after GC endpoints %v, want only the listed pod's", got)
	}
	if got := allocated(t, conf.dataDir); !slices.Equal(got, []string{kept}) {
		t.Errorf("after GC host-local holds %v, want only the listed pod's %s", got, kept)
	}

	unread := pod{id: "unread", netns: n1.createNamespace(t)}
	newRuntime(t, conf).add(t, unread)
	held := endpointByName(n1.dump(t), unread.endpointName("cbr0")).IP()
	n1.hnssim(t, "faults", "--left-out-of-listings", "1", "--error-rate", "GetEndpoint=1", "--error-code", "0x6ba")
	err := rt.cni.GCNetworkList(context.Background(), rt.list, &libcni.GCArgs{ValidAttachments: listed})
	n1.hnssim(t, "faults")
	if cniCode(err) != int(types.ErrTryAgainLater) {
		t.Errorf("GC whose lookup HNS failed: %v, want code 11", err)
	}
	if got := allocated(t, conf.dataDir); !slices.Equal(got, []string{kept, held}) && !slices.Equal(got, []string{held, kept}) {
		t.Errorf("after a GC that could not look up %s, host-local holds %v, want %s and %s", unread.id, got, kept, held)
	}
}
