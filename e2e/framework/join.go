//go:build linux

package framework

import (
	"context"
	"fmt"
	"slices"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim/remote"
)

// flannelVNI is the VXLAN id Flannel's Windows backend requires (4096 or more).
const flannelVNI = 4096

// JoinNode starts a simulated Windows node after the cluster started, as a
// node joins: its hnssim (its network routing to every node already
// there), its Node object with its pod CIDR, and its hnsproxy. The other
// nodes do not route to it yet: RouteToNode adds that, as Flannel does.
func (c *Cluster) JoinNode(ctx context.Context, spec NodeSpec) (*Node, error) {
	binDir, err := Tools()
	if err != nil {
		return nil, err
	}
	// Clipped: the spec's slice may share its array with the caller's.
	c.Spec.Nodes = append(slices.Clip(c.Spec.Nodes), spec)
	if err := c.Spec.validate(); err != nil {
		return nil, err
	}
	n, err := c.startNode(ctx, binDir, spec)
	if n != nil {
		c.Nodes = append(c.Nodes, n) // so that Stop stops what started
	}
	if err != nil {
		return n, err
	}
	return n, n.Proxy.Start(ctx)
}

// RouteToNode adds, on every other node's overlay network, the route to
// joined's pod CIDR through its node IP: what Flannel's VXLAN backend on
// Windows does when it sees the node's lease (a RemoteSubnetRoute policy
// with the VNI; flannel-io/flannel, pkg/backend/vxlan/vxlan_network_windows.go).
func (c *Cluster) RouteToNode(ctx context.Context, joined *Node) error {
	if c.Spec.NetworkType != NetworkOverlay {
		return fmt.Errorf("cluster: routes to nodes are for overlay networks, not %s", c.Spec.NetworkType)
	}
	for _, n := range c.Nodes {
		if n == joined {
			continue
		}
		var routes []hnslb.RemoteSubnetRoutePolicySetting
		for _, other := range c.Nodes {
			if other != n {
				routes = append(routes, hnslb.RemoteSubnetRoutePolicySetting{
					DestinationPrefix: other.Spec.PodCIDR, ProviderAddress: other.Spec.NodeIP, IsolationId: flannelVNI})
			}
		}
		req := remote.RemoteSubnetsRequest{Network: c.Spec.HNSNetwork(), Routes: routes}
		if err := n.Sim.Client.SetRemoteSubnets(ctx, req); err != nil {
			return fmt.Errorf("node %s: route to %s: %w", n.Name(), joined.Name(), err)
		}
	}
	return nil
}
