package options

import (
	"net"
	"runtime"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/kube-proxy/config/v1alpha1"

	"github.com/hnsproxy/hnsproxy/internal/kubeip"
)

// kube-proxy's well-known ports (pkg/cluster/ports).
const (
	ProxyHealthzPort = 10256
	ProxyStatusPort  = 10249
)

// hnsproxy's own defaults.
const (
	DefaultDriftRepairPeriod  = 5 * time.Minute
	DefaultNetworkWaitTimeout = 5 * time.Minute
	DefaultSimProfile         = "ws2022"
	// DefaultHeapFloor keeps a small cluster's collections rare (package
	// heapfloor); a live heap of 24 MiB (about 2,500 Services) already has
	// a goal above it.
	DefaultHeapFloor = "48Mi"
	// kube-proxy's OOM score (pkg/kubelet/qos); meaningless on Windows but defaulted alike.
	kubeProxyOOMScoreAdj = -999
)

// DefaultStateFile is where hnsproxy records the HNS objects it owns.
func DefaultStateFile() string {
	if runtime.GOOS == "windows" {
		return `C:\ProgramData\hnsproxy\state.json`
	}
	return "/var/lib/hnsproxy/state.json"
}

// DefaultCNIConfDir and DefaultCNIBinDir are where Windows node set-ups
// (kubeadm's Windows guide, sig-windows-tools) put the CNI configuration
// and plugins, and the Linux convention elsewhere.
func DefaultCNIConfDir() string {
	if runtime.GOOS == "windows" {
		return `C:\etc\cni\net.d`
	}
	return "/etc/cni/net.d"
}

func DefaultCNIBinDir() string {
	if runtime.GOOS == "windows" {
		return `C:\opt\cni\bin`
	}
	return "/opt/cni/bin"
}

// SetDefaults fills a KubeProxyConfiguration the way kube-proxy 1.37's
// v1alpha1 defaulting does (pkg/proxy/apis/config/v1alpha1/defaults.go).
func SetDefaults(c *v1alpha1.KubeProxyConfiguration) {
	if c.BindAddress == "" {
		c.BindAddress = "0.0.0.0"
	}
	healthzHost, metricsHost := "0.0.0.0", "127.0.0.1"
	if ip, ok := kubeip.ParseAddr(c.BindAddress); !ok || !ip.Unmap().Is4() {
		healthzHost, metricsHost = "[::]", "[::1]"
	}
	if c.HealthzBindAddress == "" {
		c.HealthzBindAddress = healthzHost + ":" + strconv.Itoa(ProxyHealthzPort)
	} else {
		c.HealthzBindAddress = appendPortIfNeeded(c.HealthzBindAddress, ProxyHealthzPort)
	}
	if c.MetricsBindAddress == "" {
		c.MetricsBindAddress = metricsHost + ":" + strconv.Itoa(ProxyStatusPort)
	} else {
		c.MetricsBindAddress = appendPortIfNeeded(c.MetricsBindAddress, ProxyStatusPort)
	}
	if c.OOMScoreAdj == nil {
		c.OOMScoreAdj = ptr[int32](kubeProxyOOMScoreAdj)
	}
	defaultDuration(&c.IPTables.SyncPeriod, 30*time.Second)
	defaultDuration(&c.IPTables.MinSyncPeriod, time.Second)
	if c.IPTables.LocalhostNodePorts == nil {
		c.IPTables.LocalhostNodePorts = ptr(true)
	}
	defaultDuration(&c.IPVS.SyncPeriod, 30*time.Second)
	defaultDuration(&c.NFTables.SyncPeriod, 30*time.Second)
	defaultDuration(&c.NFTables.MinSyncPeriod, time.Second)
	if c.Conntrack.MaxPerCore == nil {
		c.Conntrack.MaxPerCore = ptr[int32](32 * 1024)
	}
	if c.Conntrack.Min == nil {
		c.Conntrack.Min = ptr[int32](128 * 1024)
	}
	if c.IPTables.MasqueradeBit == nil {
		c.IPTables.MasqueradeBit = ptr[int32](14)
	}
	if c.NFTables.MasqueradeBit == nil {
		c.NFTables.MasqueradeBit = ptr[int32](14)
	}
	if c.Conntrack.TCPEstablishedTimeout == nil {
		c.Conntrack.TCPEstablishedTimeout = &metav1.Duration{Duration: 24 * time.Hour}
	}
	if c.Conntrack.TCPCloseWaitTimeout == nil {
		c.Conntrack.TCPCloseWaitTimeout = &metav1.Duration{Duration: time.Hour}
	}
	defaultDuration(&c.ConfigSyncPeriod, 15*time.Minute)
	if c.ClientConnection.ContentType == "" {
		c.ClientConnection.ContentType = "application/vnd.kubernetes.protobuf"
	}
	if c.ClientConnection.QPS == 0 {
		c.ClientConnection.QPS = 5
	}
	if c.ClientConnection.Burst == 0 {
		c.ClientConnection.Burst = 10
	}
	if c.FeatureGates == nil {
		c.FeatureGates = map[string]bool{}
	}
	logsapi.SetRecommendedLoggingConfiguration(&c.Logging)
}

// applyWindowsDefaults is kube-proxy's Windows platformApplyDefaults. The
// KUBE_NETWORK fallback is not one: winkernel reads the environment when it
// starts, so the configuration (and --write-config-to's file) keeps "".
func applyWindowsDefaults(c *v1alpha1.KubeProxyConfiguration) {
	if c.Mode == "" {
		c.Mode = ProxyModeKernelspace
	}
	if c.Winkernel.RootHnsEndpointName == "" {
		c.Winkernel.RootHnsEndpointName = "cbr0"
	}
}

// networkName is winkernel's getNetworkName: the configured name, else
// the KUBE_NETWORK environment variable.
func networkName(c *v1alpha1.KubeProxyConfiguration, getenv func(string) string) string {
	if c.Winkernel.NetworkName != "" {
		return c.Winkernel.NetworkName
	}
	return getenv("KUBE_NETWORK")
}

// appendPortIfNeeded adds port to a bare IP ("1.2.3.4", "::1"), leaving host:port alone.
func appendPortIfNeeded(addr string, port int) string {
	if _, _, err := net.SplitHostPort(addr); err == nil {
		return addr
	}
	if _, ok := kubeip.ParseAddr(addr); ok {
		return net.JoinHostPort(addr, strconv.Itoa(port))
	}
	return addr // invalid; validation reports it
}

func defaultDuration(d *metav1.Duration, v time.Duration) {
	if d.Duration == 0 {
		d.Duration = v
	}
}

func ptr[T any](v T) *T { return &v }
