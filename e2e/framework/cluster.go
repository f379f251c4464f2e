//go:build linux

package framework

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/hnsproxy/hnsproxy/sim"
)

// HNS network types a cluster's nodes share.
const (
	NetworkL2Bridge = "l2bridge"
	NetworkOverlay  = "overlay"
)

// ClusterSpec describes simulated Windows nodes joining a control plane.
// Addresses are data for the simulator only: no packet leaves the machine.
type ClusterSpec struct {
	// NetworkType is NetworkL2Bridge or NetworkOverlay (every node).
	NetworkType string
	// NetworkName is the HNS network; default "cbr0" (l2bridge) or
	// "vxlan0" (overlay), the names Flannel's host-gw and VXLAN backends use.
	NetworkName string
	// ClusterCIDR holds every node's pod CIDR; default 10.244.0.0/16.
	ClusterCIDR string
	// ClusterCIDRv6 holds every node's IPv6 pod CIDR on a dual-stack
	// cluster (nodes with PodCIDRv6); default fd00:10:244::/56.
	ClusterCIDRv6 string
	Nodes         []NodeSpec
	// DriftRepairPeriod is hnsproxy's --drift-repair-period; default 2s.
	DriftRepairPeriod time.Duration
	// ProxyArgs are added to every hnsproxy's flags.
	ProxyArgs []string
	// HNSSimArgs are added to every hnssim serve's flags (--latency, say).
	HNSSimArgs []string
	// HNSWriteLogs has each node's hnssim record every object it stores,
	// keeps or drops and every write's answer in hnssim-writes.log beside
	// its log (hnssim serve --write-log): to tell whose call made an
	// object a run leaked.
	HNSWriteLogs bool
	// ProxyLaunch, if set, gives each node's hnsproxy its flags and extra
	// environment in place of the rig's (ProxyRig.Args): a kube-proxy
	// manifest's own arguments, say, or flags that differ by node.
	ProxyLaunch func(rig ProxyRig) (args, env []string, err error)
	// ProxyConfig, if set, runs each hnsproxy with --config: the
	// KubeProxyConfiguration it returns, given what the test rig must set
	// per node (its loopback health and metrics addresses, its kubeconfig;
	// a real node's file has none of these per node). kube-proxy's own
	// flags are then left out (--config ignores them), hnsproxy's kept.
	ProxyConfig func(node NodeSpec, healthzAddr, metricsAddr, kubeconfig string) ([]byte, error)
	// SourceVIPFromIPAM leaves --source-vip out on overlay: each hnsproxy
	// reserves its own through the node's CNI IPAM (--cni-conf-dir, where
	// the node's hnscni configuration is written).
	SourceVIPFromIPAM bool
	// Windows runs every node's hnsproxy as the Windows release build under
	// Wine, through hcn and the HCN bridge (winlane.go), each node in the
	// Wine prefix of its profile's Windows build.
	Windows bool
	// PrepareStateDir, if set, is called with each node's state directory
	// (where --state-file lives) before its hnsproxy first starts: the soak
	// mounts a small file system there to fill it.
	PrepareStateDir func(node, dir string) error

	serviceCIDR  string   // the control plane's primary Service range
	serviceCIDRs []string // all of its Service ranges, primary first
}

// NodeSpec is one simulated Windows node.
type NodeSpec struct {
	Name string
	// Profile is the Windows build hnssim behaves like (ws2019, ws2022,
	// ws2025-15.4, ws2025); default ws2022.
	Profile string
	// NodeIP is the node's InternalIP and, on overlay, its provider address.
	NodeIP string
	// PodCIDR is the node's IPv4 pod CIDR (host-local hands out .10 on;
	// .1 is the gateway, .2 the overlay source VIP).
	PodCIDR string
	// NodeIPv6 and PodCIDRv6 make a dual-stack l2bridge node: a second
	// InternalIP and pod CIDR, pods with an address of each family.
	NodeIPv6  string
	PodCIDRv6 string
	// OSBugWorkarounds is hnsproxy's --os-bug-workarounds. Empty: "auto"
	// where the profile models an OS bug, "none" where it models a build
	// with the bugs fixed (ws2022: which build fixed them is unpublished,
	// so hnsproxy's default would work around them there too).
	OSBugWorkarounds string
	// HNSSimArgs are added to this node's hnssim serve flags, after the
	// cluster's (an error variant, say).
	HNSSimArgs []string
}

// BugWorkaroundsFlag is the node's --os-bug-workarounds value, for a
// verifier that computes what hnsproxy programs under it.
func (n NodeSpec) BugWorkaroundsFlag() string {
	if n.OSBugWorkarounds != "" {
		return n.OSBugWorkarounds
	}
	if p, err := sim.ProfileByName(n.profile()); err == nil && len(p.Bugs) == 0 {
		return "none"
	}
	return "auto"
}

// dualStack reports a node with IPv6 addresses beside its IPv4 ones.
func (n NodeSpec) dualStack() bool { return n.PodCIDRv6 != "" }

// podCIDRs are the node's pod CIDRs, IPv4 first.
func (n NodeSpec) podCIDRs() []string {
	if n.dualStack() {
		return []string{n.PodCIDR, n.PodCIDRv6}
	}
	return []string{n.PodCIDR}
}

// nodeIPs are the node's InternalIPs, IPv4 first.
func (n NodeSpec) nodeIPs() []string {
	if n.dualStack() {
		return []string{n.NodeIP, n.NodeIPv6}
	}
	return []string{n.NodeIP}
}

// HNSNetwork is the name of the nodes' HNS network.
func (s ClusterSpec) HNSNetwork() string {
	switch {
	case s.NetworkName != "":
		return s.NetworkName
	case s.NetworkType == NetworkOverlay:
		return "vxlan0"
	}
	return "cbr0"
}

func (s ClusterSpec) clusterCIDR() string {
	if s.ClusterCIDR != "" {
		return s.ClusterCIDR
	}
	return "10.244.0.0/16"
}

// dualStack reports a cluster with dual-stack nodes.
func (s ClusterSpec) dualStack() bool {
	return slices.ContainsFunc(s.Nodes, NodeSpec.dualStack)
}

// clusterCIDRs is --cluster-cidr: the IPv4 cluster CIDR, and on a
// dual-stack cluster the IPv6 one after a comma.
func (s ClusterSpec) clusterCIDRs() string {
	if !s.dualStack() {
		return s.clusterCIDR()
	}
	v6 := s.ClusterCIDRv6
	if v6 == "" {
		v6 = "fd00:10:244::/56"
	}
	return s.clusterCIDR() + "," + v6
}

// serviceRanges are the Service ranges pods see: the primary one, and on a
// dual-stack cluster the IPv6 one after a comma.
func (s ClusterSpec) serviceRanges() string {
	if !s.dualStack() || len(s.serviceCIDRs) < 2 {
		return s.serviceRange()
	}
	return strings.Join(s.serviceCIDRs, ",")
}

func (s ClusterSpec) serviceRange() string {
	if s.serviceCIDR != "" {
		return s.serviceCIDR
	}
	return DefaultServiceCIDRs[0]
}

// dnsIP is the cluster DNS Service address, .10 of the Service range as
// kubeadm picks it.
func (s ClusterSpec) dnsIP() string {
	return nthAddr(netip.MustParsePrefix(s.serviceRange()), 10).String()
}

func (s ClusterSpec) driftRepairPeriod() time.Duration {
	if s.DriftRepairPeriod > 0 {
		return s.DriftRepairPeriod
	}
	return 2 * time.Second
}

func (n NodeSpec) profile() string {
	if n.Profile != "" {
		return n.Profile
	}
	return "ws2022"
}

// SourceVIP is the overlay source VIP: .2 of the pod CIDR, outside
// host-local's range.
func (n NodeSpec) SourceVIP() netip.Addr { return nthAddr(netip.MustParsePrefix(n.PodCIDR), 2) }

func (s ClusterSpec) validate() error {
	if s.NetworkType != NetworkL2Bridge && s.NetworkType != NetworkOverlay {
		return fmt.Errorf("cluster: network type %q: want %s or %s", s.NetworkType, NetworkL2Bridge, NetworkOverlay)
	}
	if len(s.Nodes) == 0 {
		return errors.New("cluster: no nodes")
	}
	seen := map[string]bool{}
	for _, n := range s.Nodes {
		if n.Name == "" || seen[n.Name] {
			return fmt.Errorf("cluster: node name %q empty or repeated", n.Name)
		}
		seen[n.Name] = true
		if _, err := netip.ParseAddr(n.NodeIP); err != nil {
			return fmt.Errorf("cluster: node %s: node IP: %w", n.Name, err)
		}
		if p, err := netip.ParsePrefix(n.PodCIDR); err != nil || !p.Addr().Is4() || p.Bits() > 28 {
			return fmt.Errorf("cluster: node %s: pod CIDR %q: want an IPv4 prefix of /28 or wider", n.Name, n.PodCIDR)
		}
		if n.NodeIPv6 == "" && n.PodCIDRv6 == "" {
			continue
		}
		if s.NetworkType != NetworkL2Bridge {
			return fmt.Errorf("cluster: node %s: dual-stack needs l2bridge (HNS overlay carries IPv4 only)", n.Name)
		}
		if a, err := netip.ParseAddr(n.NodeIPv6); err != nil || !a.Is6() {
			return fmt.Errorf("cluster: node %s: IPv6 node IP %q: want an IPv6 address", n.Name, n.NodeIPv6)
		}
		if p, err := netip.ParsePrefix(n.PodCIDRv6); err != nil || p.Addr().Is4() || p.Bits() > 120 {
			return fmt.Errorf("cluster: node %s: IPv6 pod CIDR %q: want an IPv6 prefix of /120 or wider", n.Name, n.PodCIDRv6)
		}
	}
	return nil
}

// Cluster is a control plane with simulated Windows nodes, each running
// hnssim (its HNS), hnscni (through libcni, for its pods) and hnsproxy.
type Cluster struct {
	Spec     ClusterSpec
	CP       *ControlPlane
	Admin    kubernetes.Interface
	Identity *ProxyIdentity
	Nodes    []*Node
	dir      string
	// exes holds the Windows lane's binaries (Spec.Windows).
	exes string
}

// Node is one simulated Windows node.
type Node struct {
	Spec  NodeSpec
	Sim   *HNSSim
	Proxy *Proxy
	Pods  []Pod
	// SilentPluginExits are the CNI ADDs on the Windows lane whose
	// hnscni.exe run ended without a word and whose sandbox was made anew.
	SilentPluginExits []string
	dir               string
	net               *podNetwork
}

// Name is the node's name.
func (n *Node) Name() string { return n.Spec.Name }

// HNSWriteLog is the path of the node's hnssim write log
// (ClusterSpec.HNSWriteLogs; no file without it).
func (n *Node) HNSWriteLog() string { return writeLogPath(n.dir) }

func writeLogPath(nodeDir string) string { return filepath.Join(nodeDir, "hnssim-writes.log") }

// StartCluster applies deploy/'s RBAC, then for each node starts hnssim,
// registers the Node object and starts hnsproxy as the deploy/
// ServiceAccount. dir holds every node's files (sockets, logs, IPAM);
// keep it short, unix socket paths are limited to 108 bytes.
func StartCluster(ctx context.Context, cp *ControlPlane, spec ClusterSpec, dir string) (c *Cluster, err error) {
	if len(cp.ServiceCIDRs()) > 0 {
		spec.serviceCIDR = cp.ServiceCIDRs()[0]
		spec.serviceCIDRs = cp.ServiceCIDRs()
	}
	if err := spec.validate(); err != nil {
		return nil, err
	}
	binDir, err := Tools()
	if err != nil {
		return nil, err
	}
	cfg, err := cp.AdminConfig()
	if err != nil {
		return nil, err
	}
	admin, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	c = &Cluster{Spec: spec, CP: cp, Admin: admin, dir: dir}
	defer func() {
		if err != nil {
			err = errors.Join(err, c.Stop())
		}
	}()
	if c.Identity, err = ApplyProxyRBAC(ctx, cp, admin, dir); err != nil {
		return c, err
	}
	if spec.Windows {
		if c.exes, err = spec.prepareWine(); err != nil {
			return c, err
		}
	}
	for _, ns := range spec.Nodes {
		n, err := c.startNode(ctx, binDir, ns)
		if n != nil {
			c.Nodes = append(c.Nodes, n) // so that Stop stops what started
		}
		if err != nil {
			return c, err
		}
	}
	for _, n := range c.Nodes {
		if err := n.Proxy.Start(ctx); err != nil {
			return c, err
		}
	}
	return c, nil
}

func (c *Cluster) startNode(ctx context.Context, binDir string, spec NodeSpec) (*Node, error) {
	n := &Node{Spec: spec, dir: filepath.Join(c.dir, spec.Name)}
	if err := os.MkdirAll(n.dir, 0o755); err != nil {
		return nil, err
	}
	args := c.hnssimArgs(spec)
	bridgePort := 0
	var w *wine // the node's Wine prefix on the Windows lane
	if c.Spec.Windows {
		var err error
		if w, _, err = prepareWine(spec.profile()); err != nil {
			return nil, err
		}
		if bridgePort, err = freePort(); err != nil {
			return nil, err
		}
		args = append(args, bridgeArgs(bridgePort)...)
	}
	var err error
	if n.Sim, err = startHNSSim(ctx, filepath.Join(binDir, HNSSimBin), n.dir, spec.Name, args); err != nil {
		return nil, err
	}
	if _, err := RegisterWindowsNode(ctx, c.Admin, WindowsNode{
		Name: spec.Name, PodCIDRs: spec.podCIDRs(), InternalIPs: spec.nodeIPs(),
	}); err != nil {
		return n, err
	}
	cacheDir, ipamDir := cniDirs(n.dir)
	conf, err := cniConfig(c.Spec, spec, n.Sim.Socket, ipamDir)
	if err != nil {
		return n, err
	}
	if err := writeCNIConfig(n.dir, conf); err != nil {
		return n, err
	}
	cniBin := binDir
	if w != nil {
		if conf, err = windowsCNIConfig(conf); err != nil {
			return n, err
		}
		if cniBin, err = w.windowsCNILauncher(filepath.Join(n.dir, "cni-bin"), filepath.Join(c.exes, HNSCNIExe), bridgePort); err != nil {
			return n, err
		}
	}
	if n.net, err = newPodNetwork(cniBin, cacheDir, conf); err != nil {
		return n, err
	}
	n.net.underWine = w != nil
	if err := os.MkdirAll(stateDir(n.dir), 0o700); err != nil {
		return n, err
	}
	if c.Spec.PrepareStateDir != nil {
		if err := c.Spec.PrepareStateDir(spec.Name, stateDir(n.dir)); err != nil {
			return n, fmt.Errorf("node %s: preparing the state directory: %w", spec.Name, err)
		}
	}
	if w != nil {
		n.Proxy, err = c.newWindowsProxy(w, c.exes, n, bridgePort)
		return n, err
	}
	n.Proxy, err = newProxy(filepath.Join(binDir, HNSProxyBin), n.dir, spec, func(healthz, metrics int) ([]string, []string, error) {
		args, err := proxyArgs(c.Spec, spec, c.Identity.Kubeconfig, n.Sim.Socket, n.dir, healthz, metrics)
		if err != nil {
			return nil, nil, err
		}
		args = append(args, "--cni-conf-dir="+cniConfDir(n.dir), "--cni-bin-dir="+binDir)
		if c.Spec.ProxyLaunch == nil {
			return args, nil, nil
		}
		return c.Spec.ProxyLaunch(ProxyRig{
			Node: spec, Args: args, Kubeconfig: c.Identity.Kubeconfig, HNSEndpoint: "unix://" + n.Sim.Socket,
			HealthzAddr: fmt.Sprintf("127.0.0.1:%d", healthz), MetricsAddr: fmt.Sprintf("127.0.0.1:%d", metrics),
			StateFile: proxyStateFile(n.dir), Dir: n.dir,
		})
	})
	return n, err
}

// hnssimArgs pre-create the node's HNS network as the node's provisioning
// (Flannel, or a start-up script) would: on overlay with a route to each
// other node's pod CIDR through its provider address.
func (c *Cluster) hnssimArgs(spec NodeSpec) []string {
	args := []string{
		// Distinct seeds give the nodes distinct object IDs, as real hosts have.
		"--seed", strconv.Itoa(1 + slices.IndexFunc(c.Spec.Nodes, func(n NodeSpec) bool { return n.Name == spec.Name })),
		"--profile", spec.profile(),
		"--network-name", c.Spec.HNSNetwork(),
		"--network-type", c.Spec.NetworkType,
	}
	for _, ip := range spec.nodeIPs() {
		args = append(args, "--node-ip", ip)
	}
	for _, cidr := range spec.podCIDRs() {
		args = append(args, "--subnet", cidr)
	}
	if c.Spec.NetworkType == NetworkOverlay {
		for _, other := range c.Spec.Nodes {
			if other.Name != spec.Name {
				args = append(args, "--remote-subnet", other.PodCIDR+"="+other.NodeIP)
			}
		}
	}
	if c.Spec.HNSWriteLogs {
		args = append(args, "--write-log", writeLogPath(filepath.Join(c.dir, spec.Name)))
	}
	return append(append(args, c.Spec.HNSSimArgs...), spec.HNSSimArgs...)
}

// Node returns the node named name, or nil.
func (c *Cluster) Node(name string) *Node {
	for _, n := range c.Nodes {
		if n.Spec.Name == name {
			return n
		}
	}
	return nil
}

// Sims are every node's hnssim.
func (c *Cluster) Sims() []*HNSSim {
	out := make([]*HNSSim, len(c.Nodes))
	for i, n := range c.Nodes {
		out[i] = n.Sim
	}
	return out
}

// Trace traces f over every node (the first node's server, the others as
// peers), as `hnssim trace --peer ...` does.
func (c *Cluster) Trace(ctx context.Context, f Flow) (Trace, error) {
	sims := c.Sims()
	return sims[0].Trace(ctx, f, sims[1:]...)
}

// WirePod creates a pod sandbox's HNS namespace and runs CNI ADD through
// libcni, as a container runtime does. On the Windows lane a sandbox whose
// plugin run ended without a word is torn down and made anew once, as the
// kubelet retries a failed sandbox (silentPluginExit says why).
func (n *Node) WirePod(ctx context.Context, name string) (Pod, error) {
	p, err := n.wirePod(ctx, name)
	if err != nil && n.net.underWine && silentPluginExit(err) {
		n.SilentPluginExits = append(n.SilentPluginExits, err.Error())
		if terr := n.tearDown(ctx, p); terr != nil {
			return Pod{}, errors.Join(err, terr)
		}
		p, err = n.wirePod(ctx, name)
	}
	if err != nil {
		return Pod{}, err
	}
	n.Pods = append(n.Pods, p)
	return p, nil
}

// wirePod makes one sandbox; on a failed ADD it returns the pod as far as
// it got (its namespace) with the error.
func (n *Node) wirePod(ctx context.Context, name string) (Pod, error) {
	ns, err := n.Sim.CreateNamespace(ctx)
	if err != nil {
		return Pod{}, fmt.Errorf("node %s: pod %s: namespace: %w", n.Spec.Name, name, err)
	}
	p := Pod{Name: name, Node: n.Spec.Name, Namespace: ns}
	if p.IP, p.IPv6, err = n.net.add(ctx, containerID(name), ns); err != nil {
		return p, fmt.Errorf("node %s: pod %s: %w", n.Spec.Name, name, err)
	}
	return p, nil
}

// WirePods wires count pods named prefix-<node>-<i>.
func (n *Node) WirePods(ctx context.Context, prefix string, count int) ([]Pod, error) {
	var pods []Pod
	for i := range count {
		p, err := n.WirePod(ctx, fmt.Sprintf("%s-%s-%d", prefix, n.Spec.Name, i))
		if err != nil {
			return pods, err
		}
		pods = append(pods, p)
	}
	return pods, nil
}

// RemovePod runs CNI DEL for the pod and deletes its HNS namespace, as a
// runtime does when the pod sandbox goes away.
func (n *Node) RemovePod(ctx context.Context, p Pod) error {
	if err := n.tearDown(ctx, p); err != nil {
		return err
	}
	n.Pods = slices.DeleteFunc(n.Pods, func(q Pod) bool { return q.Name == p.Name })
	return nil
}

func (n *Node) tearDown(ctx context.Context, p Pod) error {
	if err := n.net.del(ctx, containerID(p.Name), p.Namespace); err != nil {
		return fmt.Errorf("node %s: pod %s: %w", n.Spec.Name, p.Name, err)
	}
	if err := n.Sim.Client.DeleteNamespace(ctx, p.Namespace); err != nil {
		return fmt.Errorf("node %s: pod %s: namespace: %w", n.Spec.Name, p.Name, err)
	}
	return nil
}

// containerID is the sandbox ID a runtime would pick; endpoint names
// (<containerID>_<network>) stay readable.
func containerID(podName string) string { return strings.ReplaceAll(podName, "_", "-") }

// Stop stops every node's hnsproxy, then every hnssim.
func (c *Cluster) Stop() error {
	var errs []error
	for _, n := range c.Nodes {
		if n.Proxy != nil {
			errs = append(errs, n.Proxy.Stop())
		}
	}
	for _, n := range c.Nodes {
		if n.Sim != nil {
			errs = append(errs, n.Sim.Stop())
		}
	}
	return errors.Join(errs...)
}
