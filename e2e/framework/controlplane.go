//go:build linux

package framework

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/rest"
)

// DefaultServiceCIDRs make the cluster dual-stack, IPv4 primary.
var DefaultServiceCIDRs = []string{"10.96.0.0/16", "fd00:10:96::/112"}

const (
	stateFile      = "controlplane.json"
	etcdReadyWait  = time.Minute
	apiReadyWait   = 3 * time.Minute // the machine may be busy compiling
	stopGrace      = 30 * time.Second
	startAttempts  = 3 // a free port may be taken before the server binds it
	etcdName       = "etcd"
	apiServerName  = "kube-apiserver"
	etcdDataSubdir = "etcd-data"
)

// Options says how to run a control plane. The zero value is usable.
type Options struct {
	// BinDir holds kube-apiserver and etcd; empty means Binaries().
	BinDir string
	// ServiceCIDRs is --service-cluster-ip-range; empty means DefaultServiceCIDRs.
	ServiceCIDRs []string
	// Detach lets the processes outlive the caller (hack/controlplane.sh);
	// otherwise they die with it.
	Detach bool
}

// state is what a later invocation needs to find, restart or stop a
// control plane; it is kept as JSON in the control plane directory.
type state struct {
	BinDir         string   `json:"binDir"`
	ServiceCIDRs   []string `json:"serviceCIDRs"`
	Detach         bool     `json:"detach"`
	EtcdClientPort int      `json:"etcdClientPort"`
	EtcdPeerPort   int      `json:"etcdPeerPort"`
	APIServerPort  int      `json:"apiServerPort"`
	EtcdPID        int      `json:"etcdPID"`
	APIServerPID   int      `json:"apiServerPID"`
}

// ControlPlane is a running etcd and kube-apiserver, everything they use
// (keys, tokens, kubeconfigs, data, logs) in one directory, serving on
// 127.0.0.1 only.
type ControlPlane struct {
	dir       string
	st        state
	etcd      *process
	apiserver *process
}

// Start starts etcd and kube-apiserver in dir and waits until the apiserver
// reports /readyz. On failure nothing is left running.
func Start(ctx context.Context, dir string, opts Options) (*ControlPlane, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if opts.BinDir == "" {
		if opts.BinDir, err = Binaries(); err != nil {
			return nil, err
		}
	}
	if len(opts.ServiceCIDRs) == 0 {
		opts.ServiceCIDRs = DefaultServiceCIDRs
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, stateFile)); err == nil {
		return nil, fmt.Errorf("%s already holds a control plane; stop it or use a fresh directory", dir)
	}
	if err := writePKI(dir); err != nil {
		return nil, fmt.Errorf("writing keys: %w", err)
	}
	c := &ControlPlane{dir: dir, st: state{BinDir: opts.BinDir, ServiceCIDRs: opts.ServiceCIDRs, Detach: opts.Detach}}
	if err := c.startEtcd(ctx); err != nil {
		return nil, err
	}
	if err := c.startAPIServerOnFreePort(ctx); err != nil {
		return nil, errors.Join(err, c.Stop())
	}
	return c, nil
}

// Open finds a control plane that an earlier Start (with Detach) left
// running in dir.
func Open(dir string) (*ControlPlane, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(dir, stateFile))
	if err != nil {
		return nil, fmt.Errorf("no control plane in %s: %w", dir, err)
	}
	c := &ControlPlane{dir: dir}
	if err := json.Unmarshal(b, &c.st); err != nil {
		return nil, fmt.Errorf("reading %s: %w", stateFile, err)
	}
	c.etcd = findProcess(etcdName, c.bin(etcdName), c.st.EtcdPID, c.logPath(etcdName))
	c.apiserver = findProcess(apiServerName, c.bin(apiServerName), c.st.APIServerPID, c.logPath(apiServerName))
	return c, nil
}

// Dir is the control plane's directory.
func (c *ControlPlane) Dir() string { return c.dir }

// APIServerURL is https://127.0.0.1:<port>.
func (c *ControlPlane) APIServerURL() string {
	return fmt.Sprintf("https://127.0.0.1:%d", c.st.APIServerPort)
}

// EtcdURL is etcd's client URL, http://127.0.0.1:<port>.
func (c *ControlPlane) EtcdURL() string {
	return fmt.Sprintf("http://127.0.0.1:%d", c.st.EtcdClientPort)
}

// ServiceCIDRs are the Service ClusterIP ranges, primary family first.
func (c *ControlPlane) ServiceCIDRs() []string { return append([]string(nil), c.st.ServiceCIDRs...) }

// AdminKubeconfig is the path of a kubeconfig for a system:masters user.
func (c *ControlPlane) AdminKubeconfig() string { return filepath.Join(c.dir, adminUser.kubeconfig) }

// KubeProxyKubeconfig is the path of a kubeconfig for the user
// system:kube-proxy, which holds only the bootstrap system:node-proxier role.
func (c *ControlPlane) KubeProxyKubeconfig() string {
	return filepath.Join(c.dir, kubeProxyUser.kubeconfig)
}

// AdminConfig is a client config for a system:masters user.
func (c *ControlPlane) AdminConfig() (*rest.Config, error) { return restConfig(c.dir, adminUser) }

// KubeProxyConfig is a client config for the user system:kube-proxy.
func (c *ControlPlane) KubeProxyConfig() (*rest.Config, error) {
	return restConfig(c.dir, kubeProxyUser)
}

// Env lists the control plane as shell variables (hack/controlplane.sh env).
func (c *ControlPlane) Env() []string {
	return []string{
		"CONTROLPLANE_DIR=" + c.dir,
		"KUBECONFIG=" + c.AdminKubeconfig(),
		"KUBE_PROXY_KUBECONFIG=" + c.KubeProxyKubeconfig(),
		"KUBE_APISERVER_URL=" + c.APIServerURL(),
		"ETCD_URL=" + c.EtcdURL(),
		"SERVICE_CIDRS=" + strings.Join(c.st.ServiceCIDRs, ","),
	}
}

// StopAPIServer stops kube-apiserver and leaves etcd running, so a test can
// watch clients live through an apiserver outage.
func (c *ControlPlane) StopAPIServer() error {
	if err := c.apiserver.stop(stopGrace); err != nil {
		return err
	}
	c.st.APIServerPID = 0
	return c.saveState()
}

// StartAPIServer starts kube-apiserver again on its old port (clients keep
// their config) and waits for /readyz.
func (c *ControlPlane) StartAPIServer(ctx context.Context) error {
	if c.apiserver.alive() {
		return fmt.Errorf("%s is already running (pid %d)", apiServerName, c.apiserver.pid)
	}
	return c.startAPIServer(ctx)
}

// RestartAPIServer stops and starts kube-apiserver; etcd, and so every
// object, stays.
func (c *ControlPlane) RestartAPIServer(ctx context.Context) error {
	if err := c.StopAPIServer(); err != nil {
		return err
	}
	return c.StartAPIServer(ctx)
}

// Stop stops kube-apiserver, then etcd. It is safe to call more than once.
func (c *ControlPlane) Stop() error {
	err := errors.Join(c.apiserver.stop(stopGrace), c.etcd.stop(stopGrace))
	if err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(c.dir, stateFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

func (c *ControlPlane) startEtcd(ctx context.Context) error {
	var err error
	for attempt := 0; attempt < startAttempts; attempt++ {
		if c.st.EtcdClientPort, err = freePort(); err != nil {
			return err
		}
		if c.st.EtcdPeerPort, err = freePort(); err != nil {
			return err
		}
		// A failed attempt may have written a member with other URLs.
		if err = os.RemoveAll(filepath.Join(c.dir, etcdDataSubdir)); err != nil {
			return err
		}
		if c.etcd, err = c.start(etcdName, c.etcdArgs()); err != nil {
			return err
		}
		readyCtx, cancel := context.WithTimeout(ctx, etcdReadyWait)
		err = c.etcd.waitReady(readyCtx, c.etcdHealthy)
		cancel()
		if err == nil {
			c.st.EtcdPID = c.etcd.pid
			return c.saveState()
		}
		if stopErr := c.etcd.stop(stopGrace); stopErr != nil || ctx.Err() != nil {
			return errors.Join(err, stopErr)
		}
	}
	return err
}

func (c *ControlPlane) startAPIServerOnFreePort(ctx context.Context) error {
	tokens, err := writeTokenFile(c.dir)
	if err != nil {
		return err
	}
	for attempt := 0; attempt < startAttempts; attempt++ {
		if c.st.APIServerPort, err = freePort(); err != nil {
			return err
		}
		if err = writeKubeconfigs(c.dir, c.APIServerURL(), tokens); err != nil {
			return err
		}
		if err = c.startAPIServer(ctx); err == nil || ctx.Err() != nil {
			return err
		}
	}
	return err
}

func (c *ControlPlane) startAPIServer(ctx context.Context) error {
	var err error
	if c.apiserver, err = c.start(apiServerName, c.apiServerArgs()); err != nil {
		return err
	}
	readyCtx, cancel := context.WithTimeout(ctx, apiReadyWait)
	defer cancel()
	if err := c.apiserver.waitReady(readyCtx, c.apiServerReady); err != nil {
		return errors.Join(err, c.apiserver.stop(stopGrace))
	}
	c.st.APIServerPID = c.apiserver.pid
	return c.saveState()
}

func (c *ControlPlane) start(name string, args []string) (*process, error) {
	return startProcess(name, c.bin(name), args, nil, c.logPath(name), c.st.Detach)
}

func (c *ControlPlane) bin(name string) string     { return filepath.Join(c.st.BinDir, name) }
func (c *ControlPlane) logPath(name string) string { return filepath.Join(c.dir, name+".log") }
func (c *ControlPlane) file(name string) string    { return filepath.Join(c.dir, name) }

func (c *ControlPlane) etcdArgs() []string {
	client := c.EtcdURL()
	peer := fmt.Sprintf("http://127.0.0.1:%d", c.st.EtcdPeerPort)
	return []string{
		"--name=e2e",
		"--data-dir=" + c.file(etcdDataSubdir),
		"--listen-client-urls=" + client,
		"--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=e2e=" + peer,
		// Throwaway data: skipping fsync keeps a shared disk from slowing
		// every write down.
		"--unsafe-no-fsync",
		"--log-level=warn",
	}
}

func (c *ControlPlane) apiServerArgs() []string {
	return []string{
		"--etcd-servers=" + c.EtcdURL(),
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", c.st.APIServerPort),
		"--tls-cert-file=" + c.file(servingCertFile),
		"--tls-private-key-file=" + c.file(servingKeyFile),
		"--cert-dir=" + c.file("apiserver-certs"),
		"--token-auth-file=" + c.file(tokenFile),
		"--authorization-mode=Node,RBAC",
		// HostProcess pods (deploy/'s DaemonSet) need it; the manifests are dry-run against this server.
		"--allow-privileged=true",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + c.file(saPubFile),
		"--service-account-signing-key-file=" + c.file(saKeyFile),
		"--service-cluster-ip-range=" + strings.Join(c.st.ServiceCIDRs, ","),
		// The default reconciler would publish the advertise address as the
		// kubernetes Service's endpoint, and a loopback address is refused
		// there.
		"--endpoint-reconciler-type=none",
		"--profiling=false",
		"--shutdown-watch-termination-grace-period=2s",
	}
}

func (c *ControlPlane) etcdHealthy(ctx context.Context) error {
	return httpGetOK(ctx, http.DefaultClient, c.EtcdURL()+"/health", `"health":"true"`)
}

func (c *ControlPlane) apiServerReady(ctx context.Context) error {
	cfg, err := c.AdminConfig()
	if err != nil {
		return err
	}
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	defer client.CloseIdleConnections()
	return httpGetOK(ctx, client, c.APIServerURL()+"/readyz", "ok")
}

// httpGetOK succeeds when url answers 200 with a body containing want.
func httpGetOK(ctx context.Context, client *http.Client, url, want string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}

func (c *ControlPlane) saveState() error {
	b, err := json.MarshalIndent(c.st, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(c.dir, stateFile), append(b, '\n'), 0o644)
}
