package app

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/reconciler"
	"github.com/hnsproxy/hnsproxy/sim"
)

// TestDaemonStopsWhenItsNetworkIsReplaced: the CNI deletes the network
// hnsproxy programs and makes it again under its name. The daemon ends
// with an error naming the network's old and new IDs, so that its restart
// reads the network again: found by the drift repair, and by a Sync whose
// remote endpoint's create HNS answers "not found". A network deleted and
// not made again ends it too.
func TestDaemonStopsWhenItsNetworkIsReplaced(t *testing.T) {
	for _, c := range []struct {
		name   string
		repair string // --drift-repair-period
		again  bool
		// change, if set, changes the cluster once the network is replaced.
		change func(ctx context.Context, t *testing.T, client *fake.Clientset)
	}{
		{name: "found by the drift repair", repair: "300ms", again: true},
		{name: "gone, found by the drift repair", repair: "300ms"},
		{name: "found by a remote endpoint's create", repair: "1h", again: true, change: addRemoteBackend},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			hns := sim.New(sim.Options{})
			network := wireWinOne(t, hns)
			client := fake.NewClientset(webOnTwoNodes()...)
			cfg := parseConfig(t, "--network-name=cbr0", "--hostname-override=win-1", "--min-sync-period=0",
				"--drift-repair-period="+c.repair, "--healthz-port=0", "--metrics-port=0",
				"--state-file="+t.TempDir()+"/state.json", "--hns-endpoint=sim")
			done := make(chan error, 1)
			go func() { done <- run(ctx, cfg, client, hns) }()
			waitForWeb(ctx, t, hns, done)

			if c.again {
				// The daemon's reads of networks wait out the replacement,
				// which a CNI makes in a moment: one made between the delete
				// and the create would find the network gone, not replaced
				// (seen once on a loaded machine).
				hns.SetFaults(sim.Faults{Hang: []sim.Op{sim.OpGetNetwork, sim.OpListNetworks}})
			}
			if err := hns.DeleteNetwork(ctx, network.ID); err != nil {
				t.Fatal(err)
			}
			var nowID string
			if c.again {
				n, err := hns.CreateNetwork(ctx, &hnslb.Network{Name: "cbr0", Type: hnslb.NetworkTypeL2Bridge, Ipams: network.Ipams})
				if err != nil {
					t.Fatal(err)
				}
				nowID = n.ID
				hns.SetFaults(sim.Faults{})
			}
			if c.change != nil {
				c.change(ctx, t, client)
			}
			var err error
			select {
			case err = <-done:
			case <-time.After(time.Minute):
				t.Fatal("the daemon still runs a minute after its network was replaced")
			}
			var changed *reconciler.NetworkChangedError
			if !errors.As(err, &changed) || changed.WasID != network.ID || !strings.EqualFold(changed.NowID, nowID) {
				t.Fatalf("the daemon ended with %v; want its network reported from %s to %q", err, network.ID, nowID)
			}
			if !strings.Contains(err.Error(), "restarts it") {
				t.Errorf("%q does not say what restarts hnsproxy", err)
			}
		})
	}
}

// addRemoteBackend adds a ready endpoint on win-3 to shop/web: its remote
// endpoint's create names the network.
func addRemoteBackend(ctx context.Context, t *testing.T, client *fake.Clientset) {
	t.Helper()
	slices := client.DiscoveryV1().EndpointSlices("shop")
	s, err := slices.Get(ctx, "web-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{"10.244.3.7"}, NodeName: ptr.To("win-3"),
		Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}})
	if _, err := slices.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}
