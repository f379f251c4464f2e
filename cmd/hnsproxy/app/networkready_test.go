package app

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
)

// unreadyOverlay is an HNS whose overlay network is found before it has its
// provider address (the management IP): the policy appears at the
// readyAt-th read by name, as HNS fills it in after the CNI made the
// network (Flannel waits for it; kube-proxy re-reads the network 10 s on).
type unreadyOverlay struct {
	*sim.HNS
	id      string
	reads   int
	readyAt int
}

func (u *unreadyOverlay) GetNetworkByName(ctx context.Context, name string) (*hnslb.Network, error) {
	u.reads++
	if u.reads == u.readyAt {
		pa := hnslb.NewNetworkPolicy(hnslb.NetworkPolicyProviderAddress, hnslb.ProviderAddressNetworkPolicySetting{ProviderAddress: "192.0.2.5"})
		if err := u.SetNetworkPolicies(u.id, []hnslb.NetworkPolicy{pa}); err != nil {
			return nil, err
		}
	}
	return u.HNS.GetNetworkByName(ctx, name)
}

// TestDaemonWaitsForTheOverlayNetworksProviderAddress: an overlay network
// found before HNS gave it its provider address is waited for, within
// --hns-network-timeout, rather than ending hnsproxy for want of the host
// MAC; once it has one, the node is programmed.
func TestDaemonWaitsForTheOverlayNetworksProviderAddress(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hns := sim.New(sim.Options{})
	network, err := hns.CreateNetwork(ctx, &hnslb.Network{Name: "vxlan0", Type: hnslb.NetworkTypeOverlay,
		Ipams: []hnslb.Ipam{{Subnets: []hnslb.Subnet{{IpAddressPrefix: "10.244.1.0/24"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hns.CreateEndpoint(ctx, network.ID, &hnslb.Endpoint{Name: "pod-a",
		IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.1.5", PrefixLength: 24}}, MacAddress: "00-15-5D-01-01-05"}); err != nil {
		t.Fatal(err)
	}
	u := &unreadyOverlay{HNS: hns, id: network.ID, readyAt: 3}
	cfg := parseConfig(t, "--network-name=vxlan0", "--hostname-override=win-1", "--min-sync-period=0", "--source-vip=10.244.1.2",
		"--healthz-port=0", "--metrics-port=0", "--hns-network-timeout=1h", "--hns-endpoint=sim", "--state-file="+t.TempDir()+"/state.json")
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, fake.NewClientset(webOnTwoNodes()...), u) }()

	err = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		select {
		case err := <-done:
			t.Fatalf("the daemon stopped: %v", err)
		default:
		}
		lbs, err := hns.ListLoadBalancers(ctx)
		for _, l := range lbs {
			if len(l.FrontendVIPs) == 1 && l.FrontendVIPs[0] == "10.96.0.10" {
				return true, nil
			}
		}
		return false, err
	})
	if err != nil {
		t.Fatalf("no load balancer for 10.96.0.10: %v", err)
	}
	if u.reads < u.readyAt {
		t.Errorf("the network was read %d times, the provider address appeared at the %dth", u.reads, u.readyAt)
	}
	// Stopped and waited for: its last state file write must land before
	// t.TempDir's removal, which otherwise fails on the file it finds.
	cancel()
	<-done
}
