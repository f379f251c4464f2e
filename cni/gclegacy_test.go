package cni_test

import (
	"context"
	"testing"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/types"
)

// TestGCCollectsAnEarlierHnscnisPodTheRuntimeNoLongerLists: a pod an
// earlier hnscni wired ("<containerID>_eth0", MAC from its address) that
// the runtime no longer lists is collected by GC as one wired now is: its
// endpoint deleted and its address released for its own attachment, the
// container ID and interface read back from the earlier name.
func TestGCCollectsAnEarlierHnscnisPodTheRuntimeNoLongerLists(t *testing.T) {
	const network = "cbr0"
	node := startNode(t, "n1", "--node-ip", "172.16.0.2", "--network-name", network, "--network-type", "l2bridge", "--subnet", "192.168.1.0/24")
	t.Setenv("HNS_ENDPOINT", "unix://"+node.socket)
	cniPath, dataDir := dropInDir(t), t.TempDir()
	list := referenceList(t, "flannel-host-gw-win-bridge.json", "1.1.0", dataDir)
	cni := libcni.NewCNIConfigWithCacheDir([]string{cniPath}, t.TempDir(), nil)
	old := pod{id: "old1", netns: node.createNamespace(t)}
	wireLegacy(t, node, node.dump(t).Networks[0].ID, cniPath, list, old)
	if err := cni.GCNetworkList(context.Background(), list, &libcni.GCArgs{ValidAttachments: []types.GCAttachment{}}); err != nil {
		t.Fatalf("GC: %v", err)
	}
	if got := names(node.dump(t)); len(got) != 0 {
		t.Errorf("endpoints after GC %v, want the earlier hnscni's gone", got)
	}
	if got := allocatedOn(t, dataDir, network); len(got) != 0 {
		t.Errorf("host-local holds %v after GC, want the earlier hnscni's pod's address released", got)
	}
}
