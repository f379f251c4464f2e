package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
	"github.com/hnsproxy/hnsproxy/hnslb"
)

// TestEnsureSourceVIP: only an overlay network without a configured source
// VIP reserves one; a configured one wins, l2bridge needs none, and a node
// whose CNI configuration has no IPAM stops with an error that says to set
// the source VIP.
func TestEnsureSourceVIP(t *testing.T) {
	ctx := context.Background()
	overlay := &hnslb.Network{Name: "vxlan0", Type: hnslb.NetworkTypeOverlay,
		Ipams: []hnslb.Ipam{{Subnets: []hnslb.Subnet{{IpAddressPrefix: "10.244.1.0/24"}}}}}
	confDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(confDir, "10-win-overlay.conf"), []byte(`{"cniVersion": "0.3.0", "name": "vxlan0", "type": "win-overlay"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := func(vip string) *options.Config {
		return config(func(c *options.Config) {
			c.Winkernel.SourceVIP = vip
			c.CNI = options.CNI{ConfDir: confDir, BinDir: t.TempDir()}
			c.StateFile = filepath.Join(t.TempDir(), "state.json")
		})
	}

	configured := cfg("10.244.1.2")
	if err := ensureSourceVIP(ctx, configured, overlay); err != nil || configured.Winkernel.SourceVIP != "10.244.1.2" {
		t.Errorf("configured: %q, %v", configured.Winkernel.SourceVIP, err)
	}
	l2bridge := cfg("")
	if err := ensureSourceVIP(ctx, l2bridge, &hnslb.Network{Name: "cbr0", Type: hnslb.NetworkTypeL2Bridge}); err != nil || l2bridge.Winkernel.SourceVIP != "" {
		t.Errorf("l2bridge: %q, %v", l2bridge.Winkernel.SourceVIP, err)
	}
	err := ensureSourceVIP(ctx, cfg(""), overlay)
	if err == nil || !strings.Contains(err.Error(), "winkernel.sourceVip") || !strings.Contains(err.Error(), "names no IPAM plugin") {
		t.Errorf("overlay without IPAM: %v, want an error naming the missing IPAM and winkernel.sourceVip", err)
	}
}

// The source VIP is reserved in the overlay network's IPv4 pod subnet
// (overlay carries IPv4 only; an IPv6 source VIP stops the start), wherever
// a dual-stack network lists it among its subnets.
func TestPodSubnetIsTheNetworksIPv4Subnet(t *testing.T) {
	v4, v6 := hnslb.Subnet{IpAddressPrefix: "10.244.1.1/24"}, hnslb.Subnet{IpAddressPrefix: "fd00:10:244:1::/64"}
	for _, tc := range []struct {
		name  string
		ipams []hnslb.Ipam
		want  string
	}{
		{"IPv4 only", []hnslb.Ipam{{Subnets: []hnslb.Subnet{v4}}}, "10.244.1.0/24"},
		{"IPv6 listed first", []hnslb.Ipam{{Subnets: []hnslb.Subnet{v6, v4}}}, "10.244.1.0/24"},
		{"IPv6 in the first IPAM", []hnslb.Ipam{{Subnets: []hnslb.Subnet{v6}}, {Subnets: []hnslb.Subnet{v4}}}, "10.244.1.0/24"},
		{"IPv6 only", []hnslb.Ipam{{Subnets: []hnslb.Subnet{v6}}}, "invalid Prefix"},
	} {
		if got := podSubnet(&hnslb.Network{Ipams: tc.ipams}).String(); got != tc.want {
			t.Errorf("%s: pod subnet %s, want %s", tc.name, got, tc.want)
		}
	}
}
