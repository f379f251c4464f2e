package diag

import (
	"context"
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/nodeconfig"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/vfp"
)

// TestBadInputIsAClearError: a wrong network or node name, no network name
// where HNS has more than one network, or a packet the model cannot
// answer, is an error that says what to fix.
func TestBadInputIsAClearError(t *testing.T) {
	f := newFixture(t)
	read := func(network, node string) error {
		_, err := readNow(context.Background(), Source{
			HNS: ReadOnly(f.hns), Kube: f.kube, NetworkName: network, StateFile: f.stateFile,
			Config: func(ctx context.Context, n *hnslb.Network, v hnslb.Version) (desired.Config, nodeconfig.Capabilities, error) {
				cfg := *f.cfg
				cfg.NodeName = node
				caps := nodeconfig.CapabilitiesOf(v, osBuildOf(ctx, f.hns), n, &cfg)
				c, err := nodeconfig.Desired(ctx, &cfg, f.hns, n, caps, false)
				return c, caps, err
			},
		})
		return err
	}
	for _, tc := range []struct{ network, node, want string }{
		{"nope", self, `HNS has no network "nope" (it has: cbr0)`},
		{"cbr0", "ghost", `no Node named "ghost"`},
	} {
		if err := read(tc.network, tc.node); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("network %q node %q: %v, want %q", tc.network, tc.node, err, tc.want)
		}
	}
	// No name picks the only network; among two it must not guess.
	if err := read("", self); err != nil {
		t.Errorf("no network name, one network: %v", err)
	}
	if _, err := f.hns.CreateNetwork(context.Background(), &hnslb.Network{Name: "nat", Type: hnslb.NetworkTypeNAT}); err != nil {
		t.Fatal(err)
	}
	if err := read("", self); err == nil || !strings.Contains(err.Error(), `HNS has no network ""`) {
		t.Errorf("no network name, two networks: %v, want an error naming them", err)
	}
	in := f.read()
	mixed := vfp.Packet{Src: mustPacket(t, "fd00::1", "[fd00::2]:80", "tcp").Src, Dst: mustPacket(t, client, frontendIP+":80", "tcp").Dst, Protocol: hnslb.ProtocolTCP}
	if _, err := Trace(in, mixed); err == nil || !strings.Contains(err.Error(), "different IP families") {
		t.Errorf("mixed families: %v", err)
	}
}

// TestForbiddenListSaysWhatAccessIsNeeded: a kubeconfig without the read
// access gets an error naming what hnsproxy-diag lists and where the
// deploy grants it, not only the API server's refusal.
func TestForbiddenListSaysWhatAccessIsNeeded(t *testing.T) {
	f := newFixture(t)
	f.kube.PrependReactor("list", "endpointslices", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "discovery.k8s.io", Resource: "endpointslices"}, "", errors.New("RBAC: access denied"))
	})
	_, err := readNow(context.Background(), f.source())
	if err == nil || !strings.Contains(err.Error(), "listing EndpointSlices") || !strings.Contains(err.Error(), "list on services, endpointslices.discovery.k8s.io and nodes") {
		t.Errorf("forbidden list: %v, want it to name the access needed", err)
	}
}

// TestOverlayWithoutASourceVIPIsRefused: a configuration hnsproxy could
// not run with (an overlay node with no --source-vip and none reserved) is
// an error that says so, not a diagnosis of what hnsproxy would program
// there, which it never does.
func TestOverlayWithoutASourceVIPIsRefused(t *testing.T) {
	f := newFixtureOn(t, fixtureNode{profile: sim.ProfileWS2022, network: hnslb.NetworkTypeOverlay}, sim.Echo{})
	f.cfg.Winkernel.SourceVIP = ""
	_, err := readNow(context.Background(), f.source())
	if err == nil || !strings.Contains(err.Error(), "hnsproxy could not run with this configuration") || !strings.Contains(err.Error(), "source VIP") {
		t.Errorf("overlay without a source VIP: %v, want it refused", err)
	}
}
