package options

import (
	clientfeatures "k8s.io/client-go/features"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/featuregate"

	"github.com/hnsproxy/hnsproxy/reconciler"
)

// parse runs the command line through the same path the daemon does.
func parse(t *testing.T, env map[string]string, args ...string) (*Options, *pflag.FlagSet, *Config, []string, error) {
	t.Helper()
	o := NewOptions()
	o.getenv = func(k string) string { return env[k] }
	o.hostname = func() (string, error) { return "WIN-HOST", nil }
	var fss cliflag.NamedFlagSets
	o.AddFlags(&fss)
	fs := pflag.NewFlagSet("hnsproxy", pflag.ContinueOnError)
	for _, name := range fss.Order {
		fs.AddFlagSet(fss.FlagSets[name])
	}
	if err := fs.Parse(args); err != nil {
		return o, fs, nil, nil, err
	}
	cfg, warnings, err := o.Complete(fs)
	return o, fs, cfg, warnings, err
}

func mustParse(t *testing.T, env map[string]string, args ...string) (*Config, []string) {
	t.Helper()
	_, _, cfg, warnings, err := parse(t, env, args...)
	if err != nil {
		t.Fatalf("parse %v: %v", args, err)
	}
	return cfg, warnings
}

func wantError(t *testing.T, err error, contains string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), contains) {
		t.Fatalf("error = %v, want one containing %q", err, contains)
	}
}

func wantWarning(t *testing.T, warnings []string, contains string) {
	t.Helper()
	for _, w := range warnings {
		if strings.Contains(w, contains) {
			return
		}
	}
	t.Fatalf("no warning containing %q in %q", contains, warnings)
}

var kubeNetwork = map[string]string{"KUBE_NETWORK": "l2bridge"}

func TestDefaultsMatchKubeProxy(t *testing.T) {
	cfg, warnings := mustParse(t, kubeNetwork)
	if len(warnings) != 0 {
		t.Errorf("warnings = %q", warnings)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"node name", cfg.NodeName, "win-host"},
		{"healthz", cfg.HealthzBindAddress, "0.0.0.0:10256"},
		{"metrics", cfg.MetricsBindAddress, "127.0.0.1:10249"},
		{"sync", cfg.SyncPeriod, 30 * time.Second},
		{"min sync", cfg.MinSyncPeriod, time.Second},
		{"config sync", cfg.ConfigSyncPeriod, 15 * time.Minute},
		{"mode", string(cfg.Source.Mode), "kernelspace"},
		{"root endpoint", cfg.Winkernel.RootHNSEndpointName, "cbr0"},
		{"network from KUBE_NETWORK", cfg.Winkernel.NetworkName, "l2bridge"},
		{"qps", cfg.QPS, float32(5)},
		{"burst", cfg.Burst, 10},
		{"content type", cfg.ContentType, "application/vnd.kubernetes.protobuf"},
		{"debug endpoint on loopback metrics", cfg.DebugEndpoint, true},
		{"drift repair", cfg.DriftRepairPeriod, DefaultDriftRepairPeriod},
		{"heap floor", cfg.HeapFloor.Value(), int64(48 << 20)},
		{"state file", cfg.StateFile, DefaultStateFile()},
		{"takeover token", cfg.Takeover, ""},
		{"external IPs on node addresses", cfg.RefuseNodeExternalIPs, false},
		{"hns endpoint", cfg.HNS.Endpoint, ""},
		{"backend cap", cfg.HNS.MaxBackendsPerLB, 0},
		{"WinDSR", cfg.FeatureGates.Enabled(WinDSR), true},
		{"WinOverlay", cfg.FeatureGates.Enabled(WinOverlay), true},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestWindowsFlags(t *testing.T) {
	cfg, _ := mustParse(t, nil,
		"--network-name=vxlan0", "--source-vip=10.244.3.2", "--enable-dsr", "--root-hnsendpoint-name=ext",
		"--forward-healthcheck-vip", "--hostname-override= Node-A ", "--cluster-cidr=10.244.0.0/16,fd00::/56",
		"--iptables-sync-period=20s", "--iptables-min-sync-period=0", "--kubeconfig=/k/config", "--master=https://127.0.0.1:6443",
		"--proxy-mode=kernelspace", "--feature-gates=WinDSR=true,WinOverlay=true", "-v=4")
	w := cfg.Winkernel
	if w.NetworkName != "vxlan0" || w.SourceVIP != "10.244.3.2" || !w.EnableDSR || w.RootHNSEndpointName != "ext" || !w.ForwardHealthCheckVIP {
		t.Errorf("winkernel = %+v", w)
	}
	if cfg.NodeName != "node-a" {
		t.Errorf("node name = %q", cfg.NodeName)
	}
	if len(cfg.ClusterCIDRs) != 2 || cfg.ClusterCIDRs[1] != "fd00::/56" {
		t.Errorf("cluster CIDRs = %q", cfg.ClusterCIDRs)
	}
	if cfg.SyncPeriod != 20*time.Second || cfg.MinSyncPeriod != 0 {
		t.Errorf("periods = %v / %v", cfg.SyncPeriod, cfg.MinSyncPeriod)
	}
	if cfg.Kubeconfig != "/k/config" || cfg.Master != "https://127.0.0.1:6443" {
		t.Errorf("client = %q %q", cfg.Kubeconfig, cfg.Master)
	}
	if cfg.Logging.Verbosity != 4 {
		t.Errorf("verbosity = %d", cfg.Logging.Verbosity)
	}
}

func TestProxyModeOnlyKernelspace(t *testing.T) {
	for _, mode := range []string{"iptables", "ipvs", "nftables", "userspace", "bogus"} {
		_, _, _, _, err := parse(t, kubeNetwork, "--proxy-mode="+mode)
		wantError(t, err, `hnsproxy implements only "kernelspace"`)
		wantError(t, err, mode)
	}
	// A config file's Linux mode is the Linux nodes' (a shared kube-proxy
	// ConfigMap): kernelspace, with a warning naming it. Any other mode in
	// the file is still an error.
	cfg, warnings := mustParse(t, nil, "--config=testdata/iptables-mode.yaml")
	if cfg.Source.Mode != ProxyModeKernelspace || !slices.ContainsFunc(warnings, func(w string) bool { return strings.Contains(w, `mode "iptables"`) }) {
		t.Errorf("config file with mode iptables: mode %q, warnings %q; want kernelspace and a warning naming iptables", cfg.Source.Mode, warnings)
	}
	dir := t.TempDir()
	for _, mode := range []string{"userspace", "bogus"} {
		file := filepath.Join(dir, mode+".yaml")
		if err := os.WriteFile(file, []byte("apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: "+mode+"\nwinkernel:\n  networkName: l2bridge\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, _, _, _, err := parse(t, nil, "--config="+file)
		wantError(t, err, `hnsproxy implements only "kernelspace"`)
	}
}

func TestSyncPeriodAliases(t *testing.T) {
	cfg, _ := mustParse(t, kubeNetwork, "--sync-period=1m", "--min-sync-period=5s")
	if cfg.SyncPeriod != time.Minute || cfg.MinSyncPeriod != 5*time.Second {
		t.Errorf("periods = %v / %v", cfg.SyncPeriod, cfg.MinSyncPeriod)
	}
	cfg, _ = mustParse(t, kubeNetwork, "--sync-period=1m", "--iptables-sync-period=1m")
	if cfg.SyncPeriod != time.Minute {
		t.Errorf("sync = %v", cfg.SyncPeriod)
	}
	_, _, _, _, err := parse(t, kubeNetwork, "--sync-period=1m", "--iptables-sync-period=2m")
	wantError(t, err, "disagree")
	_, _, _, _, err = parse(t, kubeNetwork, "--sync-period=1s", "--min-sync-period=5s")
	wantError(t, err, "minSyncPeriod")
	_, _, _, _, err = parse(t, kubeNetwork, "--sync-period=0")
	wantError(t, err, "syncPeriod")
}

func TestLinuxOnlyFlagsWarn(t *testing.T) {
	args := []string{"--masquerade-all", "--conntrack-max-per-core=0", "--ipvs-scheduler=rr", "--oom-score-adj=-998",
		"--iptables-masquerade-bit=14", "--detect-local-mode=ClusterCIDR", "--nodeport-addresses=primary", "--conntrack-tcp-timeout-established=1h"}
	cfg, warnings := mustParse(t, kubeNetwork, args...)
	if cfg == nil {
		t.Fatal("no config")
	}
	for _, a := range args {
		name := strings.SplitN(strings.TrimPrefix(a, "--"), "=", 2)[0]
		wantWarning(t, warnings, "--"+name+" is Linux-only")
	}
	if len(warnings) != len(args) {
		t.Errorf("%d warnings for %d flags: %q", len(warnings), len(args), warnings)
	}
	_, _, _, _, err := parse(t, kubeNetwork, "--init-only")
	wantError(t, err, "not implemented on Windows")
}

// --cleanup and --windows-service are modes of the run, not of the proxy:
// --cleanup is carried to the daemon, and --windows-service is read before
// Complete (Options.WindowsService). kube-proxy reads --windows-service before
// it loads --config (server.go RunE: initForOS, then Complete), so the flag
// decides with or without a file and the file's windowsRunAsService alone
// never makes a service; hnsproxy warns about such a file.
func TestCleanupAndWindowsServiceModes(t *testing.T) {
	o, _, cfg, _, err := parse(t, kubeNetwork, "--cleanup")
	if err != nil || !cfg.Cleanup || o.WindowsService() {
		t.Errorf("--cleanup: %v, Cleanup %v WindowsService %v", err, cfg.Cleanup, o.WindowsService())
	}
	o, _, cfg, warnings, err := parse(t, kubeNetwork, "--windows-service")
	if err != nil || !o.WindowsService() || cfg.Cleanup || len(warnings) != 0 {
		t.Errorf("--windows-service: %v, WindowsService %v Cleanup %v warnings %q", err, o.WindowsService(), cfg.Cleanup, warnings)
	}
	o, _, cfg, _, err = parse(t, kubeNetwork)
	if err != nil || o.WindowsService() || cfg.Cleanup {
		t.Errorf("no flags: %v, WindowsService %v Cleanup %v", err, o.WindowsService(), cfg.Cleanup)
	}

	const head = "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nwinkernel:\n  networkName: cbr0\n"
	for _, c := range []struct {
		name, file string
		flag, want bool
		warning    string
	}{
		{"flag over a file without the field", head, true, true, ""},
		{"flag over a file with the field", head + "windowsRunAsService: true\n", true, true, ""},
		{"the file's field alone", head + "windowsRunAsService: true\n", false, false, "windowsRunAsService in the config file does not run hnsproxy as a Windows service"},
	} {
		file := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(file, []byte(c.file), 0o600); err != nil {
			t.Fatal(err)
		}
		args := []string{"--config=" + file}
		if c.flag {
			args = append(args, "--windows-service")
		}
		o, _, _, warnings, err := parse(t, nil, args...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if o.WindowsService() != c.want {
			t.Errorf("%s: WindowsService %v, want %v (kube-proxy: the flag decides)", c.name, o.WindowsService(), c.want)
		}
		if c.warning != "" {
			wantWarning(t, warnings, c.warning)
		} else if len(warnings) != 0 {
			t.Errorf("%s: warnings %q", c.name, warnings)
		}
	}
}

func TestKubeadmWindowsConfigFile(t *testing.T) {
	cfg, warnings := mustParse(t, nil, "--config=testdata/kubeadm-windows-overlay.yaml", "--hostname-override=win-1")
	if len(warnings) != 0 {
		t.Errorf("warnings = %q", warnings)
	}
	w := cfg.Winkernel
	if w.NetworkName != "vxlan0" || w.SourceVIP != "10.244.3.2" || !w.EnableDSR || w.RootHNSEndpointName != "cbr0" {
		t.Errorf("winkernel = %+v", w)
	}
	if cfg.Kubeconfig != `C:\var\lib\kube-proxy\kubeconfig.conf` {
		t.Errorf("kubeconfig = %q", cfg.Kubeconfig)
	}
	// kubeadm's zero values mean defaults; a bare IP gets kube-proxy's port.
	if cfg.SyncPeriod != 30*time.Second || cfg.MinSyncPeriod != time.Second || cfg.QPS != 5 || cfg.Burst != 10 {
		t.Errorf("defaults not applied: %v %v %v %v", cfg.SyncPeriod, cfg.MinSyncPeriod, cfg.QPS, cfg.Burst)
	}
	if cfg.HealthzBindAddress != "0.0.0.0:10256" || cfg.MetricsBindAddress != "0.0.0.0:10249" {
		t.Errorf("bind = %q %q", cfg.HealthzBindAddress, cfg.MetricsBindAddress)
	}
	if cfg.DebugEndpoint {
		t.Error("debug endpoint on 0.0.0.0 without --enable-debug-endpoint")
	}
	if cfg.ClusterCIDRs[0] != "10.244.0.0/16" || cfg.NodeName != "win-1" {
		t.Errorf("cidrs %q node %q", cfg.ClusterCIDRs, cfg.NodeName)
	}
}

func TestJSONConfigFile(t *testing.T) {
	cfg, _ := mustParse(t, nil, "--config=testdata/l2bridge-tuned.json")
	if cfg.NodeName != "win-node-1" || cfg.SyncPeriod != 45*time.Second || cfg.MinSyncPeriod != 2*time.Second ||
		cfg.ConfigSyncPeriod != 10*time.Minute || cfg.QPS != 50 || cfg.Burst != 100 || !cfg.Winkernel.ForwardHealthCheckVIP ||
		len(cfg.ClusterCIDRs) != 2 || cfg.Logging.Verbosity != 2 {
		t.Errorf("config = %+v", cfg)
	}
}

func TestConfigFileWinsOverFlagsExceptHostnameAndLogging(t *testing.T) {
	cfg, warnings := mustParse(t, nil, "--config=testdata/kubeadm-windows-overlay.yaml",
		"--network-name=other", "--enable-dsr=false", "--metrics-bind-address=127.0.0.1:9999", "-v=6", "--hostname-override=flag-node")
	if cfg.Winkernel.NetworkName != "vxlan0" || !cfg.Winkernel.EnableDSR || cfg.MetricsBindAddress != "0.0.0.0:10249" {
		t.Errorf("flags overrode the file: %+v %q", cfg.Winkernel, cfg.MetricsBindAddress)
	}
	if cfg.Logging.Verbosity != 6 || cfg.NodeName != "flag-node" {
		t.Errorf("verbosity %d node %q: logging and hostname flags must win", cfg.Logging.Verbosity, cfg.NodeName)
	}
	for _, f := range []string{"network-name", "enable-dsr", "metrics-bind-address"} {
		wantWarning(t, warnings, "--"+f+" is ignored because --config is set")
	}
}

func TestUnknownFieldIsAWarning(t *testing.T) {
	cfg, warnings := mustParse(t, nil, "--config=testdata/unknown-field.yaml")
	wantWarning(t, warnings, "lenient decoding")
	wantWarning(t, warnings, "dsrMode")
	if cfg.Winkernel.NetworkName != "l2bridge" || !cfg.Winkernel.EnableDSR {
		t.Errorf("winkernel = %+v", cfg.Winkernel)
	}
}

func TestBadConfigFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := map[string]struct{ path, want string }{
		"missing":    {filepath.Join(dir, "nope.yaml"), "reading config file"},
		"wrong kind": {"testdata/wrong-kind.yaml", "decoding"},
		"not yaml":   {write("bad.yaml", "kind: [unclosed\n"), "decoding"},
		"no kind":    {write("nokind.yaml", "mode: kernelspace\n"), "decoding"},
		"bad type":   {write("badtype.yaml", "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nwinkernel:\n  enableDSR: maybe\n"), "decoding"},
		"port 0":     {write("port0.yaml", "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nwinkernel: {networkName: x}\nhealthzBindAddress: 0.0.0.0:0\n"), "must be a valid port"},
		"bad period": {write("period.yaml", "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nwinkernel: {networkName: x}\niptables: {syncPeriod: 1s, minSyncPeriod: 1m}\n"), "minSyncPeriod"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, _, _, _, err := parse(t, nil, "--config="+c.path)
			wantError(t, err, c.want)
		})
	}
}

func TestFeatureGates(t *testing.T) {
	_, warnings := mustParse(t, kubeNetwork, "--feature-gates=WinDSR=true,SomeKubeletGate=true")
	wantWarning(t, warnings, `"SomeKubeletGate" does not affect hnsproxy`)
	_, _, _, _, err := parse(t, kubeNetwork, "--feature-gates=WinDSR=false")
	wantError(t, err, "WinDSR")
	_, _, _, _, err = parse(t, kubeNetwork, "--feature-gates=WinDSR=notabool")
	if err == nil {
		t.Fatal("a malformed gate value parsed")
	}
	// kube-proxy 1.37's AllowServiceExternalIPs: on by default, off on request.
	cfg, _ := mustParse(t, kubeNetwork)
	if !cfg.FeatureGates.Enabled(AllowServiceExternalIPs) {
		t.Error("AllowServiceExternalIPs is off by default")
	}
	cfg, warnings = mustParse(t, kubeNetwork, "--feature-gates=AllowServiceExternalIPs=false")
	if cfg.FeatureGates.Enabled(AllowServiceExternalIPs) {
		t.Error("--feature-gates=AllowServiceExternalIPs=false left it on")
	}
	for _, w := range warnings {
		if strings.Contains(w, "AllowServiceExternalIPs") && strings.Contains(w, "does not affect") {
			t.Errorf("AllowServiceExternalIPs treated as unknown: %s", w)
		}
	}
}

// kube-proxy 1.37 registers client-go's gates in its own (pkg/features:
// clientfeatures.AddVersionedFeaturesToExistingFeatureGates and
// ReplaceFeatureGates), so --feature-gates=WatchListClient=false is how an
// operator stops streamed lists against an apiserver that mishandles them.
// hnsproxy must know those names and hand the result to client-go.
func TestClientGoGatesAreKubeProxys(t *testing.T) {
	cfg, warnings := mustParse(t, kubeNetwork, "--feature-gates=WatchListClient=false")
	for _, w := range warnings {
		if strings.Contains(w, "does not affect") {
			t.Errorf("WatchListClient treated as unknown: %s", w)
		}
	}
	gates := ClientGates(cfg.FeatureGates)
	if gates.Enabled(clientfeatures.WatchListClient) {
		t.Error("--feature-gates=WatchListClient=false leaves it on for client-go")
	}
	cfg, _ = mustParse(t, kubeNetwork)
	if !ClientGates(cfg.FeatureGates).Enabled(clientfeatures.WatchListClient) {
		t.Error("WatchListClient is off by default; client-go 0.37 has it on")
	}
}

// PreferSameTrafficDistribution is GA and locked on in kube-proxy v1.37.2,
// and hnsproxy applies the node hints it governs: flags copied from an older
// kube-proxy that turn it off must stop the start, as they stop kube-proxy's,
// not be waved through as a gate that "does not affect hnsproxy".
func TestPreferSameTrafficDistributionIsLockedOn(t *testing.T) {
	_, _, _, _, err := parse(t, kubeNetwork, "--feature-gates=PreferSameTrafficDistribution=false")
	wantError(t, err, "PreferSameTrafficDistribution")
	cfg, warnings := mustParse(t, kubeNetwork, "--feature-gates=PreferSameTrafficDistribution=true")
	if !cfg.FeatureGates.Enabled(PreferSameTrafficDistribution) {
		t.Error("PreferSameTrafficDistribution is off")
	}
	for _, w := range warnings {
		if strings.Contains(w, "does not affect") {
			t.Errorf("PreferSameTrafficDistribution treated as unknown: %s", w)
		}
	}
}

// Each gate hnsproxy registers has the stage, default and lock kube-proxy
// v1.37.2 gives it (pkg/features/kube_features.go), which is what
// kubernetes_feature_enabled's stage label reports (GA's is "").
func TestFeatureGateStagesAreKubeProxys(t *testing.T) {
	want := map[string]struct {
		stage      string
		on, locked bool
	}{
		string(WinDSR):                        {string(featuregate.GA), true, true},
		string(WinOverlay):                    {string(featuregate.GA), true, true},
		string(AllowServiceExternalIPs):       {string(featuregate.GA), true, false},
		string(PreferSameTrafficDistribution): {string(featuregate.GA), true, true},
	}
	all := newFeatureGate().GetAll()
	for name, w := range want {
		got, ok := all[featuregate.Feature(name)]
		if !ok {
			t.Errorf("%s is not registered", name)
			continue
		}
		if string(got.PreRelease) != w.stage || got.Default != w.on || got.LockToDefault != w.locked {
			t.Errorf("%s: stage %q default %v locked %v; kube-proxy v1.37.2: %q %v %v", name, got.PreRelease, got.Default, got.LockToDefault, w.stage, w.on, w.locked)
		}
	}
	if len(proxyFeatureGates) != len(want) {
		t.Errorf("%d proxy gates registered, %d checked: add the new one here with kube-proxy's stage", len(proxyFeatureGates), len(want))
	}
}

func TestNetworkNameRequired(t *testing.T) {
	_, _, _, _, err := parse(t, nil)
	wantError(t, err, "KUBE_NETWORK")
	cfg, _ := mustParse(t, map[string]string{"KUBE_NETWORK": "env-net"}, "--network-name=flag-net")
	if cfg.Winkernel.NetworkName != "flag-net" {
		t.Errorf("network = %q: the flag must win over KUBE_NETWORK", cfg.Winkernel.NetworkName)
	}
}

func TestHNSEndpoint(t *testing.T) {
	env := map[string]string{"KUBE_NETWORK": "n", "HNS_ENDPOINT": "unix:///run/hnssim.sock"}
	cfg, _ := mustParse(t, env)
	if p, ok := cfg.HNS.UnixSocket(); !ok || p != "/run/hnssim.sock" {
		t.Errorf("socket = %q %v", p, ok)
	}
	cfg, _ = mustParse(t, env, "--hns-endpoint=sim", "--hns-sim-profile=ws2019")
	if !cfg.HNS.IsSim() || cfg.HNS.SimProfile != "ws2019" {
		t.Errorf("hns = %+v: the flag must win over HNS_ENDPOINT", cfg.HNS)
	}
	for _, bad := range []string{"tcp://127.0.0.1:1", "unix://", "unix://relative/path", "npipe"} {
		_, _, _, _, err := parse(t, kubeNetwork, "--hns-endpoint="+bad)
		wantError(t, err, "hnsEndpoint")
	}
	_, _, _, _, err := parse(t, kubeNetwork, "--max-backends-per-lb=-1")
	wantError(t, err, "maxBackendsPerLB")
	_, _, _, _, err = parse(t, kubeNetwork, "--drift-repair-period=-1s")
	wantError(t, err, "driftRepairPeriod")
}

func TestHeapFloor(t *testing.T) {
	for flag, want := range map[string]int64{"--gc-heap-floor=128Mi": 128 << 20, "--gc-heap-floor=0": 0, "--gc-heap-floor=100M": 100e6} {
		cfg, _ := mustParse(t, kubeNetwork, flag)
		if got := cfg.HeapFloor.Value(); got != want {
			t.Errorf("%s: floor %d bytes, want %d", flag, got, want)
		}
	}
	_, _, _, _, err := parse(t, kubeNetwork, "--gc-heap-floor=-1Mi")
	wantError(t, err, "gcHeapFloor")
	_, _, _, _, err = parse(t, kubeNetwork, "--gc-heap-floor=lots")
	wantError(t, err, "gc-heap-floor")
}

func TestBindAddresses(t *testing.T) {
	cfg, _ := mustParse(t, kubeNetwork, "--healthz-port=0", "--metrics-bind-address=0.0.0.0")
	if cfg.HealthzBindAddress != "" || cfg.MetricsBindAddress != "0.0.0.0:10249" || cfg.DebugEndpoint {
		t.Errorf("healthz %q metrics %q debug %v", cfg.HealthzBindAddress, cfg.MetricsBindAddress, cfg.DebugEndpoint)
	}
	cfg, _ = mustParse(t, kubeNetwork, "--metrics-bind-address=0.0.0.0:9100", "--enable-debug-endpoint")
	if cfg.MetricsBindAddress != "0.0.0.0:9100" || !cfg.DebugEndpoint {
		t.Errorf("metrics %q debug %v", cfg.MetricsBindAddress, cfg.DebugEndpoint)
	}
	cfg, _ = mustParse(t, kubeNetwork, "--metrics-port=0", "--healthz-bind-address=[::1]:10256")
	if cfg.MetricsBindAddress != "" || cfg.HealthzBindAddress != "[::1]:10256" {
		t.Errorf("metrics %q healthz %q", cfg.MetricsBindAddress, cfg.HealthzBindAddress)
	}
	// Port 0 too, as kube-proxy's validation refuses it ("must be a valid
	// port"): written to mean "off", it would serve on a random port.
	for _, bad := range []string{"--healthz-bind-address=host:1", "--metrics-bind-address=1.2.3.4:99999", "--bind-address=nope", "--source-vip=10.0.0",
		"--healthz-bind-address=0.0.0.0:0", "--metrics-bind-address=[::]:0"} {
		if _, _, _, _, err := parse(t, kubeNetwork, bad); err == nil {
			t.Errorf("%s parsed", bad)
		}
	}
}

// An empty address flag (a template that expands to nothing) keeps the
// default, as kube-proxy's IPVar and IPPortVar do (pkg/util/flag/flags.go:
// Set("") stores nothing), whatever kube-proxy's help says about disabling;
// a later value of the same flag applies (kube-proxy panics there). In the
// file an empty address is defaulted too (v1alpha1 defaulting), so only the
// deprecated --healthz-port=0 / --metrics-port=0 turn a server off.
func TestEmptyAddressFlagsKeepDefaults(t *testing.T) {
	cfg, _ := mustParse(t, kubeNetwork, "--bind-address=", "--healthz-bind-address=", "--metrics-bind-address=", "--source-vip=")
	if cfg.BindAddress != "0.0.0.0" || cfg.HealthzBindAddress != "0.0.0.0:10256" || cfg.MetricsBindAddress != "127.0.0.1:10249" || cfg.Winkernel.SourceVIP != "" {
		t.Errorf("bind %q healthz %q metrics %q source VIP %q; kube-proxy keeps 0.0.0.0, 0.0.0.0:10256, 127.0.0.1:10249, \"\"",
			cfg.BindAddress, cfg.HealthzBindAddress, cfg.MetricsBindAddress, cfg.Winkernel.SourceVIP)
	}
	cfg, _ = mustParse(t, kubeNetwork, "--bind-address=", "--bind-address=10.0.0.5", "--healthz-bind-address=", "--healthz-bind-address=10.0.0.5")
	if cfg.BindAddress != "10.0.0.5" || cfg.HealthzBindAddress != "10.0.0.5:10256" {
		t.Errorf("empty, then a value: bind %q healthz %q", cfg.BindAddress, cfg.HealthzBindAddress)
	}
	file := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(file, []byte("apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nbindAddress: \"\"\nhealthzBindAddress: \"\"\nmetricsBindAddress: \"\"\nwinkernel: {networkName: cbr0}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, _ = mustParse(t, nil, "--config="+file)
	if cfg.BindAddress != "0.0.0.0" || cfg.HealthzBindAddress != "0.0.0.0:10256" || cfg.MetricsBindAddress != "127.0.0.1:10249" {
		t.Errorf("empty in the file: bind %q healthz %q metrics %q; kube-proxy defaults them", cfg.BindAddress, cfg.HealthzBindAddress, cfg.MetricsBindAddress)
	}
}

// kube-proxy on Windows validates clusterCIDR only under a detectLocalMode
// ClusterCIDR set explicitly (validation.go; Windows does not default to
// it), and never uses it, so no value stops hnsproxy: entries are
// trimmed, and what it cannot use for its IP families (not a CIDR, a second
// CIDR of a family) is left out with a warning.
func TestClusterCIDRs(t *testing.T) {
	for _, c := range []struct {
		value   string
		want    []string
		warning string
	}{
		{"10.244.0.0/16", []string{"10.244.0.0/16"}, ""},
		{"10.244.0.0/16,fd00::/56", []string{"10.244.0.0/16", "fd00::/56"}, ""},
		{"10.244.0.0/16, fd00:10:244::/56", []string{"10.244.0.0/16", "fd00:10:244::/56"}, ""},
		{"fd00::/56,10.244.0.0/16,", []string{"fd00::/56", "10.244.0.0/16"}, ""},
		{"10.244.0.0/16,10.245.0.0/16", []string{"10.244.0.0/16"}, `"10.245.0.0/16" is a second CIDR of the IP family of "10.244.0.0/16"; ignored`},
		{"10.0.0.0/8,fd00::/64,10.1.0.0/16", []string{"10.0.0.0/8", "fd00::/64"}, `"10.1.0.0/16" is a second CIDR`},
		{"10.0.0.0/33", nil, `"10.0.0.0/33" is not a CIDR; ignored`},
		{"pods,fd00::/64", []string{"fd00::/64"}, `"pods" is not a CIDR`},
	} {
		_, _, cfg, warnings, err := parse(t, kubeNetwork, "--cluster-cidr="+c.value)
		if err != nil {
			t.Errorf("--cluster-cidr=%s refused: %v; kube-proxy on Windows starts", c.value, err)
			continue
		}
		if strings.Join(cfg.ClusterCIDRs, " ") != strings.Join(c.want, " ") {
			t.Errorf("--cluster-cidr=%s: CIDRs %q, want %q", c.value, cfg.ClusterCIDRs, c.want)
		}
		if c.warning != "" {
			wantWarning(t, warnings, c.warning)
		} else if len(warnings) != 0 {
			t.Errorf("--cluster-cidr=%s: warnings %q", c.value, warnings)
		}
	}
}

// --write-config-to writes what kube-proxy's Complete leaves (options.go
// Complete, then Run's writeConfigFile): the flags' configuration with the
// Windows defaults and --hostname-override applied, and it loads back.
func TestWriteConfigRoundTrip(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.yaml")
	cfg, _ := mustParse(t, kubeNetwork, "--network-name=vxlan0", "--source-vip=10.0.0.2", "--enable-dsr", "--sync-period=45s", "--hostname-override= Win-1 ", "--write-config-to="+out)
	if cfg.WriteConfigTo != out {
		t.Errorf("WriteConfigTo = %q", cfg.WriteConfigTo)
	}
	data, err := EncodeConfig(cfg.Source)
	if err != nil {
		t.Fatal(err)
	}
	back, warnings, err := DecodeConfig(data)
	if err != nil || len(warnings) != 0 {
		t.Fatalf("decode: %v %q\n%s", err, warnings, data)
	}
	if back.Winkernel.NetworkName != "vxlan0" || back.Winkernel.SourceVip != "10.0.0.2" || !back.Winkernel.EnableDSR || back.IPTables.SyncPeriod.Duration != 45*time.Second {
		t.Errorf("round trip lost settings:\n%s", data)
	}
	if back.HostnameOverride != "win-1" || back.Mode != ProxyModeKernelspace || back.Winkernel.RootHnsEndpointName != "cbr0" {
		t.Errorf("hostnameOverride %q, mode %q, rootHnsEndpointName %q; kube-proxy writes win-1, kernelspace, cbr0:\n%s",
			back.HostnameOverride, back.Mode, back.Winkernel.RootHnsEndpointName, data)
	}
}

// kube-proxy validates before it writes, but its validation has no
// winkernel check: --write-config-to needs no network name. KUBE_NETWORK is
// read when the proxy starts, so it is not written either.
func TestWriteConfigNeedsNoNetworkName(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.yaml")
	cfg, _ := mustParse(t, nil, "--write-config-to="+out)
	if cfg.Source.Winkernel.NetworkName != "" {
		t.Errorf("network name %q written without one configured", cfg.Source.Winkernel.NetworkName)
	}
	cfg, _ = mustParse(t, kubeNetwork, "--write-config-to="+out)
	if cfg.Source.Winkernel.NetworkName != "" || cfg.Winkernel.NetworkName != "l2bridge" {
		t.Errorf("KUBE_NETWORK: written %q, run with %q; want it only in the run", cfg.Source.Winkernel.NetworkName, cfg.Winkernel.NetworkName)
	}
	_, _, _, _, err := parse(t, nil, "--write-config-to="+out, "--iptables-sync-period=0")
	wantError(t, err, "syncPeriod")
}

func TestFrontendOwnershipFlags(t *testing.T) {
	cfg, _ := mustParse(t, kubeNetwork, "--takeover=migration-2026-11", "--refuse-node-external-ips")
	if cfg.Takeover != "migration-2026-11" || !cfg.RefuseNodeExternalIPs {
		t.Errorf("takeover %q, refuse node external IPs %v", cfg.Takeover, cfg.RefuseNodeExternalIPs)
	}
}

// --hns-modify-load-balancer takes auto (the default), enabled or disabled,
// with or without a config file (it is hnsproxy's own); anything else is
// refused, naming the setting and the valid values.
func TestHNSModifyLoadBalancer(t *testing.T) {
	cfg, _ := mustParse(t, kubeNetwork)
	if cfg.HNS.ModifyLoadBalancer != reconciler.ModifyAuto {
		t.Errorf("default %q, want auto", cfg.HNS.ModifyLoadBalancer)
	}
	for _, mode := range []reconciler.ModifyMode{reconciler.ModifyEnabled, reconciler.ModifyDisabled, reconciler.ModifyAuto} {
		cfg, _ := mustParse(t, kubeNetwork, "--hns-modify-load-balancer="+string(mode))
		if cfg.HNS.ModifyLoadBalancer != mode {
			t.Errorf("--hns-modify-load-balancer=%s gave %q", mode, cfg.HNS.ModifyLoadBalancer)
		}
	}
	for _, bad := range []string{"on", "", "Enabled"} {
		_, _, _, _, err := parse(t, kubeNetwork, "--hns-modify-load-balancer="+bad)
		wantError(t, err, "hnsModifyLoadBalancer")
		wantError(t, err, `"auto", "enabled", "disabled"`)
	}
}

// /configz shows Source as kube-proxy shows its configuration: a
// KubeProxyConfiguration with its apiVersion and kind (server.go sets them
// on what it converts), from the flags as from a file.
func TestSourceNamesItsKind(t *testing.T) {
	file := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(file, []byte("apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nwinkernel: {networkName: cbr0}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{nil, {"--config=" + file}} {
		cfg, _ := mustParse(t, kubeNetwork, args...)
		if cfg.Source.APIVersion != "kubeproxy.config.k8s.io/v1alpha1" || cfg.Source.Kind != "KubeProxyConfiguration" {
			t.Errorf("%q: apiVersion %q kind %q, want kubeproxy.config.k8s.io/v1alpha1 KubeProxyConfiguration", args, cfg.Source.APIVersion, cfg.Source.Kind)
		}
	}
}

// kube-proxy validates the settings only its Linux proxiers read on Windows
// too, and refuses to start on a bad one (validation.go: detectLocalMode,
// clusterCIDR under detectLocalMode ClusterCIDR, nodePortAddresses,
// oomScoreAdj, conntrack, the masquerade bits, showHiddenMetricsForVersion).
// hnsproxy reads none of them for anything but clusterCIDR's IP families,
// so it starts, as a config file shared with Linux nodes suggests.
func TestSettingsOnlyLinuxReadsDoNotStopHNSProxy(t *testing.T) {
	file := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(file, []byte(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
winkernel: {networkName: cbr0}
detectLocalMode: ClusterCIDR
clusterCIDR: pods
nodePortAddresses: [nodes]
oomScoreAdj: 5000
conntrack: {maxPerCore: -1}
iptables: {masqueradeBit: 99}
showHiddenMetricsForVersion: "1.2"
`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, warnings := mustParse(t, nil, "--config="+file)
	wantWarning(t, warnings, `clusterCIDR "pods" is not a CIDR; ignored`)
	_, warnings = mustParse(t, kubeNetwork, "--detect-local-mode=Bogus", "--nodeport-addresses=nodes", "--oom-score-adj=5000", "--show-hidden-metrics-for-version=1.2")
	wantWarning(t, warnings, "--detect-local-mode is Linux-only")
}

// kube-proxy 1.37 takes nodePortAddresses as a list of CIDRs and the
// keywords primary, localhost and all, combined (1.36 took primary alone).
// A config file or flags shared with 1.37's Linux nodes starts hnsproxy,
// which does not read the setting, as kube-proxy on Windows does not.
func TestKubeProxy137NodePortAddressesStart(t *testing.T) {
	file := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(file, []byte(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
winkernel: {networkName: cbr0}
nodePortAddresses: [primary, localhost, 10.0.0.0/8]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, _ := mustParse(t, nil, "--config="+file)
	if cfg.Winkernel.NetworkName != "cbr0" {
		t.Errorf("network %q, want cbr0 from the file", cfg.Winkernel.NetworkName)
	}
	_, warnings := mustParse(t, kubeNetwork, "--nodeport-addresses=primary,all")
	wantWarning(t, warnings, "--nodeport-addresses")
}

// TestCalicoVXLANStartScriptArgs: the arguments sig-windows-tools'
// hostprocess/calico/kube-proxy/start.ps1 (10e8dc7362a1) builds on Calico's
// VXLAN network, with KUBE_NETWORK=Calico: the source VIP is Calico_ep's
// address, and the feature gates carry IPv6DualStack=false, a gate
// Kubernetes no longer has, which hnsproxy accepts and ignores, so the
// script's arguments start it.
func TestCalicoVXLANStartScriptArgs(t *testing.T) {
	cfg, _ := mustParse(t, map[string]string{"KUBE_NETWORK": "Calico"},
		"--hostname-override=win-calico", "--v=2", "--proxy-mode=kernelspace",
		"--kubeconfig=C:/hpc/var/lib/kube-proxy/kubeconfig.conf", "--enable-dsr=true",
		"--source-vip=10.244.5.2", "--feature-gates=WinDSR=true,WinOverlay=true,IPv6DualStack=false")
	w := cfg.Winkernel
	if w.NetworkName != "Calico" || w.SourceVIP != "10.244.5.2" || !w.EnableDSR {
		t.Errorf("winkernel = %+v, want network Calico, source VIP 10.244.5.2, DSR", w)
	}
	if cfg.NodeName != "win-calico" {
		t.Errorf("node name = %q", cfg.NodeName)
	}
}
