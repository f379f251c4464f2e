package app

import (
	"context"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/reconciler"
	"github.com/hnsproxy/hnsproxy/sim"
)

// --feature-gates=AllowServiceExternalIPs=false reaches the mapping.
func TestAllowServiceExternalIPsGate(t *testing.T) {
	hns := sim.New(sim.Options{Seed: 1})
	deps := &Deps{HNS: hns, StartupCalls: reconciler.NewStartupCalls(hns, reconciler.Options{}), Network: &hnslb.Network{Type: hnslb.NetworkTypeL2Bridge}}
	for args, wantIgnored := range map[string]bool{
		"": false,
		"--feature-gates=AllowServiceExternalIPs=true":  false,
		"--feature-gates=AllowServiceExternalIPs=false": true,
	} {
		flags := []string{"--network-name=cbr0"}
		if args != "" {
			flags = append(flags, args)
		}
		c, err := desiredConfig(context.Background(), parseConfig(t, flags...), deps)
		if err != nil {
			t.Fatal(err)
		}
		if c.IgnoreExternalIPs != wantIgnored {
			t.Errorf("%q: IgnoreExternalIPs = %v, want %v", args, c.IgnoreExternalIPs, wantIgnored)
		}
	}
}
