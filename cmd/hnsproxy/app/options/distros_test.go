package options

import (
	"slices"
	"testing"
)

// The tests below pin the kube-proxy command lines that managed and distro
// clusters run on their Windows nodes, each read from its public source:
// hnsproxy, put in kube-proxy's place, must start with them unchanged and
// read each value as kube-proxy does. docs/operators.md ("Managed and
// distro clusters") says what differs and what an operator changes.

// wantResolved checks the settings every fixture below pins.
type wantResolved struct {
	node, network, sourceVIP string
	dsr                      bool
	healthz, metrics, bind   string
	cidrs                    []string
	debugEndpoint            bool
}

func checkResolved(t *testing.T, cfg *Config, want wantResolved) {
	t.Helper()
	got := wantResolved{
		node: cfg.NodeName, network: cfg.Winkernel.NetworkName, sourceVIP: cfg.Winkernel.SourceVIP,
		dsr: cfg.Winkernel.EnableDSR, healthz: cfg.HealthzBindAddress, metrics: cfg.MetricsBindAddress,
		bind: cfg.BindAddress, cidrs: cfg.ClusterCIDRs, debugEndpoint: cfg.DebugEndpoint,
	}
	if got.node != want.node || got.network != want.network || got.sourceVIP != want.sourceVIP || got.dsr != want.dsr ||
		got.healthz != want.healthz || got.metrics != want.metrics || got.bind != want.bind ||
		!slices.Equal(got.cidrs, want.cidrs) || got.debugEndpoint != want.debugEndpoint {
		t.Errorf("resolved\n %+v\nwant\n %+v", got, want)
	}
}

// TestAKSKubeProxyStartArgs: AKS runs kube-proxy as the nssm service
// "kubeproxy" through Azure/AgentBaker's
// staging/cse/windows/provisioningscripts/kubeproxystart.ps1 (06836ee2301e),
// with KUBE_NETWORK=azure. Its arguments: --v=3, --proxy-mode=kernelspace,
// --hostname-override=$env:computername (upper case), --kubeconfig=c:\k\config,
// the ConfigArgs pkg/agent/datamodel/types.go writes
// (--metrics-bind-address=0.0.0.0:10249 unless customised), and with WinDSR
// --enable-dsr=true and --feature-gates=WinDSR=true (IPv6DualStack is
// dropped from 1.25 on). From Kubernetes 1.34 on that is all; below 1.34
// AgentBaker adds WinOverlay=false, a gate kube-proxy 1.34+ has locked on.
func TestAKSKubeProxyStartArgs(t *testing.T) {
	aks := map[string]string{"KUBE_NETWORK": "azure"}
	args := []string{"--v=3", "--proxy-mode=kernelspace", "--hostname-override=AKSWIN000000",
		`--kubeconfig=c:\k\config`, "--metrics-bind-address=0.0.0.0:10249", "--enable-dsr=true"}

	cfg, warnings := mustParse(t, aks, append(args, "--feature-gates=WinDSR=true")...)
	if len(warnings) != 0 {
		t.Errorf("warnings = %q", warnings)
	}
	checkResolved(t, cfg, wantResolved{
		node: "akswin000000", network: "azure", dsr: true,
		healthz: "0.0.0.0:10256", metrics: "0.0.0.0:10249", bind: "0.0.0.0",
	})
	if cfg.Kubeconfig != `c:\k\config` || cfg.Logging.Verbosity != 3 {
		t.Errorf("kubeconfig %q, verbosity %d", cfg.Kubeconfig, cfg.Logging.Verbosity)
	}

	// Below 1.34: refused, as kube-proxy 1.37 refuses it; the error says
	// which entry to drop.
	_, _, _, _, err := parse(t, aks, append(args, "--feature-gates=WinDSR=true,WinOverlay=false")...)
	wantError(t, err, "cannot set feature gate WinOverlay to false")
	wantError(t, err, "remove WinOverlay=false")
}

// TestEKSBootstrapKubeProxyArgs: EKS's Windows AMIs register kube-proxy as
// the service "kube-proxy" under EKS-WindowsServiceHost.exe from
// Start-EKSBootstrap.ps1 (C:\Program Files\Amazon\EKS; public copies such as
// rimaulana/eks-windows-resources): --kubeconfig, --v=1,
// --proxy-mode=kernelspace, --hostname-override=<the instance's private DNS
// name>, --cluster-cidr=<the VPC's IPv4 CIDR>, then -KubeProxyExtraArgs. It
// passes no --network-name, so the vpc-bridge CNI's L2Bridge network comes
// from KUBE_NETWORK, as for kube-proxy; the VPC CIDR only picks the IP family.
func TestEKSBootstrapKubeProxyArgs(t *testing.T) {
	cfg, warnings := mustParse(t, map[string]string{"KUBE_NETWORK": "vpcbr0a1b2c3d4e5f"},
		`--kubeconfig=C:\ProgramData\kubernetes\kubeconfig`, "--v=1", "--proxy-mode=kernelspace",
		"--hostname-override=ip-10-0-1-23.us-west-2.compute.internal", "--cluster-cidr=10.0.0.0/16")
	if len(warnings) != 0 {
		t.Errorf("warnings = %q", warnings)
	}
	checkResolved(t, cfg, wantResolved{
		node: "ip-10-0-1-23.us-west-2.compute.internal", network: "vpcbr0a1b2c3d4e5f",
		healthz: "0.0.0.0:10256", metrics: "127.0.0.1:10249", bind: "0.0.0.0",
		cidrs: []string{"10.0.0.0/16"}, debugEndpoint: true,
	})
}

// TestEKSBootstrapKubeProxyArgsOfOlderAMIs: older AMIs' scripts also
// passed --logtostderr=true (and before 1.16 --resource-container=""),
// flags kube-proxy no longer has (klog's went in 1.26, KEP-2845): refused
// by hnsproxy as by kube-proxy 1.37.
func TestEKSBootstrapKubeProxyArgsOfOlderAMIs(t *testing.T) {
	for _, old := range []string{"--logtostderr=true", `--resource-container=`} {
		_, _, _, _, err := parse(t, map[string]string{"KUBE_NETWORK": "vpcbr0a1b2c3d4e5f"}, "--proxy-mode=kernelspace", old)
		wantError(t, err, "unknown flag")
	}
}

// TestGCEWindowsKubeProxyArgs: kube-up's GCE Windows nodes (kubernetes
// cluster/gce/util.sh construct-windows-kubeproxy-flags and
// cluster/gce/windows/k8s-node-setup.psm1, v1.36.3) run kube-proxy as the
// service "kube-proxy" under kube-log-runner.exe, with KUBE_NETWORK=l2bridge:
// --kubeconfig, --cluster-cidr=<CLUSTER_IP_RANGE>,
// --hostname-override=<instance name>, --v=2, --proxy-mode=kernelspace,
// --windows-service=true and, with WINDOWS_ENABLE_DSR, --feature-gates=WinDSR=true
// --enable-dsr=true. The script splits KUBEPROXY_ARGS on single spaces, so
// an argument may be empty: kube-proxy and hnsproxy both accept one.
func TestGCEWindowsKubeProxyArgs(t *testing.T) {
	o, _, cfg, warnings, err := parse(t, map[string]string{"KUBE_NETWORK": "l2bridge"},
		`--kubeconfig=C:\etc\kubernetes\kubeproxy.kubeconfig`, "--cluster-cidr=10.64.0.0/14",
		"--hostname-override=kubernetes-windows-node-x7k2", "--v=2", "--proxy-mode=kernelspace",
		"--windows-service=true", "--feature-gates=WinDSR=true", "--enable-dsr=true", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings = %q", warnings)
	}
	checkResolved(t, cfg, wantResolved{
		node: "kubernetes-windows-node-x7k2", network: "l2bridge", dsr: true,
		healthz: "0.0.0.0:10256", metrics: "127.0.0.1:10249", bind: "0.0.0.0",
		cidrs: []string{"10.64.0.0/14"}, debugEndpoint: true,
	})
	if !o.WindowsService() {
		t.Error("--windows-service=true not taken")
	}
}

// TestRKE2KubeProxyArgs: RKE2's Windows agent runs kube-proxy.exe as its
// child (rancher/rke2 pkg/executor/pebinary/pebinary.go, 6ce1a8019e9d),
// with the arguments its CNI gives, sorted (--bind-address=<node IP>,
// --enable-dsr=true and --feature-gates=WinDSR=true where HNS supports DSR,
// --network-name, --source-vip: Calico_ep's address or the IP Flannel's
// host-local reserved) before k3s's (k3s-io/k3s
// pkg/daemons/agent/agent_windows.go): --proxy-mode=kernelspace,
// --healthz-bind-address=127.0.0.1 (::1 on an IPv6-only node), a bare IP
// that takes kube-proxy's port, --kubeconfig, --cluster-cidr (both
// families on a dual-stack cluster) and --hostname-override.
func TestRKE2KubeProxyArgs(t *testing.T) {
	cfg, warnings := mustParse(t, nil,
		"--bind-address=10.1.1.5", "--enable-dsr=true", "--feature-gates=WinDSR=true", "--network-name=Calico",
		"--source-vip=10.42.3.130", "--proxy-mode=kernelspace", "--healthz-bind-address=127.0.0.1",
		`--kubeconfig=C:\var\lib\rancher\rke2\agent\kubeproxy.kubeconfig`,
		"--cluster-cidr=10.42.0.0/16,2001:cafe:42::/56", "--hostname-override=win-rke2-1")
	if len(warnings) != 0 {
		t.Errorf("warnings = %q", warnings)
	}
	checkResolved(t, cfg, wantResolved{
		node: "win-rke2-1", network: "Calico", sourceVIP: "10.42.3.130", dsr: true,
		healthz: "127.0.0.1:10256", metrics: "127.0.0.1:10249", bind: "10.1.1.5",
		cidrs: []string{"10.42.0.0/16", "2001:cafe:42::/56"}, debugEndpoint: true,
	})

	// An IPv6-only node: healthz on ::1 with kube-proxy's port; metrics
	// keep the default kube-proxy's defaulting chose before the flags.
	cfg, _ = mustParse(t, nil,
		"--bind-address=fd00::5", "--network-name=flannel.4096",
		"--proxy-mode=kernelspace", "--healthz-bind-address=::1", "--cluster-cidr=2001:cafe:42::/56",
		"--hostname-override=win-rke2-2")
	checkResolved(t, cfg, wantResolved{
		node: "win-rke2-2", network: "flannel.4096",
		healthz: "[::1]:10256", metrics: "127.0.0.1:10249", bind: "fd00::5",
		cidrs: []string{"2001:cafe:42::/56"}, debugEndpoint: true,
	})
}

// TestOpenShiftWMCOKubeProxyArgs: OpenShift's Windows Machine Config
// Operator (openshift/windows-machine-config-operator,
// pkg/services/services.go) runs kube-proxy as the service "kube-proxy"
// under kube-log-runner: --windows-service --proxy-mode=kernelspace
// --feature-gates=WinOverlay=true --hostname-override=<node>
// --kubeconfig --cluster-cidr=<this node's hybrid-overlay subnet>
// --network-name=OVNKubernetesHybridOverlayNetwork --source-vip=<the
// endpoint IP its network script finds> --enable-dsr=false and a --v.
func TestOpenShiftWMCOKubeProxyArgs(t *testing.T) {
	o, _, cfg, warnings, err := parse(t, nil,
		"--windows-service", "--proxy-mode=kernelspace", "--feature-gates=WinOverlay=true",
		"--hostname-override=winworker-5rcbd", `--kubeconfig=C:\k\kubeconfig`, "--cluster-cidr=10.132.1.0/24",
		"--network-name=OVNKubernetesHybridOverlayNetwork", "--source-vip=10.132.1.2", "--enable-dsr=false", "--v=2")
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings = %q", warnings)
	}
	checkResolved(t, cfg, wantResolved{
		node: "winworker-5rcbd", network: "OVNKubernetesHybridOverlayNetwork", sourceVIP: "10.132.1.2",
		healthz: "0.0.0.0:10256", metrics: "127.0.0.1:10249", bind: "0.0.0.0",
		cidrs: []string{"10.132.1.0/24"}, debugEndpoint: true,
	})
	if !o.WindowsService() {
		t.Error("--windows-service not taken")
	}
}

// TestFlannelStartScriptArgs: sig-windows-tools'
// hostprocess/flannel/kube-proxy/start.ps1, with the DaemonSet's
// KUBE_NETWORK=flannel.4096: --v=6 --hostname-override=$env:NODE_NAME
// --feature-gates=WinOverlay=true --proxy-mode=kernelspace
// --source-vip=<the IP host-local reserved> and the kubeconfig the script
// rewrote below the sandbox. (Calico's: TestCalicoVXLANStartScriptArgs.)
func TestFlannelStartScriptArgs(t *testing.T) {
	sandbox := map[string]string{"KUBE_NETWORK": "flannel.4096", SandboxMountPointEnv: `C:\C\0123abcd`}
	cfg, warnings := mustParse(t, sandbox,
		"--v=6", "--hostname-override=win-flannel-1", "--feature-gates=WinOverlay=true", "--proxy-mode=kernelspace",
		"--source-vip=10.244.2.3", `--kubeconfig=C:\C\0123abcd/mounts/var/lib/kube-proxy/kubeconfig.conf`)
	if len(warnings) != 0 {
		t.Errorf("warnings = %q", warnings)
	}
	checkResolved(t, cfg, wantResolved{
		node: "win-flannel-1", network: "flannel.4096", sourceVIP: "10.244.2.3",
		healthz: "0.0.0.0:10256", metrics: "127.0.0.1:10249", bind: "0.0.0.0", debugEndpoint: true,
	})
}
