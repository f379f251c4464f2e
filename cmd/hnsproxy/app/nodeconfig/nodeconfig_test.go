package nodeconfig

import (
	"context"
	"net/netip"
	"testing"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
	"github.com/hnsproxy/hnsproxy/sim"
)

func TestCapabilitiesOf(t *testing.T) {
	ws2019, ws2022 := hnslb.Version{Major: 9, Minor: 5}, hnslb.Version{Major: 13, Minor: 2}
	old := hnslb.Version{Major: 9, Minor: 2} // no DSR
	dsr := &options.Config{Winkernel: options.Winkernel{EnableDSR: true}}
	if c := CapabilitiesOf(ws2022, dsr); !c.DSR || c.Features.MaxBackends != hnslb.MaxBackendsModern {
		t.Errorf("ws2022 with --enable-dsr: %+v", c)
	}
	if c := CapabilitiesOf(old, dsr); c.DSR {
		t.Errorf("HNS 9.2 cannot do DSR: %+v", c)
	}
	if c := CapabilitiesOf(ws2022, &options.Config{}); c.DSR {
		t.Errorf("DSR without --enable-dsr: %+v", c)
	}
	capped := &options.Config{HNS: options.HNS{MaxBackendsPerLB: 16}}
	if c := CapabilitiesOf(ws2019, capped); c.Features.MaxBackends != 16 {
		t.Errorf("--max-backends-per-lb=16: %+v", c)
	}
}

func TestDesiredOverlay(t *testing.T) {
	ctx := context.Background()
	hns := sim.New(sim.Options{Seed: 1})
	network := &hnslb.Network{
		Name: "vxlan0", Type: hnslb.NetworkTypeOverlay,
		Policies: []hnslb.NetworkPolicy{
			hnslb.NewNetworkPolicy(hnslb.NetworkPolicyProviderAddress, hnslb.ProviderAddressNetworkPolicySetting{ProviderAddress: "10.0.0.11"}),
		},
	}
	cfg := &options.Config{
		NodeName:           "win-1",
		BindAddress:        "0.0.0.0",
		HealthzBindAddress: "127.0.0.1:10300",
		Winkernel:          options.Winkernel{SourceVIP: "10.244.1.2", RootHNSEndpointName: "cbr0"},
	}
	caps := Capabilities{Features: hnslb.FeaturesFor(hnslb.Version{Major: 13, Minor: 2}), DSR: true}
	c, err := Desired(ctx, cfg, hns, network, caps, false)
	if err != nil {
		t.Fatal(err)
	}
	if c.Mode != desired.Overlay || c.HostMAC != "00-15-5D-00-00-0B" || !c.EnableDSR || c.HealthzPort != 10300 ||
		c.SourceVIP[intent.IPv4] != netip.MustParseAddr("10.244.1.2") || len(c.NodeIPs) != 0 || c.HealthCheckGateway != nil {
		t.Errorf("Desired = %+v", c)
	}
	if err := c.Validate(); err == nil {
		t.Error("a config without node IPs validates; the Node object must fill them")
	}
	if _, err := Desired(ctx, cfg, hns, &hnslb.Network{Type: hnslb.NetworkTypeOverlay}, caps, true); err == nil {
		t.Error("an overlay network without a provider address gave a host MAC")
	}
}
