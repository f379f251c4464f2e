package nodeconfig

import (
	"context"
	"maps"
	"net/netip"
	"slices"
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
	build := func(b, ubr int) hnslb.OSBuild { return hnslb.OSBuild{Major: 10, Build: b, UBR: ubr} }
	unknown := hnslb.OSBuild{}
	dsr := &options.Config{Winkernel: options.Winkernel{EnableDSR: true}}
	none := &options.Config{Winkernel: options.Winkernel{EnableDSR: true}, HNS: options.HNS{OSBugWorkarounds: options.OSBugWorkaroundsNone}}
	capped := &options.Config{HNS: options.HNS{MaxBackendsPerLB: 16}}
	l2bridge := &hnslb.Network{Type: hnslb.NetworkTypeL2Bridge}
	overlay := &hnslb.Network{Type: hnslb.NetworkTypeOverlay}
	cases := []struct {
		name        string
		v           hnslb.Version
		b           hnslb.OSBuild
		network     *hnslb.Network
		cfg         *options.Config
		wantDSR     bool
		wantCap     int
		wantFixed   bool
		workarounds []hnslb.OSBug
		ignored     []hnslb.OSBug
	}{
		{name: "ws2022 with --enable-dsr", v: ws2022, b: build(20348, 169), network: l2bridge, cfg: dsr, wantDSR: true, wantCap: 1024},
		{name: "HNS 9.2 cannot do DSR", v: old, b: build(17763, 1), cfg: dsr, wantCap: 64},
		{name: "DSR without --enable-dsr", v: ws2022, b: build(20348, 2227), network: l2bridge, cfg: &options.Config{}, wantCap: 1024},
		{name: "flag wins over the build", v: ws2019, b: build(17763, 1757), cfg: capped, wantCap: 16, wantFixed: true},
		{name: "ws2019 below 17763.2746 caps at 64", v: ws2019, b: build(17763, 2745), cfg: &options.Config{}, wantCap: 64},
		{name: "ws2019 from 17763.2746 caps at 1024", v: ws2019, b: build(17763, 2746), cfg: &options.Config{}, wantCap: 1024},
		{name: "unknown build follows HNS 9", v: ws2019, b: unknown, cfg: &options.Config{}, wantCap: 64},
		{name: "unknown build follows HNS 13", v: ws2022, b: unknown, cfg: &options.Config{}, wantCap: 1024},
		{
			name: "KB5005619 on l2bridge turns DSR off", v: ws2022, b: build(20348, 261), network: l2bridge, cfg: dsr, wantCap: 1024,
			workarounds: []hnslb.OSBug{hnslb.BugL2BridgeDSRPodToService},
		},
		{
			name: "workarounds none keeps DSR", v: ws2022, b: build(20348, 261), network: l2bridge, cfg: none, wantDSR: true, wantCap: 1024,
			ignored: []hnslb.OSBug{hnslb.BugL2BridgeDSRPodToService},
		},
		{
			name: "ws2022 overlay works around NodePort", v: ws2022, b: build(20348, 169), network: overlay, cfg: dsr, wantDSR: true, wantCap: 1024,
			workarounds: []hnslb.OSBug{hnslb.BugOverlayNodePortRemote},
		},
		{name: "ws2025 has no known bug", v: hnslb.Version{Major: 15, Minor: 5}, b: build(26100, 4061), network: l2bridge, cfg: dsr, wantDSR: true, wantCap: 1024},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := CapabilitiesOf(c.v, c.b, c.network, c.cfg)
			if got.DSR != c.wantDSR || got.Features.MaxBackends != c.wantCap || got.BackendCapFixed != c.wantFixed ||
				!slices.Equal(got.Workarounds, c.workarounds) || !slices.Equal(got.Ignored, c.ignored) {
				t.Errorf("got DSR %v cap %d fixed %v workarounds %v ignored %v (reason %q); want %v %d %v %v %v",
					got.DSR, got.Features.MaxBackends, got.BackendCapFixed, got.Workarounds, got.Ignored, got.BackendCapReason,
					c.wantDSR, c.wantCap, c.wantFixed, c.workarounds, c.ignored)
			}
			if got.BackendCapReason == "" {
				t.Error("no reason for the cap")
			}
		})
	}
}

func TestDesiredOverlay(t *testing.T) {
	ctx := context.Background()
	hns := sim.New(sim.Options{Seed: 1})
	network := &hnslb.Network{
		Name: "vxlan0", Type: hnslb.NetworkTypeOverlay,
		Ipams: []hnslb.Ipam{{Type: "Static", Subnets: []hnslb.Subnet{{IpAddressPrefix: "10.244.1.0/24"}}}},
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
		c.SourceVIP[intent.IPv4] != netip.MustParseAddr("10.244.1.2") || len(c.NodeIPs) != 0 || c.HealthCheckGateway != nil ||
		!slices.Equal(c.NetworkSubnets, []netip.Prefix{netip.MustParsePrefix("10.244.1.0/24")}) {
		t.Errorf("Desired = %+v", c)
	}
	if err := c.Validate(); err == nil {
		t.Error("a config without node IPs validates; the Node object must fill them")
	}
	if _, err := Desired(ctx, cfg, hns, &hnslb.Network{Type: hnslb.NetworkTypeOverlay}, caps, true); err == nil {
		t.Error("an overlay network without a provider address gave a host MAC")
	}
}

// --bind-address and --source-vip pass validation (options.Validate) as
// kube-proxy reads them (ParseIPSloppy: "010.0.0.11" is 10.0.0.11), so they are read the same way
// here: kube-proxy's detectNodeIPs takes such a bind address as the node IP,
// and the configured source VIP is the one used, in its canonical form.
func TestDesiredReadsAddressesAsValidated(t *testing.T) {
	network := &hnslb.Network{
		Name: "vxlan0", Type: hnslb.NetworkTypeOverlay,
		Policies: []hnslb.NetworkPolicy{
			hnslb.NewNetworkPolicy(hnslb.NetworkPolicyProviderAddress, hnslb.ProviderAddressNetworkPolicySetting{ProviderAddress: "10.0.0.11"}),
		},
	}
	caps := Capabilities{Features: hnslb.FeaturesFor(hnslb.Version{Major: 13, Minor: 2})}
	// An IPv4-mapped bind address is IPv4 to kube-proxy (netutils.IsIPv4).
	for _, bind := range []string{"010.0.0.011", "::ffff:10.0.0.11"} {
		cfg := &options.Config{
			NodeName:    "win-1",
			BindAddress: bind,
			Winkernel:   options.Winkernel{SourceVIP: "010.244.001.002", RootHNSEndpointName: "cbr0"},
		}
		c, err := Desired(context.Background(), cfg, sim.New(sim.Options{Seed: 1}), network, caps, false)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[intent.IPFamily]netip.Addr{intent.IPv4: netip.MustParseAddr("10.0.0.11")}; !maps.Equal(c.NodeIPs, want) {
			t.Errorf("--bind-address=%s: node IPs %v, want %v", bind, c.NodeIPs, want)
		}
		if want := map[intent.IPFamily]netip.Addr{intent.IPv4: netip.MustParseAddr("10.244.1.2")}; !maps.Equal(c.SourceVIP, want) {
			t.Errorf("source VIP %v, want %v (--source-vip)", c.SourceVIP, want)
		}
	}
}
