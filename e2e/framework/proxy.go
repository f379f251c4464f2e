//go:build linux

package framework

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

const proxyReadyWait = 2 * time.Minute

// Proxy is one node's running hnsproxy binary.
type Proxy struct {
	Node        string
	HealthzPort int
	MetricsPort int
	bin, log    string
	args, env   []string
	proc        *process
	// wine, when set, runs bin (a Windows binary) under Wine with wineEnv.
	wine    *wine
	wineEnv []string
}

// HealthzURL is the proxy's /healthz.
func (p *Proxy) HealthzURL() string {
	return fmt.Sprintf("http://127.0.0.1:%d/healthz", p.HealthzPort)
}

// MetricsURL is the proxy's /metrics.
func (p *Proxy) MetricsURL() string {
	return fmt.Sprintf("http://127.0.0.1:%d/metrics", p.MetricsPort)
}

// DebugURL is the proxy's /debug/hns: desired and realized HNS objects per
// Service port (served on a loopback metrics address).
func (p *Proxy) DebugURL() string {
	return fmt.Sprintf("http://127.0.0.1:%d/debug/hns", p.MetricsPort)
}

// LogPath is where the proxy's output goes (kept across restarts).
func (p *Proxy) LogPath() string { return p.log }

// Args are the flags the proxy runs with; hnsproxy-diag takes the same.
func (p *Proxy) Args() []string { return slices.Clone(p.args) }

// PID is the running process's id, 0 when stopped.
func (p *Proxy) PID() int {
	if !p.proc.alive() {
		return 0
	}
	return p.proc.pid
}

// stateDir is where a node's hnsproxy keeps its state file, a directory of
// its own (ClusterSpec.PrepareStateDir).
func stateDir(nodeDir string) string { return filepath.Join(nodeDir, "state") }

// proxyStateFile is a node's hnsproxy --state-file.
func proxyStateFile(nodeDir string) string {
	return filepath.Join(stateDir(nodeDir), "hnsproxy-state.json")
}

// StateDir is the directory of the proxy's --state-file.
func (n *Node) StateDir() string { return stateDir(n.dir) }

// proxyArgs are the kube-proxy-compatible flags a node's hnsproxy runs
// with, or with ClusterSpec.ProxyConfig its --config file and hnsproxy's own flags.
func proxyArgs(spec ClusterSpec, node NodeSpec, kubeconfig, socket, dir string, healthz, metrics int) ([]string, error) {
	if spec.ProxyConfig != nil {
		conf, err := spec.ProxyConfig(node, fmt.Sprintf("127.0.0.1:%d", healthz), fmt.Sprintf("127.0.0.1:%d", metrics), kubeconfig)
		if err != nil {
			return nil, err
		}
		file := filepath.Join(dir, "config.conf")
		if err := os.WriteFile(file, conf, 0o600); err != nil {
			return nil, err
		}
		return append([]string{
			"--config=" + file,
			"--hostname-override=" + node.Name,
			"--hns-endpoint=unix://" + socket,
			"--state-file=" + proxyStateFile(dir),
			"--drift-repair-period=" + spec.driftRepairPeriod().String(),
			"--v=2",
		}, spec.ProxyArgs...), nil
	}
	args := []string{
		"--kubeconfig=" + kubeconfig,
		"--hostname-override=" + node.Name,
		"--hns-endpoint=unix://" + socket,
		"--network-name=" + spec.HNSNetwork(),
		"--cluster-cidr=" + spec.clusterCIDRs(),
		"--enable-dsr",
		fmt.Sprintf("--healthz-bind-address=127.0.0.1:%d", healthz),
		fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", metrics),
		"--state-file=" + proxyStateFile(dir),
		"--sync-period=30s",
		"--min-sync-period=0s",
		"--drift-repair-period=" + spec.driftRepairPeriod().String(),
		"--os-bug-workarounds=" + node.BugWorkaroundsFlag(),
		"--v=2",
	}
	if spec.NetworkType == NetworkOverlay && !spec.SourceVIPFromIPAM {
		args = append(args, "--source-vip="+node.SourceVIP().String())
	}
	return append(args, spec.ProxyArgs...), nil
}

// ProxyRig is what the rig set up for one node's hnsproxy, for a
// ClusterSpec.ProxyLaunch that runs it with other flags.
type ProxyRig struct {
	Node NodeSpec
	// Args are the flags the rig would run hnsproxy with.
	Args []string
	// Kubeconfig holds deploy/'s ServiceAccount credentials.
	Kubeconfig string
	// HNSEndpoint is the node's hnssim (unix://...), for HNS_ENDPOINT.
	HNSEndpoint string
	// HealthzAddr and MetricsAddr are free loopback addresses.
	HealthzAddr, MetricsAddr string
	// StateFile is where the node's state file belongs.
	StateFile string
	// Dir is the node's own directory, for files the launch writes.
	Dir string
}

// newProxy prepares a proxy; launch returns its flags and extra environment.
func newProxy(bin, dir string, node NodeSpec, launch func(healthz, metrics int) (args, env []string, err error)) (*Proxy, error) {
	healthz, err := freePort()
	if err != nil {
		return nil, err
	}
	metrics, err := freePort()
	if err != nil {
		return nil, err
	}
	args, env, err := launch(healthz, metrics)
	if err != nil {
		return nil, fmt.Errorf("node %s: hnsproxy's command line: %w", node.Name, err)
	}
	return &Proxy{
		Node: node.Name, HealthzPort: healthz, MetricsPort: metrics,
		bin: bin, log: filepath.Join(dir, "hnsproxy.log"), args: args, env: env,
	}, nil
}

// Start runs the binary and waits until /healthz answers 200.
func (p *Proxy) Start(ctx context.Context) error {
	if p.proc.alive() {
		return fmt.Errorf("hnsproxy %s is already running (pid %d)", p.Node, p.proc.pid)
	}
	bin, args, env, name := p.bin, p.args, p.env, "hnsproxy "+p.Node
	if p.wine != nil {
		bin, args, env = p.wine.command(p.bin, p.args, p.wineEnv...)
		name = filepath.Base(p.bin) + " " + p.Node
	}
	proc, err := startProcess(name, bin, args, env, p.log, false)
	if err != nil {
		return err
	}
	p.proc = proc
	readyCtx, cancel := context.WithTimeout(ctx, proxyReadyWait)
	defer cancel()
	return proc.waitReady(readyCtx, func(ctx context.Context) error {
		return httpGetOK(ctx, http.DefaultClient, p.HealthzURL(), "")
	})
}

// Cleanup runs the binary once, while the proxy is stopped, with the
// proxy's flags and --cleanup, and returns its output.
func (p *Proxy) Cleanup(ctx context.Context) ([]byte, error) {
	if p.proc.alive() {
		return nil, fmt.Errorf("hnsproxy %s is running (pid %d): stop it before --cleanup", p.Node, p.proc.pid)
	}
	cmd := exec.CommandContext(ctx, p.bin, append(slices.Clone(p.args), "--cleanup")...)
	cmd.Env = append(os.Environ(), p.env...)
	return cmd.CombinedOutput()
}

// StateFile is where the proxy records the HNS objects it owns.
func (p *Proxy) StateFile() string {
	for _, a := range p.args {
		if f, ok := strings.CutPrefix(a, "--state-file="); ok {
			return f
		}
	}
	return ""
}

// SetFlag makes the proxy's next Start run with --name=value, in place of
// any value the flag had: an operator's changed command line.
func (p *Proxy) SetFlag(name, value string) {
	p.args = slices.DeleteFunc(p.args, func(a string) bool { return strings.HasPrefix(a, "--"+name+"=") })
	p.args = append(p.args, "--"+name+"="+value)
}

// WaitExit waits up to timeout for the proxy to exit by itself.
func (p *Proxy) WaitExit(timeout time.Duration) bool { return p.proc.waitExit(timeout) }

// Stop sends SIGTERM and waits for the exit.
func (p *Proxy) Stop() error { return p.proc.stop(stopGrace) }

// Kill sends SIGKILL (a crash: nothing is cleaned up) and waits for the exit.
func (p *Proxy) Kill() error {
	if !p.proc.alive() {
		return nil
	}
	if err := syscall.Kill(p.proc.pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("killing hnsproxy %s: %w", p.Node, err)
	}
	if !p.proc.waitExit(stopGrace) {
		return fmt.Errorf("hnsproxy %s (pid %d) did not exit after SIGKILL", p.Node, p.proc.pid)
	}
	return nil
}

// Restart stops (SIGTERM) and starts the proxy with the same flags.
func (p *Proxy) Restart(ctx context.Context) error {
	if err := p.Stop(); err != nil {
		return err
	}
	return p.Start(ctx)
}
