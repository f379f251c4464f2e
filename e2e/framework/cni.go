//go:build linux

package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"path/filepath"

	"github.com/containernetworking/cni/libcni"
	current "github.com/containernetworking/cni/pkg/types/100"
)

// Pod is a pod sandbox wired by hnscni: an HNS namespace with one endpoint.
type Pod struct {
	Name      string
	Node      string
	Namespace string // the HNS namespace GUID (CNI_NETNS)
	IP        netip.Addr
}

// podNetwork drives hnscni through libcni as a container runtime does
// (containerd's CRI plugin calls the same library).
type podNetwork struct {
	cni  *libcni.CNIConfig
	list *libcni.NetworkConfigList
}

// cniConfig is the node's CNI configuration list, as a provisioning script
// would write it to C:\etc\cni\net.d: hnscni with host-local IPAM over the
// node's pod CIDR (addresses below .10 stay free for the gateway and the
// source VIP).
func cniConfig(spec ClusterSpec, node NodeSpec, socket, dataDir string) ([]byte, error) {
	subnet, err := netip.ParsePrefix(node.PodCIDR)
	if err != nil {
		return nil, fmt.Errorf("node %s: pod CIDR: %w", node.Name, err)
	}
	plugin := map[string]any{
		"type":         HNSCNIBin,
		"mode":         spec.NetworkType,
		"network":      spec.networkName(),
		"clusterCIDR":  spec.clusterCIDR(),
		"serviceCIDR":  spec.serviceRange(),
		"loopbackDSR":  true,
		"hnsEndpoint":  "unix://" + socket,
		"capabilities": map[string]bool{"portMappings": true, "dns": true},
		"dns":          map[string]any{"nameservers": []string{spec.dnsIP()}, "search": []string{"svc.cluster.local"}},
		"ipam": map[string]any{
			"type":    HostLocalBin,
			"ranges":  [][]map[string]string{{{"subnet": subnet.String(), "rangeStart": nthAddr(subnet, 10).String()}}},
			"dataDir": dataDir,
		},
	}
	if spec.NetworkType == NetworkOverlay {
		plugin["providerAddress"] = node.NodeIP
	}
	return json.Marshal(map[string]any{"cniVersion": "1.1.0", "name": "pods", "plugins": []any{plugin}})
}

func newPodNetwork(binDir, cacheDir string, conf []byte) (*podNetwork, error) {
	list, err := libcni.NetworkConfFromBytes(conf)
	if err != nil {
		return nil, err
	}
	return &podNetwork{cni: libcni.NewCNIConfigWithCacheDir([]string{binDir}, cacheDir, nil), list: list}, nil
}

func (n *podNetwork) add(ctx context.Context, containerID, netns string) (netip.Addr, error) {
	res, err := n.cni.AddNetworkList(ctx, n.list, runtimeConf(containerID, netns))
	if err != nil {
		return netip.Addr{}, fmt.Errorf("CNI ADD %s: %w", containerID, err)
	}
	cur, err := current.NewResultFromResult(res)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("CNI ADD %s result: %w", containerID, err)
	}
	if len(cur.IPs) == 0 {
		return netip.Addr{}, fmt.Errorf("CNI ADD %s: no address in the result", containerID)
	}
	ip, ok := netip.AddrFromSlice(cur.IPs[0].Address.IP)
	if !ok {
		return netip.Addr{}, fmt.Errorf("CNI ADD %s: bad address %v", containerID, cur.IPs[0].Address)
	}
	return ip.Unmap(), nil
}

func (n *podNetwork) del(ctx context.Context, containerID, netns string) error {
	if err := n.cni.DelNetworkList(ctx, n.list, runtimeConf(containerID, netns)); err != nil {
		return fmt.Errorf("CNI DEL %s: %w", containerID, err)
	}
	return nil
}

func runtimeConf(containerID, netns string) *libcni.RuntimeConf {
	return &libcni.RuntimeConf{ContainerID: containerID, NetNS: netns, IfName: "eth0"}
}

// nthAddr is the n-th address of a prefix (0 is the network address).
func nthAddr(p netip.Prefix, n int) netip.Addr {
	a := p.Masked().Addr()
	for range n {
		a = a.Next()
	}
	return a
}

// cniDirs are the folders hnscni's runtime uses under a node folder.
func cniDirs(nodeDir string) (cache, ipam string) {
	return filepath.Join(nodeDir, "cni-cache"), filepath.Join(nodeDir, "ipam")
}
