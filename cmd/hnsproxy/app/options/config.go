package options

import (
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/component-base/featuregate"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/kube-proxy/config/v1alpha1"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/reconciler"
)

// Config is hnsproxy's resolved configuration: flags and file merged,
// defaulted and validated. Durations are plain time.Duration; addresses are
// "host:port" ("" disables that server).
type Config struct {
	// NodeName is --hostname-override (trimmed, lower-cased) or the host name.
	NodeName string

	// Kubeconfig and Master select the API server; both empty means in-cluster.
	Kubeconfig string
	Master     string
	// QPS, Burst, ContentType and AcceptContentTypes tune the API client.
	QPS                float32
	Burst              int
	ContentType        string
	AcceptContentTypes string

	// BindAddress overrides the node IP of its family when not 0.0.0.0 / ::
	// (kube-proxy's historical name; nothing binds to it); the other
	// family's stays the Node's.
	BindAddress string
	// HealthzBindAddress serves /healthz and /livez; "" (only from
	// --healthz-port=0: empty addresses are defaulted) disables.
	HealthzBindAddress string
	// MetricsBindAddress serves /metrics (and /debug/hns, see DebugEndpoint);
	// "" (only from --metrics-port=0) disables.
	MetricsBindAddress string
	// BindAddressHardFail makes a failure to serve healthz or metrics fatal.
	BindAddressHardFail bool
	// EnableProfiling serves /debug/pprof on the metrics server.
	EnableProfiling bool

	// SyncPeriod bounds how stale HNS may get; MinSyncPeriod rate-limits syncs.
	SyncPeriod    time.Duration
	MinSyncPeriod time.Duration
	// ConfigSyncPeriod is the informers' resync period.
	ConfigSyncPeriod time.Duration
	// ClusterCIDRs are the pod CIDRs, at most one per IP family, from
	// --cluster-cidr (clusterCIDR); what cannot be used is left out with a
	// warning, never an error, as kube-proxy on Windows does not read it.
	ClusterCIDRs []string

	// FeatureGates holds the resolved gates (WinDSR, WinOverlay,
	// PreferSameTrafficDistribution, AllowServiceExternalIPs, logging, metrics,
	// client-go).
	FeatureGates featuregate.FeatureGate
	// Logging is the logging configuration, flags applied over the file.
	Logging logsapi.LoggingConfiguration

	Winkernel Winkernel
	HNS       HNS

	// DriftRepairPeriod is how often HNS is listed and repaired against the
	// desired state; 0 disables drift repair.
	DriftRepairPeriod time.Duration
	// StateFile records the IDs of the HNS objects hnsproxy created.
	StateFile string
	// CNI is where the node's CNI configuration and plugins are: on overlay
	// without a source VIP, one is reserved through the IPAM the
	// configuration names (package sourcevip).
	CNI CNI
	// Takeover is --takeover: a new token makes one start take over foreign
	// load balancers on desired frontends (reconciler.Options.Takeover).
	Takeover string
	// RefuseNodeExternalIPs is --refuse-node-external-ips.
	RefuseNodeExternalIPs bool
	// DebugEndpoint serves /debug/hns on the metrics server: on when asked
	// for, or when the metrics server listens on loopback only.
	DebugEndpoint bool

	// HeapFloor is --gc-heap-floor: the Go heap goal is kept at or above
	// it (package heapfloor); 0 disables.
	HeapFloor resource.Quantity

	// ConfigFile is --config ("" when the flags are the configuration),
	// resolved (sandbox.go); the daemon exits when its content changes to
	// a configuration it would start with.
	ConfigFile string
	// ConfigFileContent is the bytes of ConfigFile that Source was decoded
	// from. The daemon compares the file with them, not with what it holds
	// when the watch starts (once HNS and its network are there, minutes
	// later at worst), so that no change after the read goes unnoticed.
	ConfigFileContent []byte
	// Recomplete completes the same command line again, with the --config
	// file as it is now: nil if a restart would start, else its error. The
	// daemon asks before it exits on a changed file.
	Recomplete func() error
	// WriteConfigTo is --write-config-to: write Source there and exit
	// instead of running. It needs no network name, as in kube-proxy,
	// whose validation has no winkernel check.
	WriteConfigTo string

	// Cleanup (--cleanup) deletes the HNS objects hnsproxy owns and exits
	// instead of running the proxy.
	Cleanup bool

	// Source is the KubeProxyConfiguration kube-proxy would hold: the file
	// (logging flags over it) or the flags, with the Windows defaults and
	// --hostname-override applied. /configz shows it and --write-config-to
	// writes it; the KUBE_NETWORK fallback is in Winkernel only.
	Source *v1alpha1.KubeProxyConfiguration
}

// Winkernel is KubeProxyConfiguration's winkernel section, resolved.
type Winkernel struct {
	// NetworkName is the HNS network the proxy programs (falls back to $KUBE_NETWORK).
	NetworkName string
	// SourceVIP is the source VIP for load balancers on overlay networks.
	SourceVIP string
	// EnableDSR asks for Direct Server Return load balancers.
	EnableDSR bool
	// RootHNSEndpointName is the host's endpoint on l2bridge networks (default "cbr0").
	RootHNSEndpointName string
	// ForwardHealthCheckVIP forwards the service VIP for the health-check node port.
	ForwardHealthCheckVIP bool
}

// CNI is the node's CNI directories (containerd's conf_dir and bin_dir).
type CNI struct {
	ConfDir string
	BinDir  string
}

// HNS is how hnsproxy reaches HNS.
type HNS struct {
	// Endpoint is "" (the real HNS; Windows only), "sim" (an in-process
	// simulator) or "unix:///path" (the hnssim service).
	Endpoint string
	// SimProfile names the Windows build the in-process simulator behaves like.
	SimProfile string
	// MaxBackendsPerLB overrides the per-load-balancer backend cap; 0 takes
	// it from the OS build (or the HNS version) and learns it from HNS.
	MaxBackendsPerLB int
	// OSBugWorkarounds is OSBugWorkaroundsAuto (work around the known OS
	// bugs of this node's build; also "") or OSBugWorkaroundsNone.
	OSBugWorkarounds string
	// NetworkWaitTimeout bounds the wait for the HNS network at start.
	NetworkWaitTimeout time.Duration
	// CallTimeout and ListTimeout are the deadlines of HNS calls on one
	// object and of listings; a call past its deadline is abandoned
	// (reconciler.Options).
	CallTimeout, ListTimeout time.Duration
	// ModifyLoadBalancer is --hns-modify-load-balancer: when an update is
	// an HNS modify rather than a delete and a create.
	ModifyLoadBalancer reconciler.ModifyMode
}

// OSBugWorkarounds values.
const (
	OSBugWorkaroundsAuto = "auto"
	OSBugWorkaroundsNone = "none"
)

// HNS endpoint forms.
const (
	HNSEndpointReal = ""
	HNSEndpointSim  = "sim"
)

// IsSim reports the in-process simulator.
func (h HNS) IsSim() bool { return h.Endpoint == HNSEndpointSim }

// UnixSocket returns the hnssim socket path and whether Endpoint names one
// (a well-formed unix:// endpoint: hnslb.ParseUnixEndpoint).
func (h HNS) UnixSocket() (string, bool) {
	path, err := hnslb.ParseUnixEndpoint(h.Endpoint)
	return path, err == nil
}
