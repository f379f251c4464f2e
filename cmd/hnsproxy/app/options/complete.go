package options

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/spf13/pflag"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/kube-proxy/config/v1alpha1"

	"github.com/hnsproxy/hnsproxy/internal/kubeip"
	"github.com/hnsproxy/hnsproxy/reconciler"
)

var (
	osGetenv   = os.Getenv
	osHostname = os.Hostname
)

// WindowsService is --windows-service, read from the parsed flags before
// Complete: kube-proxy starts the SCM integration (server.go's RunE,
// initForOS) before it loads --config, so the flag decides and the file's
// windowsRunAsService never makes a service (Complete warns about it).
func (o *Options) WindowsService() bool { return o.flagConfig.WindowsRunAsService }

// Complete merges the flags in fs (the command's full flag set, after
// parsing) with --config the way kube-proxy does, applies the Windows and
// hnsproxy defaults, and validates. Warnings are for the operator's log
// (ignored flags, lenient decoding, unknown gates); any error is fatal.
func (o *Options) Complete(fs *pflag.FlagSet) (*Config, []string, error) {
	if o.InitOnly {
		return nil, nil, errors.New("--init-only is not implemented on Windows (as with kube-proxy)")
	}
	var warnings []string
	kp, file, w, err := o.kubeProxyConfiguration(fs)
	warnings = append(warnings, w...)
	if err != nil {
		return nil, warnings, err
	}
	warnings = append(warnings, linuxOnlyWarnings(fs)...)
	applyWindowsDefaults(kp)
	// Named as kube-proxy names what /configz shows (server.go), whether
	// it came from the flags or a file.
	kp.SetGroupVersionKind(configGVK)

	if o.hostnameOverride != "" {
		h := strings.TrimSpace(o.hostnameOverride)
		if h == "" {
			return nil, warnings, errors.New("empty --hostname-override is invalid")
		}
		kp.HostnameOverride = strings.ToLower(h)
	}
	nodeName, err := o.nodeName(kp.HostnameOverride)
	if err != nil {
		return nil, warnings, err
	}

	fg, w, err := resolveFeatureGates(kp.FeatureGates)
	warnings = append(warnings, w...)
	if err != nil {
		return nil, warnings, err
	}

	cfg := &Config{
		NodeName:            nodeName,
		Kubeconfig:          kp.ClientConnection.Kubeconfig,
		Master:              o.master,
		QPS:                 kp.ClientConnection.QPS,
		Burst:               int(kp.ClientConnection.Burst),
		ContentType:         kp.ClientConnection.ContentType,
		AcceptContentTypes:  kp.ClientConnection.AcceptContentTypes,
		BindAddress:         kp.BindAddress,
		HealthzBindAddress:  listenAddress(kp.HealthzBindAddress),
		MetricsBindAddress:  listenAddress(kp.MetricsBindAddress),
		BindAddressHardFail: kp.BindAddressHardFail,
		EnableProfiling:     kp.EnableProfiling,
		// kernelspace reads the iptables section's periods (the v1alpha1
		// conversion's default branch).
		SyncPeriod:       kp.IPTables.SyncPeriod.Duration,
		MinSyncPeriod:    kp.IPTables.MinSyncPeriod.Duration,
		ConfigSyncPeriod: kp.ConfigSyncPeriod.Duration,
		FeatureGates:     fg,
		Logging:          kp.Logging,
		Winkernel: Winkernel{
			NetworkName:           networkName(kp, o.getenv),
			SourceVIP:             kp.Winkernel.SourceVip,
			EnableDSR:             kp.Winkernel.EnableDSR,
			RootHNSEndpointName:   kp.Winkernel.RootHnsEndpointName,
			ForwardHealthCheckVIP: kp.Winkernel.ForwardHealthCheckVip,
		},
		HNS: HNS{
			Endpoint:           o.hnsEndpoint,
			SimProfile:         o.hnsSimProfile,
			MaxBackendsPerLB:   o.maxBackendsPerLB,
			OSBugWorkarounds:   o.osBugWorkarounds,
			NetworkWaitTimeout: o.networkWaitTimeout,
			CallTimeout:        o.hnsCallTimeout,
			ListTimeout:        o.hnsListTimeout,
			ModifyLoadBalancer: reconciler.ModifyMode(o.hnsModifyLB),
		},
		DriftRepairPeriod:     o.driftRepairPeriod,
		HeapFloor:             o.heapFloor.Quantity,
		StateFile:             o.stateFile,
		CNI:                   CNI{ConfDir: o.cniConfDir, BinDir: o.cniBinDir},
		Takeover:              o.takeover,
		RefuseNodeExternalIPs: o.refuseNodeExtIPs,
		DebugEndpoint:         o.enableDebugEndpoint || isLoopbackAddress(kp.MetricsBindAddress),
		ConfigFile:            file.path,
		ConfigFileContent:     file.content,
		WriteConfigTo:         o.WriteConfigTo,
		Cleanup:               o.Cleanup,
		Source:                kp,
	}
	cidrs, w := clusterCIDRs(kp.ClusterCIDR)
	cfg.ClusterCIDRs = cidrs
	warnings = append(warnings, w...)
	if !changed(fs, "hns-endpoint") {
		cfg.HNS.Endpoint = o.getenv("HNS_ENDPOINT")
	}
	if cfg.Kubeconfig, err = ResolveInputPath(cfg.Kubeconfig, o.getenv, FileExists); err != nil {
		return nil, warnings, err
	}
	for _, path := range []*string{&cfg.StateFile, &cfg.CNI.ConfDir, &cfg.CNI.BinDir} {
		if *path, err = ExpandSandboxPath(*path, o.getenv); err != nil {
			return nil, warnings, err
		}
	}
	if w := sandboxStateFileWarning(cfg.StateFile, o.getenv); w != "" {
		warnings = append(warnings, w)
	}
	if err := Validate(cfg); err != nil {
		return nil, warnings, err
	}
	cfg.Recomplete = func() error {
		_, _, err := o.Complete(fs)
		return err
	}
	return cfg, warnings, nil
}

// linuxProxyModes are kube-proxy's Linux modes. A config file may name one
// because it is the ConfigMap the Linux nodes' kube-proxy reads (kubeadm's
// kube-system/kube-proxy, which deploy/replace-kube-proxy mounts as it is):
// there it means nothing for Windows, so the file's mode is taken as
// kernelspace with a warning. On the command line (--proxy-mode) it stays
// an error, as in kube-proxy.
var linuxProxyModes = map[v1alpha1.ProxyMode]bool{"iptables": true, "ipvs": true, "nftables": true}

// configFile is the --config file as it was read: where (resolved) and
// what it held.
type configFile struct {
	path    string
	content []byte
}

// kubeProxyConfiguration is the KubeProxyConfiguration kube-proxy would run
// with: the file if --config is set (logging flags applied over it), else the flags.
func (o *Options) kubeProxyConfiguration(fs *pflag.FlagSet) (*v1alpha1.KubeProxyConfiguration, configFile, []string, error) {
	var warnings []string
	if o.ConfigFile != "" {
		path, err := ResolveInputPath(o.ConfigFile, o.getenv, FileExists)
		if err != nil {
			return nil, configFile{}, warnings, err
		}
		kp, content, w, err := LoadConfigFile(path)
		warnings = append(warnings, w...)
		if err != nil {
			return nil, configFile{}, warnings, err
		}
		if err := copyLogsFromFlags(fs, &kp.Logging); err != nil {
			return nil, configFile{}, warnings, err
		}
		for _, name := range fromFlagsOnly {
			if changed(fs, name) {
				warnings = append(warnings, fmt.Sprintf("flag --%s is ignored because --config is set (as kube-proxy does); set it in the config file", name))
			}
		}
		if linuxProxyModes[kp.Mode] {
			warnings = append(warnings, fmt.Sprintf("mode %q in the config file is a Linux proxy mode (a kube-proxy ConfigMap shared with Linux nodes); hnsproxy runs kernelspace, the Windows mode, where kube-proxy on Windows would refuse to start", kp.Mode))
			kp.Mode = ProxyModeKernelspace
		}
		if kp.WindowsRunAsService && !o.flagConfig.WindowsRunAsService {
			warnings = append(warnings, "windowsRunAsService in the config file does not run hnsproxy as a Windows service (kube-proxy reads only the flag); pass --windows-service")
		}
		return kp, configFile{path: path, content: content}, warnings, nil
	}

	kp := o.flagConfig.DeepCopy()
	if o.WriteConfigTo == "" {
		kp.HealthzBindAddress = addressFromPortFlag(kp.HealthzBindAddress, o.healthzPort)
		kp.MetricsBindAddress = addressFromPortFlag(kp.MetricsBindAddress, o.metricsPort)
	}
	if changed(fs, "cluster-cidr") {
		kp.ClusterCIDR = o.clusterCIDRs
	}
	for ours, theirs := range map[string]string{"sync-period": "iptables-sync-period", "min-sync-period": "iptables-min-sync-period"} {
		if changed(fs, ours) && changed(fs, theirs) && fs.Lookup(ours).Value.String() != fs.Lookup(theirs).Value.String() {
			return nil, configFile{}, warnings, fmt.Errorf("--%s and --%s are the same setting and disagree; set one", ours, theirs)
		}
	}
	if changed(fs, "sync-period") {
		kp.IPTables.SyncPeriod.Duration = o.syncPeriod
	}
	if changed(fs, "min-sync-period") {
		kp.IPTables.MinSyncPeriod.Duration = o.minSyncPeriod
	}
	return kp, configFile{}, warnings, nil
}

// addressFromPortFlag applies the deprecated --healthz-port / --metrics-port:
// 0 disables the server, otherwise the port is added to a bare IP.
func addressFromPortFlag(addr string, port int32) string {
	if port == 0 {
		return ""
	}
	return appendPortIfNeeded(addr, int(port))
}

// copyLogsFromFlags applies the logging flags that were set on the command
// line over the file's logging configuration, so that `--config f -v=5`
// works; --vmodule entries from flags come first.
func copyLogsFromFlags(from *pflag.FlagSet, to *logsapi.LoggingConfiguration) error {
	var clone pflag.FlagSet
	logsapi.AddFlags(to, &clone)
	fileVModule := to.VModule
	to.VModule = nil
	var err error
	clone.VisitAll(func(f *pflag.Flag) {
		src := from.Lookup(f.Name)
		if err != nil || src == nil || !src.Changed {
			return
		}
		if setErr := f.Value.Set(src.Value.String()); setErr != nil {
			err = fmt.Errorf("logging flag --%s: %w", f.Name, setErr)
		}
	})
	to.VModule = append(to.VModule, fileVModule...)
	return err
}

// nodeName is kube-proxy's: the override, or the host name, lower-cased.
func (o *Options) nodeName(override string) (string, error) {
	name := override
	if name == "" {
		h, err := o.hostname()
		if err != nil {
			return "", fmt.Errorf("finding the node name: %w (set --hostname-override)", err)
		}
		name = h
	}
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" {
		return "", errors.New("empty node name: set --hostname-override")
	}
	return name, nil
}

// isLoopbackAddress reports a "host:port" whose host is a loopback IP or localhost.
func isLoopbackAddress(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, ok := kubeip.ParseAddr(host)
	return ok && ip.Unmap().IsLoopback()
}
