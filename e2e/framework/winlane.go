//go:build linux

package framework

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The Windows lane (ClusterSpec.Windows): each node's hnssim also serves
// the HCN bridge on a loopback port, and its hnsproxy is the Windows
// release build, hnsproxy.exe, under Wine: no --hns-endpoint (the real HNS
// path, hnslb/hcnclient over hcsshim's hcn, whose computenetwork.dll and
// vmcompute.dll are hack/wine's bridge DLLs), kubeconfig and state file as
// Windows paths, and the node's Windows build in its prefix's registry (one
// prefix per build, so the nodes of a cluster may play different profiles).

// bridgeArgs makes hnssim serve the HCN bridge on port.
func bridgeArgs(port int) []string {
	return []string{"--bridge", fmt.Sprintf("127.0.0.1:%d", port)}
}

// newWindowsProxy is the node's hnsproxy.exe under w, reaching HNS through
// the bridge on bridgePort.
func (c *Cluster) newWindowsProxy(w *wine, exes string, n *Node, bridgePort int) (*Proxy, error) {
	p, err := newProxy(filepath.Join(exes, HNSProxyExe), n.dir, n.Spec, func(healthz, metrics int) ([]string, []string, error) {
		args, err := proxyArgs(c.Spec, n.Spec, c.Identity.Kubeconfig, "", n.dir, healthz, metrics)
		return windowsProxyArgs(args), nil, err
	})
	if err != nil {
		return nil, err
	}
	p.wine = w
	p.wineEnv = []string{fmt.Sprintf("%s=127.0.0.1:%d", envBridge, bridgePort)}
	return p, nil
}

// windowsProxyArgs drops --hns-endpoint (a Windows build takes none) and
// names files as Windows paths.
func windowsProxyArgs(args []string) []string {
	var out []string
	for _, a := range args {
		flag, value, _ := strings.Cut(a, "=")
		switch flag {
		case "--hns-endpoint":
			continue
		case "--kubeconfig", "--state-file":
			a = flag + "=" + windowsPath(value)
		}
		out = append(out, a)
	}
	return out
}

// prepareWine readies the Windows binaries and the prefix of each node's
// Windows build; it returns the binaries' folder.
func (s ClusterSpec) prepareWine() (string, error) {
	exes := ""
	for _, n := range s.Nodes {
		_, dir, err := prepareWine(n.profile())
		if err != nil {
			return "", fmt.Errorf("node %s: %w", n.Name, err)
		}
		exes = dir
	}
	return exes, nil
}

// ProcessName is the running proxy's process name as the kernel shows it:
// Wine names a Windows program's process after its .exe.
func (p *Proxy) ProcessName() (string, error) {
	if !p.proc.alive() {
		return "", fmt.Errorf("hnsproxy %s is not running", p.Node)
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", p.proc.pid))
	return strings.TrimSpace(string(b)), err
}
