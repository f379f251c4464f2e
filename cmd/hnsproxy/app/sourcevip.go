package app

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/sourcevip"
	"github.com/hnsproxy/hnsproxy/hnslb"
)

// ensureSourceVIP gives an overlay node with no source VIP configured one
// reserved through the node's CNI IPAM (package sourcevip), so one
// ConfigMap serves every node: the same address on every restart, never a
// pod's, released by --cleanup.
func ensureSourceVIP(ctx context.Context, cfg *options.Config, network *hnslb.Network) error {
	if network.Type != hnslb.NetworkTypeOverlay || cfg.Winkernel.SourceVIP != "" {
		return nil
	}
	vip, err := sourcevip.Reserve(ctx, sourcevip.Options{
		ConfDir: cfg.CNI.ConfDir, BinDir: cfg.CNI.BinDir,
		Network: network.Name, Subnet: podSubnet(network),
		Record: sourcevip.RecordFile(cfg.StateFile),
	})
	if err != nil {
		return fmt.Errorf("network %q is overlay and no source VIP is configured (winkernel.sourceVip, --source-vip); reserving one through the node's CNI IPAM (--cni-conf-dir %s, --cni-bin-dir %s) failed: %w",
			network.Name, cfg.CNI.ConfDir, cfg.CNI.BinDir, err)
	}
	cfg.Winkernel.SourceVIP = vip.String()
	return nil
}

// podSubnet is the network's first IPv4 subnet (overlay carries IPv4 only).
func podSubnet(n *hnslb.Network) netip.Prefix {
	for _, ipam := range n.Ipams {
		for _, s := range ipam.Subnets {
			if p, err := netip.ParsePrefix(s.IpAddressPrefix); err == nil && p.Addr().Is4() {
				return p.Masked()
			}
		}
	}
	return netip.Prefix{}
}
