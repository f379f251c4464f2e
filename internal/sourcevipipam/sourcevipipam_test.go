package sourcevipipam

import (
	"slices"
	"testing"

	"github.com/containernetworking/cni/pkg/types"
)

// TestAttachmentsAreThoseNodesHold: the attachments are written into the
// IPAM store of every node that reserved a source VIP (host-local keeps
// "<container ID>\r\n<interface>" in the address's file), so they are a
// contract with what is on disk, not names to tidy: a node upgraded to a
// build that named them otherwise would have hnscni's GC release the VIP
// reserved under the old names and hand it to a pod.
func TestAttachmentsAreThoseNodesHold(t *testing.T) {
	want := []types.GCAttachment{
		{ContainerID: "hnsproxy-source-vip", IfName: "sourcevip"},
		{ContainerID: "dummy", IfName: "dummy"},
	}
	if got := Attachments(); !slices.Equal(got, want) {
		t.Errorf("Attachments() = %v, want %v", got, want)
	}
}
