package options

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// configArg writes a KubeProxyConfiguration with body after its apiVersion
// and kind, and returns the --config flag naming it.
func configArg(t *testing.T, body string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(file, []byte("apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n"+body), 0o600); err != nil {
		t.Fatal(err)
	}
	return "--config=" + file
}

// kube-proxy's v1alpha1 defaulting listens where bindAddress's IP family
// is: a config file with an IPv6 bindAddress and no server addresses
// serves health checks on [::]:10256 and metrics on [::1]:10249, not on
// IPv4 addresses an IPv6-only node may not have.
func TestIPv6BindAddressInTheFileDefaultsIPv6Listeners(t *testing.T) {
	for bind, want := range map[string][2]string{
		"\"::\"":      {"[::]:10256", "[::1]:10249"},
		"fd00::5":     {"[::]:10256", "[::1]:10249"},
		"10.0.0.5":    {"0.0.0.0:10256", "127.0.0.1:10249"},
		"\"0.0.0.0\"": {"0.0.0.0:10256", "127.0.0.1:10249"},
	} {
		cfg, _ := mustParse(t, nil, configArg(t, "winkernel: {networkName: cbr0}\nbindAddress: "+bind+"\n"))
		if cfg.HealthzBindAddress != want[0] || cfg.MetricsBindAddress != want[1] {
			t.Errorf("bindAddress %s: healthz %q metrics %q, want %q %q (kube-proxy's defaults)", bind, cfg.HealthzBindAddress, cfg.MetricsBindAddress, want[0], want[1])
		}
	}
}

// Each bound kube-proxy's validation (or hnsproxy's, for its own flags)
// sets refuses the first value past it and accepts the value at it: a
// zero period would spin or never sync, and a malformed address from a
// config file (where the flags' parsing does not look) must stop the
// start, naming the setting.
func TestValidationBounds(t *testing.T) {
	const net = "winkernel: {networkName: cbr0}\n"
	for _, c := range []struct {
		name string
		args []string
		want string // what the error says; "" accepts
	}{
		{"syncPeriod 0 with minSyncPeriod 0", []string{"--sync-period=0", "--min-sync-period=0"}, "must be greater than 0"},
		{"configSyncPeriod 0", []string{"--config-sync-period=0"}, "configSyncPeriod"},
		{"configSyncPeriod 1ns", []string{"--config-sync-period=1ns"}, ""},
		{"negative configSyncPeriod in the file (0 there is the default)", []string{configArg(t, net+"configSyncPeriod: -1s\n")}, "configSyncPeriod"},
		{"minSyncPeriod equal to syncPeriod", []string{"--sync-period=5s", "--min-sync-period=5s"}, ""},
		{"burst -1", []string{configArg(t, net+"clientConnection: {burst: -1}\n")}, "burst"},
		{"hns-network-timeout 0", []string{"--hns-network-timeout=0"}, "hnsNetworkTimeout"},
		{"hns-call-timeout 0", []string{"--hns-call-timeout=0"}, "hnsCallTimeout"},
		{"hns-list-timeout 0", []string{"--hns-list-timeout=0"}, "hnsListTimeout"},
		{"sourceVip not an IP in the file", []string{configArg(t, "winkernel: {networkName: cbr0, sourceVip: 10.244.0}\n")}, "sourceVip"},
		{"bindAddress not an IP in the file", []string{configArg(t, net+"bindAddress: node-1\n")}, "bindAddress"},
	} {
		_, _, _, _, err := parse(t, kubeNetwork, c.args...)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// --vmodule on the command line applies over a config file's logging.vmodule:
// its entries come first, and klog takes the first pattern a file matches,
// so `--config f --vmodule=proxier=6` logs the proxier at 6 where the file
// says 2.
func TestVModuleFlagComesBeforeTheFiles(t *testing.T) {
	cfg, _ := mustParse(t, nil, configArg(t, "winkernel: {networkName: cbr0}\nlogging:\n  vmodule:\n  - {filePattern: proxier, verbosity: 2}\n  - {filePattern: sync, verbosity: 3}\n"),
		"--vmodule=proxier=6")
	var got []string
	for _, v := range cfg.Logging.VModule {
		got = append(got, fmt.Sprintf("%s=%d", v.FilePattern, v.Verbosity))
	}
	if strings.Join(got, ",") != "proxier=6,proxier=2,sync=3" {
		t.Errorf("vmodule %q, want the flag's proxier=6 first, then the file's proxier=2,sync=3", got)
	}
}

// --write-config-to writes the configuration kube-proxy writes, which the
// deprecated --healthz-port and --metrics-port do not touch (kube-proxy
// applies them only without --config and --write-config-to): the file
// keeps the health server's address, where --healthz-port=0 would write
// an empty one.
func TestWriteConfigLeavesTheDeprecatedPortFlagsOut(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.yaml")
	cfg, _ := mustParse(t, kubeNetwork, "--write-config-to="+out, "--healthz-port=0")
	if cfg.Source.HealthzBindAddress != "0.0.0.0:10256" {
		t.Errorf("written healthzBindAddress %q, want kube-proxy's 0.0.0.0:10256", cfg.Source.HealthzBindAddress)
	}
}

// So a bare IP in --healthz-bind-address or --metrics-bind-address, which
// the deprecated port makes IP:port when the proxy runs, stays bare for
// --write-config-to, and validation refuses it as kube-proxy's does (its
// Complete skips the ports there and its Validate checks host:port),
// rather than writing a file that would be refused when read.
func TestWriteConfigRefusesABareBindIP(t *testing.T) {
	for flag, field := range map[string]string{"--healthz-bind-address": "healthzBindAddress", "--metrics-bind-address": "metricsBindAddress"} {
		out := filepath.Join(t.TempDir(), "out.yaml")
		if _, _, _, _, err := parse(t, kubeNetwork, flag+"=0.0.0.0"); err != nil {
			t.Fatalf("running with %s a bare IP: %v, want it completed with the deprecated port", flag, err)
		}
		_, _, _, _, err := parse(t, kubeNetwork, "--write-config-to="+out, flag+"=0.0.0.0")
		if err == nil || !strings.Contains(err.Error(), field) || !strings.Contains(err.Error(), "must be IP:port") {
			t.Errorf("--write-config-to with %s a bare IP: %v, want %s refused as not IP:port", flag, err, field)
		}
		if _, statErr := os.Stat(out); !os.IsNotExist(statErr) {
			t.Errorf("%s: a refused configuration was written (stat: %v)", flag, statErr)
		}
	}
}
