package cni_test

import (
	"context"
	"testing"

	"github.com/containernetworking/cni/pkg/types"
)

// TestStatusOfAConfigWithoutIPAMAndOfANetworkOfAnotherType: STATUS is
// "ready to service ADD". A configuration without "ipam" (HNS assigns the
// addresses) has no IPAM to ask, so an HNS that answers with the network
// in place is ready; a configuration whose mode is not the existing
// network's type is a configuration error (code 7), which no wait cures,
// not a plugin that is not available yet (code 50).
func TestStatusOfAConfigWithoutIPAMAndOfANetworkOfAnotherType(t *testing.T) {
	_, conf := l2bridgeNode(t, 77)
	noIPAM := conf
	noIPAM.extra = map[string]any{"ipam": nil}
	rt := newRuntime(t, noIPAM)
	if err := rt.cni.GetStatusNetworkList(context.Background(), rt.list); err != nil {
		t.Errorf("STATUS without IPAM: %v, want ready", err)
	}
	overlay := conf
	overlay.mode = "overlay"
	rt = newRuntime(t, overlay)
	if err := rt.cni.GetStatusNetworkList(context.Background(), rt.list); cniCode(err) != int(types.ErrInvalidNetworkConfig) {
		t.Errorf("STATUS in overlay mode on an l2bridge network: %v (code %d), want code %d", err, cniCode(err), types.ErrInvalidNetworkConfig)
	}
}
