//go:build linux

package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
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
	// IPv6 is the pod's IPv6 address on a dual-stack node; zero otherwise.
	IPv6 netip.Addr
}

// Addr is the pod's address of a family (IPv6 or not); zero if it has none.
func (p Pod) Addr(ipv6 bool) netip.Addr {
	if ipv6 {
		return p.IPv6
	}
	return p.IP
}

// podNetwork drives hnscni through libcni as a container runtime does
// (containerd's CRI plugin calls the same library).
type podNetwork struct {
	cni  *libcni.CNIConfig
	list *libcni.NetworkConfigList
	// underWine: the plugin is hnscni.exe, run by Wine's loader.
	underWine bool
}

// cniConfig is the node's CNI configuration list, as a provisioning script
// would write it to C:\etc\cni\net.d: hnscni with host-local IPAM over the
// node's pod CIDR (addresses below .10 stay free for the gateway and the
// source VIP).
func cniConfig(spec ClusterSpec, node NodeSpec, socket, dataDir string) ([]byte, error) {
	ranges := [][]map[string]string{}
	for _, cidr := range node.podCIDRs() {
		subnet, err := netip.ParsePrefix(cidr)
		if err != nil {
			return nil, fmt.Errorf("node %s: pod CIDR: %w", node.Name, err)
		}
		ranges = append(ranges, []map[string]string{{"subnet": subnet.String(), "rangeStart": nthAddr(subnet, 10).String()}})
	}
	plugin := map[string]any{
		"type":         HNSCNIBin,
		"mode":         spec.NetworkType,
		"network":      spec.HNSNetwork(),
		"clusterCIDR":  spec.clusterCIDRs(),
		"serviceCIDR":  spec.serviceRanges(),
		"loopbackDSR":  true,
		"hnsEndpoint":  "unix://" + socket,
		"capabilities": map[string]bool{"portMappings": true, "dns": true},
		"dns":          map[string]any{"nameservers": []string{spec.dnsIP()}, "search": []string{"svc.cluster.local"}},
		"ipam": map[string]any{
			"type":    HostLocalBin,
			"ranges":  ranges,
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

// add runs CNI ADD and returns the pod's IPv4 and (dual-stack) IPv6 address.
func (n *podNetwork) add(ctx context.Context, containerID, netns string) (v4, v6 netip.Addr, err error) {
	res, err := n.cni.AddNetworkList(ctx, n.list, runtimeConf(containerID, netns))
	if err != nil {
		return v4, v6, fmt.Errorf("CNI ADD %s: %w", containerID, err)
	}
	cur, err := current.NewResultFromResult(res)
	if err != nil {
		return v4, v6, fmt.Errorf("CNI ADD %s result: %w", containerID, err)
	}
	for _, ipc := range cur.IPs {
		ip, ok := netip.AddrFromSlice(ipc.Address.IP)
		switch {
		case !ok:
			return v4, v6, fmt.Errorf("CNI ADD %s: bad address %v", containerID, ipc.Address)
		case ip.Unmap().Is4():
			v4 = ip.Unmap()
		default:
			v6 = ip
		}
	}
	if !v4.IsValid() {
		return v4, v6, fmt.Errorf("CNI ADD %s: no IPv4 address in the result", containerID)
	}
	return v4, v6, nil
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

// cniConfDir is the node's CNI configuration directory (C:\etc\cni\net.d
// on a Windows node), where hnsproxy finds the IPAM its source VIP comes from.
func cniConfDir(nodeDir string) string { return filepath.Join(nodeDir, "cni-conf") }

// writeCNIConfig writes the node's CNI configuration list there, as a
// provisioning script does.
func writeCNIConfig(nodeDir string, conf []byte) error {
	if err := os.MkdirAll(cniConfDir(nodeDir), 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(cniConfDir(nodeDir), "10-hnscni.conflist"), conf, 0o644)
}

// cniDirs are the folders hnscni's runtime uses under a node folder.
func cniDirs(nodeDir string) (cache, ipam string) {
	return filepath.Join(nodeDir, "cni-cache"), filepath.Join(nodeDir, "ipam")
}

// IPAMHolds reports whether the node's host-local store holds ip (for any
// attachment) in the CNI network "pods".
func (n *Node) IPAMHolds(ip netip.Addr) bool {
	_, ipam := cniDirs(n.dir)
	_, err := os.Stat(filepath.Join(ipam, "pods", ip.String()))
	return err == nil
}
