package cni_test

import (
	"context"
	"strings"
	"testing"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/types"
)

// TestDelDeletesAgainAnEndpointHNSKeptOnItsDelete: a DEL whose endpoint
// HNS keeps after a delete it reported done deletes it again within the
// call: one a second or third delete removes is gone when DEL answers, and
// its address released, so the pod is not held Terminating for a kubelet
// retry. One HNS keeps through every delete fails the DEL with "try again
// later", its address held, and the error names the endpoint and how to
// remove it, as the kubelet logs it in FailedKillPod; the runtime's next
// DEL, once HNS lets it go, clears both.
func TestDelDeletesAgainAnEndpointHNSKeptOnItsDelete(t *testing.T) {
	// Each case has a node of its own, so one that fails leaves nothing
	// to the next.
	node := func(t *testing.T, octet int) (*simNode, netConf, *runtime) {
		n, conf := l2bridgeNode(t, octet)
		return n, conf, newRuntime(t, conf)
	}
	gone := func(t *testing.T, n *simNode, conf netConf, p pod, after string) {
		t.Helper()
		if ep, addrs := endpointByName(n.dump(t), p.endpointName("cbr0")), allocated(t, conf.dataDir); ep != nil || len(addrs) != 0 {
			t.Errorf("after %s: endpoint %v, addresses %v; want neither", after, ep != nil, addrs)
		}
	}

	t.Run("kept for two deletes", func(t *testing.T) {
		n1, conf, rt := node(t, 71)
		del := func(p pod) error { return rt.cni.DelNetworkList(context.Background(), rt.list, p.rt()) }
		p := pod{id: "kept-twice", netns: n1.createNamespace(t)}
		rt.add(t, p)
		n1.hnssim(t, "faults", "--kept-deletes", "2")
		err := del(p)
		n1.hnssim(t, "faults")
		if err != nil {
			t.Fatalf("DEL whose endpoint a third delete removes: %v", err)
		}
		gone(t, n1, conf, p, "the DEL")
	})

	t.Run("kept for good", func(t *testing.T) {
		n1, conf, rt := node(t, 72)
		del := func(p pod) error { return rt.cni.DelNetworkList(context.Background(), rt.list, p.rt()) }
		p := pod{id: "kept-for-good", netns: n1.createNamespace(t)}
		rt.add(t, p)
		ep := endpointByName(n1.dump(t), p.endpointName("cbr0"))
		n1.hnssim(t, "faults", "--kept-on-delete", "1")
		err := del(p)
		n1.hnssim(t, "faults")
		if cniCode(err) != int(types.ErrTryAgainLater) {
			t.Fatalf("DEL whose endpoint HNS keeps for good: %v, want try again later", err)
		}
		for _, want := range []string{ep.ID, "'hnsdiag delete endpoints " + ep.ID + "'", "3 deletes"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("DEL's error %q does not say %q", err, want)
			}
		}
		if endpointByName(n1.dump(t), p.endpointName("cbr0")) == nil || len(allocated(t, conf.dataDir)) != 1 {
			t.Errorf("after the DEL that failed: endpoint %v, addresses %v; want both kept", ep.ID, allocated(t, conf.dataDir))
		}
		if err := del(p); err != nil {
			t.Fatal("the runtime's next DEL, HNS deleting again:", err)
		}
		gone(t, n1, conf, p, "the next DEL")
	})

	t.Run("GC, kept for two deletes", func(t *testing.T) {
		n1, conf, rt := node(t, 73)
		newRuntime(t, conf).add(t, pod{id: "leaked", netns: n1.createNamespace(t)})
		n1.hnssim(t, "faults", "--kept-deletes", "2")
		err := rt.cni.GCNetworkList(context.Background(), rt.list, &libcni.GCArgs{ValidAttachments: []types.GCAttachment{}})
		n1.hnssim(t, "faults")
		if err != nil {
			t.Fatalf("GC whose endpoint a third delete removes: %v", err)
		}
		if s := n1.dump(t); len(s.Endpoints) != 0 || len(allocated(t, conf.dataDir)) != 0 {
			t.Errorf("after GC: endpoints %v, addresses %v; want neither", names(s), allocated(t, conf.dataDir))
		}
	})
}
