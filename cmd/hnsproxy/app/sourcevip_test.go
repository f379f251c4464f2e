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
