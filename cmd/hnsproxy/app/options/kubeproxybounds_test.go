package options

import (
	"os"
	"path/filepath"
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
