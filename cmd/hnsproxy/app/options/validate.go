package options

import (
	"fmt"
	"net"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	logsapi "k8s.io/component-base/logs/api/v1"
	netutils "k8s.io/utils/net"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/internal/kubeip"
	"github.com/hnsproxy/hnsproxy/reconciler"
)

// Validate checks a resolved Config; the error lists every problem.
func Validate(c *Config) error {
	var errs field.ErrorList
	root := field.NewPath("config")

	if mode := c.Source.Mode; mode != "" && mode != ProxyModeKernelspace {
		errs = append(errs, field.Invalid(root.Child("mode"), string(mode),
			`hnsproxy implements only "kernelspace", the Windows HNS proxy; drop --proxy-mode (or mode in the config file) or set it to kernelspace`))
	}
	if c.SyncPeriod <= 0 {
		errs = append(errs, field.Invalid(root.Child("syncPeriod"), c.SyncPeriod.String(), "must be greater than 0"))
	}
	if c.MinSyncPeriod < 0 {
		errs = append(errs, field.Invalid(root.Child("minSyncPeriod"), c.MinSyncPeriod.String(), "must be greater than or equal to 0"))
	}
	if c.MinSyncPeriod > c.SyncPeriod {
		errs = append(errs, field.Invalid(root.Child("syncPeriod"), c.SyncPeriod.String(), "must be greater than or equal to minSyncPeriod "+c.MinSyncPeriod.String()))
	}
	if c.ConfigSyncPeriod <= 0 {
		errs = append(errs, field.Invalid(root.Child("configSyncPeriod"), c.ConfigSyncPeriod.String(), "must be greater than 0"))
	}
	if c.Burst < 0 {
		errs = append(errs, field.Invalid(root.Child("clientConnection", "burst"), c.Burst, "must be greater than or equal to 0"))
	}
	if _, ok := kubeip.ParseAddr(c.BindAddress); !ok {
		errs = append(errs, field.Invalid(root.Child("bindAddress"), c.BindAddress, "must be a valid IP address"))
	}
	errs = append(errs, validateHostPort(root.Child("healthzBindAddress"), c.HealthzBindAddress)...)
	errs = append(errs, validateHostPort(root.Child("metricsBindAddress"), c.MetricsBindAddress)...)

	wk := root.Child("winkernel")
	if c.Winkernel.NetworkName == "" && c.WriteConfigTo == "" {
		errs = append(errs, field.Required(wk.Child("networkName"), "name the HNS network with --network-name, winkernel.networkName in the config file, or the KUBE_NETWORK environment variable"))
	}
	if _, ok := kubeip.ParseAddr(c.Winkernel.SourceVIP); c.Winkernel.SourceVIP != "" && !ok {
		errs = append(errs, field.Invalid(wk.Child("sourceVip"), c.Winkernel.SourceVIP, "must be a valid IP address"))
	}

	hp := field.NewPath("hnsproxy")
	if err := checkHNSEndpoint(c.HNS); err != "" {
		errs = append(errs, field.Invalid(hp.Child("hnsEndpoint"), c.HNS.Endpoint, err))
	}
	if c.HNS.MaxBackendsPerLB < 0 {
		errs = append(errs, field.Invalid(hp.Child("maxBackendsPerLB"), c.HNS.MaxBackendsPerLB, "must be 0 (the cap the Windows build allows: "+hnslb.DefaultBackendCapRule+"; the HNS version decides where the build is unknown) or positive"))
	}
	if w := c.HNS.OSBugWorkarounds; w != "" && w != OSBugWorkaroundsAuto && w != OSBugWorkaroundsNone {
		errs = append(errs, field.NotSupported(hp.Child("osBugWorkarounds"), w, []string{OSBugWorkaroundsAuto, OSBugWorkaroundsNone}))
	}
	if c.HNS.NetworkWaitTimeout <= 0 {
		errs = append(errs, field.Invalid(hp.Child("hnsNetworkTimeout"), c.HNS.NetworkWaitTimeout.String(), "must be greater than 0"))
	}
	if c.HNS.CallTimeout <= 0 {
		errs = append(errs, field.Invalid(hp.Child("hnsCallTimeout"), c.HNS.CallTimeout.String(), "must be greater than 0"))
	}
	if c.HNS.ListTimeout <= 0 {
		errs = append(errs, field.Invalid(hp.Child("hnsListTimeout"), c.HNS.ListTimeout.String(), "must be greater than 0"))
	}
	if !slices.Contains(reconciler.ModifyModes(), string(c.HNS.ModifyLoadBalancer)) {
		errs = append(errs, field.NotSupported(hp.Child("hnsModifyLoadBalancer"), c.HNS.ModifyLoadBalancer, reconciler.ModifyModes()))
	}
	if c.DriftRepairPeriod < 0 {
		errs = append(errs, field.Invalid(hp.Child("driftRepairPeriod"), c.DriftRepairPeriod.String(), "must be 0 (off) or positive"))
	}
	if c.HeapFloor.Sign() < 0 {
		errs = append(errs, field.Invalid(hp.Child("gcHeapFloor"), c.HeapFloor.String(), "must be 0 (off) or positive"))
	}
	if c.StateFile == "" {
		errs = append(errs, field.Required(hp.Child("stateFile"), "hnsproxy needs a state file to tell its HNS objects from others'"))
	}
	errs = append(errs, logsapi.Validate(&c.Logging, c.FeatureGates, root.Child("logging"))...)
	return errs.ToAggregate()
}

func validateHostPort(p *field.Path, addr string) field.ErrorList {
	if addr == "" {
		return nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return field.ErrorList{field.Invalid(p, addr, "must be IP:port")}
	}
	if _, ok := kubeip.ParseAddr(host); !ok {
		return field.ErrorList{field.Invalid(p, addr, "must be a valid IP")}
	}
	// Port 0 is refused, as kube-proxy's validation refuses it: the server
	// would listen on a random port no probe or scraper finds.
	if _, err := netutils.ParsePort(port, false); err != nil {
		return field.ErrorList{field.Invalid(p, addr, "must be a valid port")}
	}
	return nil
}

// checkHNSEndpoint returns why an endpoint is malformed, or "".
func checkHNSEndpoint(h HNS) string {
	switch {
	case h.Endpoint == HNSEndpointReal || h.IsSim():
		return ""
	case strings.HasPrefix(h.Endpoint, hnslb.UnixScheme):
		if _, ok := h.UnixSocket(); !ok {
			return fmt.Sprintf("want unix:///absolute/path/to/socket, got %q", h.Endpoint)
		}
		return ""
	default:
		return `must be empty (the real HNS), "sim", or "unix:///path/to/hnssim.sock"`
	}
}
