package options

import (
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"
	cliflag "k8s.io/component-base/cli/flag"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/kube-proxy/config/v1alpha1"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/reconciler"
)

// ProxyModeKernelspace is the only proxy mode hnsproxy implements.
const ProxyModeKernelspace v1alpha1.ProxyMode = "kernelspace"

// Flag section names, in --help order.
const (
	SectionKubeProxy = "kube-proxy"
	SectionWinkernel = "windows (winkernel)"
	SectionHNSProxy  = "hnsproxy"
	SectionLinuxOnly = "linux-only (accepted for compatibility, no effect)"
	SectionLogging   = "logging"
)

// Options is the parsed command line before it is merged with --config.
type Options struct {
	// ConfigFile is --config, a KubeProxyConfiguration v1alpha1 file.
	ConfigFile string
	// WriteConfigTo, when set, writes the configuration there and exits.
	WriteConfigTo string
	// Cleanup is --cleanup: delete the HNS objects hnsproxy owns and exit.
	Cleanup bool
	// InitOnly is a kube-proxy mode that is not implemented on Windows.
	InitOnly bool

	// flagConfig holds the values of the flags that map to KubeProxyConfiguration.
	flagConfig *v1alpha1.KubeProxyConfiguration

	// Flags that do not map one to one onto KubeProxyConfiguration.
	master           string
	hostnameOverride string
	clusterCIDRs     string
	healthzPort      int32
	metricsPort      int32
	syncPeriod       time.Duration
	minSyncPeriod    time.Duration

	// hnsproxy's own.
	hnsEndpoint         string
	hnsSimProfile       string
	maxBackendsPerLB    int
	osBugWorkarounds    string
	networkWaitTimeout  time.Duration
	hnsCallTimeout      time.Duration
	hnsListTimeout      time.Duration
	hnsModifyLB         string
	driftRepairPeriod   time.Duration
	stateFile           string
	cniConfDir          string
	cniBinDir           string
	takeover            string
	refuseNodeExtIPs    bool
	enableDebugEndpoint bool
	heapFloor           resource.QuantityValue

	// getenv reads the environment (KUBE_NETWORK, HNS_ENDPOINT); tests replace it.
	getenv func(string) string
	// hostname returns the host's name when --hostname-override is unset.
	hostname func() (string, error)
}

// NewOptions returns options holding kube-proxy's defaults.
func NewOptions() *Options {
	c := &v1alpha1.KubeProxyConfiguration{}
	SetDefaults(c)
	return &Options{
		flagConfig:         c,
		healthzPort:        ProxyHealthzPort,
		metricsPort:        ProxyStatusPort,
		hnsSimProfile:      DefaultSimProfile,
		networkWaitTimeout: DefaultNetworkWaitTimeout,
		osBugWorkarounds:   OSBugWorkaroundsAuto,
		hnsCallTimeout:     reconciler.DefaultCallTimeout,
		hnsListTimeout:     reconciler.DefaultListTimeout,
		hnsModifyLB:        string(reconciler.ModifyAuto),
		driftRepairPeriod:  DefaultDriftRepairPeriod,
		stateFile:          DefaultStateFile(),
		cniConfDir:         DefaultCNIConfDir(),
		cniBinDir:          DefaultCNIBinDir(),
		heapFloor:          resource.QuantityValue{Quantity: resource.MustParse(DefaultHeapFloor)},
		getenv:             osGetenv,
		hostname:           osHostname,
	}
}

const ignoredWithConfig = " This parameter is ignored if a config file is specified by --config."

// AddFlags registers every flag in sections.
func (o *Options) AddFlags(fss *cliflag.NamedFlagSets) {
	c := o.flagConfig

	fs := fss.FlagSet(SectionKubeProxy)
	fs.StringVar(&o.ConfigFile, "config", o.ConfigFile, "The path to the configuration file (KubeProxyConfiguration, kubeproxy.config.k8s.io/v1alpha1).")
	fs.StringVar(&o.WriteConfigTo, "write-config-to", o.WriteConfigTo, "If set, write the configuration to this file and exit: the --config file if set, else the flags' (with --hostname-override applied either way).")
	fs.BoolVar(&o.Cleanup, "cleanup", o.Cleanup, "If true, delete the HNS load balancers and endpoints hnsproxy owns (those --state-file records, and the remote endpoints it names hnsproxy-remote-<IP>), never others, remove the state file, and exit.")
	fs.Var(cliflag.NewMapStringBool(&c.FeatureGates), "feature-gates", "A set of key=value pairs that describe feature gates. Options are:\n"+strings.Join(KnownFeatures(), "\n")+"\nWinDSR, WinOverlay and PreferSameTrafficDistribution (GA, locked on) are accepted; other Kubernetes gates are accepted and ignored."+ignoredWithConfig)
	fs.StringVar(&c.ClientConnection.Kubeconfig, "kubeconfig", c.ClientConnection.Kubeconfig, "Path to kubeconfig file with authorization information (the master location can be overridden by the master flag)."+ignoredWithConfig)
	fs.StringVar(&o.master, "master", o.master, "The address of the Kubernetes API server (overrides any value in kubeconfig).")
	fs.StringVar(&c.ClientConnection.ContentType, "kube-api-content-type", c.ClientConnection.ContentType, "Content type of requests sent to apiserver."+ignoredWithConfig)
	fs.Int32Var(&c.ClientConnection.Burst, "kube-api-burst", c.ClientConnection.Burst, "Burst to use while talking with kubernetes apiserver."+ignoredWithConfig)
	fs.Float32Var(&c.ClientConnection.QPS, "kube-api-qps", c.ClientConnection.QPS, "QPS to use while talking with kubernetes apiserver."+ignoredWithConfig)
	fs.StringVar(&o.hostnameOverride, "hostname-override", o.hostnameOverride, "If non-empty, will be used as the name of the Node that hnsproxy is running on. If unset, the node name is assumed to be the same as the node's hostname. Overrides the config file.")
	fs.Var(ipValue{&c.BindAddress}, "bind-address", "Overrides the proxy's idea of what its node's primary IP is (nothing binds to it). An empty value keeps the default."+ignoredWithConfig)
	fs.Var(ipPortValue{&c.HealthzBindAddress}, "healthz-bind-address", "The IP address and port for the health check server to serve on, defaulting to \"0.0.0.0:10256\". An empty value keeps the default, as in kube-proxy; --healthz-port=0 disables."+ignoredWithConfig)
	fs.Var(ipPortValue{&c.MetricsBindAddress}, "metrics-bind-address", "The IP address and port for the metrics server to serve on, defaulting to \"127.0.0.1:10249\". (Set to \"0.0.0.0:10249\" / \"[::]:10249\" to bind on all interfaces.) An empty value keeps the default, as in kube-proxy; --metrics-port=0 disables."+ignoredWithConfig)
	fs.BoolVar(&c.BindAddressHardFail, "bind-address-hard-fail", c.BindAddressHardFail, "If true, failure to bind the healthz or metrics port is fatal."+ignoredWithConfig)
	fs.BoolVar(&c.EnableProfiling, "profiling", c.EnableProfiling, "If true, serve /debug/pprof and /debug/flags/v (PUT a number to set the log verbosity) on the metrics server."+ignoredWithConfig)
	fs.StringVar(&c.ShowHiddenMetricsForVersion, "show-hidden-metrics-for-version", c.ShowHiddenMetricsForVersion, "The previous version for which you want to show hidden metrics (hnsproxy hides none)."+ignoredWithConfig)
	fs.Var(proxyModeValue{&c.Mode}, "proxy-mode", "Which proxy mode to use. hnsproxy implements only 'kernelspace' (the default); any other value is an error."+ignoredWithConfig)
	fs.StringVar(&o.clusterCIDRs, "cluster-cidr", o.clusterCIDRs, "The CIDR range of the pods in the cluster (a comma-separated dual-stack pair for dual-stack clusters). hnsproxy reads it only for the IP families it labels metrics with and listens for health checks on; a CIDR it cannot use is ignored with a warning, as kube-proxy on Windows does not read it."+ignoredWithConfig)
	fs.DurationVar(&c.IPTables.SyncPeriod.Duration, "iptables-sync-period", c.IPTables.SyncPeriod.Duration, "kube-proxy's name for the sync period, which on Windows sets the kernelspace proxy's too (see --sync-period)."+ignoredWithConfig)
	fs.DurationVar(&c.IPTables.MinSyncPeriod.Duration, "iptables-min-sync-period", c.IPTables.MinSyncPeriod.Duration, "kube-proxy's name for the minimum sync period, which on Windows sets the kernelspace proxy's too (see --min-sync-period)."+ignoredWithConfig)
	fs.DurationVar(&c.ConfigSyncPeriod.Duration, "config-sync-period", c.ConfigSyncPeriod.Duration, "How often configuration from the apiserver is refreshed. Must be greater than 0."+ignoredWithConfig)
	fs.Int32Var(&o.healthzPort, "healthz-port", o.healthzPort, "The port to bind the health check server. Use 0 to disable.")
	_ = fs.MarkDeprecated("healthz-port", "use --healthz-bind-address instead.")
	fs.Int32Var(&o.metricsPort, "metrics-port", o.metricsPort, "The port to bind the metrics server. Use 0 to disable.")
	_ = fs.MarkDeprecated("metrics-port", "use --metrics-bind-address instead.")
	fs.BoolVar(&c.WindowsRunAsService, "windows-service", c.WindowsRunAsService, "Enable Windows Service Control Manager API integration: run as a Windows service, stopping gracefully when the service is stopped or the host shuts down. Refused on other operating systems. Applies with --config too; the config file's windowsRunAsService does not start it (as in kube-proxy, which reads this flag before the file).")

	fs = fss.FlagSet(SectionWinkernel)
	fs.StringVar(&c.Winkernel.NetworkName, "network-name", c.Winkernel.NetworkName, "The name of the cluster's HNS network. Falls back to the KUBE_NETWORK environment variable."+ignoredWithConfig)
	fs.Var(ipValue{&c.Winkernel.SourceVip}, "source-vip", "The IP address of the source VIP for non-DSR. On overlay networks, when unset, hnsproxy reserves one through the node's CNI IPAM."+ignoredWithConfig)
	fs.BoolVar(&c.Winkernel.EnableDSR, "enable-dsr", c.Winkernel.EnableDSR, "If true, program DSR (Direct Server Return) load balancers for service VIPs."+ignoredWithConfig)
	fs.StringVar(&c.Winkernel.RootHnsEndpointName, "root-hnsendpoint-name", "cbr0", "The name of the HNS endpoint for the root namespace attached to l2bridge."+ignoredWithConfig)
	fs.BoolVar(&c.Winkernel.ForwardHealthCheckVip, "forward-healthcheck-vip", c.Winkernel.ForwardHealthCheckVip, "If true, forward the service VIP for the health check port."+ignoredWithConfig)

	fs = fss.FlagSet(SectionHNSProxy)
	fs.DurationVar(&o.syncPeriod, "sync-period", c.IPTables.SyncPeriod.Duration, "The maximum interval between syncs of HNS with the desired state (same setting as --iptables-sync-period). A sync without changes recomputes nothing; it retries what failed and starts a drift repair that is due."+ignoredWithConfig)
	fs.DurationVar(&o.minSyncPeriod, "min-sync-period", c.IPTables.MinSyncPeriod.Duration, "The minimum interval between syncs; 0 syncs on every change (same setting as --iptables-min-sync-period)."+ignoredWithConfig)
	fs.StringVar(&o.hnsEndpoint, "hns-endpoint", o.hnsEndpoint, "Where HNS is: empty for the real HNS (Windows), \"sim\" for an in-process simulator, or \"unix:///path/to/hnssim.sock\" for the hnssim service. Falls back to the HNS_ENDPOINT environment variable.")
	fs.StringVar(&o.hnsSimProfile, "hns-sim-profile", o.hnsSimProfile, "With --hns-endpoint=sim: the Windows build the simulator behaves like (ws2019, ws2019-2746, ws2022, ws2022-rtm, ws2022-kb5005619, ws2022-cap64, ws2025-15.4, ws2025; docs/simulator.md).")
	fs.IntVar(&o.maxBackendsPerLB, "max-backends-per-lb", o.maxBackendsPerLB, "The most backends one HNS load balancer gets; larger services get a stable per-node subset. 0 takes the cap from the Windows build ("+hnslb.DefaultBackendCapRule+"; the HNS version when the build is unknown) and lowers it to 64 if HNS refuses more. A value set here is never lowered.")
	fs.StringVar(&o.osBugWorkarounds, "os-bug-workarounds", o.osBugWorkarounds, "\"auto\": on a Windows build with a known dataplane bug, work around it (Windows Server 2022: no DSR for ClusterIP load balancers on l2bridge, local backends for NodePort load balancers on overlay), with a warning, a Node event and hnsproxy_os_bug_workaround. \"none\": never (a build whose fix you know is installed).")
	fs.DurationVar(&o.networkWaitTimeout, "hns-network-timeout", o.networkWaitTimeout, "How long to wait at start for the HNS network to exist (an overlay one with its provider address) before failing.")
	fs.DurationVar(&o.hnsCallTimeout, "hns-call-timeout", o.hnsCallTimeout, "The deadline of an HNS call on one object. HNS calls cannot be cancelled: one past its deadline is abandoned, reported (hnsproxy_hns_call_timeouts_total) and its object retried once it returns, while the rest of the node's programming goes on.")
	fs.DurationVar(&o.hnsListTimeout, "hns-list-timeout", o.hnsListTimeout, "The deadline of an HNS listing (drift repair, start, frontend conflicts), which costs about three HNS calls per object listed.")
	fs.StringVar(&o.hnsModifyLB, "hns-modify-load-balancer", o.hnsModifyLB, "How a load balancer update is made: \"auto\" modifies it in place where the HNS version can (15.5 and later) and switches to delete + create for the rest of the process the first time HNS shows it cannot; \"enabled\" always tries modify first (falling back to delete + create when it fails; on HNS 15.4 each modify is read back); \"disabled\" always deletes and creates. kube-proxy has no such setting.")
	fs.DurationVar(&o.driftRepairPeriod, "drift-repair-period", o.driftRepairPeriod, "How often to list HNS and repair load balancers and endpoints changed behind hnsproxy's back. 0 disables.")
	fs.StringVar(&o.stateFile, "state-file", o.stateFile, "Where hnsproxy records the IDs of the HNS objects it created, so that a restart adopts them and never deletes others'.")
	fs.StringVar(&o.cniConfDir, "cni-conf-dir", o.cniConfDir, "The node's CNI configuration directory. On an overlay network with no source VIP configured, hnsproxy reserves one through the IPAM plugin the node's CNI configuration names (the same every restart; --cleanup releases it).")
	fs.StringVar(&o.cniBinDir, "cni-bin-dir", o.cniBinDir, "The node's CNI plugin directory, where that IPAM plugin is.")
	fs.StringVar(&o.takeover, "takeover", o.takeover, "A token; when it differs from the one the state file recorded, this start takes over the node once: HNS load balancers hnsproxy does not own on frontends it wants (the previous proxy's) are adopted or replaced, whatever chose the frontend. A start without a state file always takes over. Otherwise a foreign load balancer on an external or ingress IP is reported, never deleted.")
	fs.BoolVar(&o.refuseNodeExtIPs, "refuse-node-external-ips", o.refuseNodeExtIPs, "Refuse Service external IPs equal to this node's address (a namespace user could otherwise take the node's traffic on those ports); kube-proxy allows them, so the default does too.")
	fs.Var(&o.heapFloor, "gc-heap-floor", "The Go collector's heap goal is kept at or above this size, so that a small cluster's small heap is not collected every few changes; above it the runtime's default pacing (GOGC=100) applies. 0 disables. Ignored when the GOGC or GOMEMLIMIT environment variable is set.")
	fs.BoolVar(&o.enableDebugEndpoint, "enable-debug-endpoint", o.enableDebugEndpoint, "Serve /debug/hns (desired and realized HNS objects per Service port) on the metrics server even when it listens beyond loopback. On a loopback metrics address it is always served.")

	o.addLinuxOnlyFlags(fss.FlagSet(SectionLinuxOnly))

	logsapi.AddFlags(&c.Logging, fss.FlagSet(SectionLogging))
}

// proxyModeValue is --proxy-mode; any value parses, validation rejects all but kernelspace.
type proxyModeValue struct{ val *v1alpha1.ProxyMode }

func (v proxyModeValue) Set(s string) error { *v.val = v1alpha1.ProxyMode(s); return nil }
func (v proxyModeValue) String() string {
	if v.val == nil {
		return ""
	}
	return string(*v.val)
}
func (v proxyModeValue) Type() string { return "ProxyMode" }

// fromFlagsOnly lists the flags that kube-proxy ignores when --config is set.
var fromFlagsOnly = []string{
	"feature-gates", "kubeconfig", "kube-api-content-type", "kube-api-burst", "kube-api-qps",
	"bind-address", "healthz-bind-address", "metrics-bind-address", "bind-address-hard-fail",
	"profiling", "show-hidden-metrics-for-version", "proxy-mode", "cluster-cidr",
	"iptables-sync-period", "iptables-min-sync-period", "config-sync-period",
	"healthz-port", "metrics-port",
	"network-name", "source-vip", "enable-dsr", "root-hnsendpoint-name", "forward-healthcheck-vip",
	"sync-period", "min-sync-period",
}

func changed(fs *pflag.FlagSet, name string) bool {
	f := fs.Lookup(name)
	return f != nil && f.Changed
}
