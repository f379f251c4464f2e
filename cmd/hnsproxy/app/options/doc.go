// Package options owns hnsproxy's command line and configuration file: the
// kube-proxy flags that matter on Windows (same names, defaults and meaning),
// the KubeProxyConfiguration v1alpha1 file decoded with the real
// k8s.io/kube-proxy types, the merge of the two exactly as kube-proxy 1.37
// merges them (cmd/kube-proxy/app/options.go), hnsproxy's own flags, and
// validation. The result is one resolved Config that the daemon runs with.
//
// Merge rules (kube-proxy's, mirrored):
//   - Without --config, the flags are the configuration.
//   - With --config, the file is the configuration and every flag that maps
//     to a KubeProxyConfiguration field is ignored ("This parameter is
//     ignored if a config file is specified by --config"), with three
//     exceptions: --hostname-override and the logging flags (-v, --vmodule,
//     --logging-format, ...), which override the file when set, and
//     --windows-service, which kube-proxy reads before the file (the file's
//     windowsRunAsService never starts the SCM integration). hnsproxy
//     logs a warning for each ignored flag that was set, where kube-proxy is
//     silent.
//   - The file is decoded strictly; on unknown or duplicate fields it is
//     decoded again leniently and a warning is logged, as kube-proxy does.
//   - The Windows defaults apply last: mode "" means kernelspace, an empty
//     rootHnsEndpointName means "cbr0", and an empty network name falls back
//     to the KUBE_NETWORK environment variable (winkernel's getNetworkName).
//   - hnsproxy's own flags are not part of KubeProxyConfiguration and always
//     apply.
//   - Paths may start at a HostProcess container's image directory
//     (%CONTAINER_SANDBOX_MOUNT_POINT%, sandbox.go), which differs between
//     containerd 1.6 and 1.7+; they are resolved here.
package options
