package nodeconfig

import (
	"context"
	"testing"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options/optionstest"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
	"github.com/hnsproxy/hnsproxy/sim"
)

// The operator's settings that decide which Service addresses and health
// checks are programmed reach the desired state, each on its own and off
// by default: --feature-gates=AllowServiceExternalIPs=false (kube-proxy
// 1.37: spec.externalIPs not programmed), --refuse-node-external-ips and
// --forward-healthcheck-vip.
func TestDesiredTakesTheOperatorsSettings(t *testing.T) {
	network := &hnslb.Network{Name: "cbr0", Type: hnslb.NetworkTypeL2Bridge}
	caps := Capabilities{Features: hnslb.FeaturesFor(hnslb.Version{Major: 13, Minor: 2})}
	read := func(c desired.Config) [3]bool {
		return [3]bool{c.IgnoreExternalIPs, c.RefuseExternalIPsOnNodeAddresses, c.ForwardHealthCheckVIP}
	}
	for flag, want := range map[string][3]bool{
		"": {},
		"--feature-gates=AllowServiceExternalIPs=false": {true, false, false},
		"--feature-gates=AllowServiceExternalIPs=true":  {},
		"--refuse-node-external-ips":                    {false, true, false},
		"--forward-healthcheck-vip":                     {false, false, true},
	} {
		args := []string{"--network-name=cbr0", "--hostname-override=win-1", "--hns-endpoint=sim"}
		if flag != "" {
			args = append(args, flag)
		}
		cfg, _, err := optionstest.Complete(args...)
		if err != nil {
			t.Fatal(err)
		}
		c, err := Desired(context.Background(), cfg, sim.New(sim.Options{Seed: 1}), network, caps, false)
		if err != nil {
			t.Fatal(err)
		}
		if got := read(c); got != want {
			t.Errorf("%q: ignore external IPs, refuse them on node addresses, forward health-check VIP = %v, want %v", flag, got, want)
		}
	}
}
