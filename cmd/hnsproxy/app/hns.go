package app

import (
	"context"
	"fmt"
	"runtime"

	"k8s.io/klog/v2"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/hnslb/hcnclient"
)

// errNoHNS explains what to do on a machine without HNS.
var errNoHNS = fmt.Errorf("there is no HNS on %s: use the simulator with --hns-endpoint=sim (in-process) "+
	"or --hns-endpoint=unix:///path/to/hnssim.sock (the hnssim service), or set HNS_ENDPOINT", runtime.GOOS)

// newHNSClient connects to the HNS cfg names: the real one through hcn
// (Windows), or a simulator (newSimulatorClient; not in Windows builds).
func newHNSClient(cfg options.HNS) (hnslb.Client, error) {
	if cfg.IsSim() || isUnix(cfg) {
		return newSimulatorClient(cfg)
	}
	if runtime.GOOS != "windows" {
		return nil, errNoHNS
	}
	c, err := hcnclient.New()
	if err != nil {
		return nil, fmt.Errorf("connecting to HNS: %w", err)
	}
	return c, nil
}

func isUnix(h options.HNS) bool { _, ok := h.UnixSocket(); return ok }

// simProviderAddress is the in-process simulator's overlay provider
// address (TEST-NET-1): only data, the host MAC is derived from it.
const simProviderAddress = "192.0.2.1"

// seedSimNetwork creates the named network in an in-process simulator, which
// starts empty and has no CNI beside it: overlay when a source VIP is set
// (overlay needs one), with the provider address HNS gives an overlay
// network, l2bridge otherwise.
func seedSimNetwork(ctx context.Context, c hnslb.Client, wk options.Winkernel) error {
	if _, err := c.GetNetworkByName(ctx, wk.NetworkName); err == nil || !hnslb.IsNotFound(err) {
		return err
	}
	n := &hnslb.Network{Name: wk.NetworkName, Type: hnslb.NetworkTypeL2Bridge, SchemaVersion: hnslb.V2}
	if wk.SourceVIP != "" {
		n.Type = hnslb.NetworkTypeOverlay
		n.Policies = []hnslb.NetworkPolicy{hnslb.NewNetworkPolicy(hnslb.NetworkPolicyProviderAddress,
			hnslb.ProviderAddressNetworkPolicySetting{ProviderAddress: simProviderAddress})}
	}
	n, err := c.CreateNetwork(ctx, n)
	if err != nil {
		return fmt.Errorf("creating network %q in the simulator: %w", wk.NetworkName, err)
	}
	klog.InfoS("Created the HNS network in the in-process simulator", "name", n.Name, "id", n.ID, "type", n.Type)
	return nil
}
