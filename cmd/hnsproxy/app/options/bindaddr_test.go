package options

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// kube-proxy reads the IP of --healthz-bind-address and
// --metrics-bind-address sloppily (ParseIPSloppy, then ParseCIDRSloppy
// after its v1alpha1 conversion), as hnsproxy's validation does: an IPv4
// part with leading zeros is decimal, so "127.000.000.001" is 127.0.0.1 and
// its servers listen there. Go's net.Listen takes such text for a host name:
// it fails to resolve it (or, through Windows' resolver, reads the parts as
// octal), so the address hnsproxy accepted was never listened on, /healthz
// never answered and the liveness probe restarted the pod for ever.
func TestBindAddressesWithLeadingZerosListenWhereKubeProxyListens(t *testing.T) {
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(free.Addr().(*net.TCPAddr).Port)
	free.Close()

	listensOn := func(t *testing.T, what, addr, want string) {
		t.Helper()
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Errorf("%s %q: the server cannot listen: %v", what, addr, err)
			return
		}
		defer ln.Close()
		if got := ln.Addr().String(); got != want {
			t.Errorf("%s %q listens on %s, want %s", what, addr, got, want)
		}
	}

	cfg, _ := mustParse(t, kubeNetwork, "--healthz-bind-address=127.000.000.001:"+port, "--metrics-bind-address=127.0.0.01")
	listensOn(t, "--healthz-bind-address", cfg.HealthzBindAddress, "127.0.0.1:"+port)
	if cfg.MetricsBindAddress != "127.0.0.1:10249" {
		t.Errorf("--metrics-bind-address=127.0.0.01 serves on %q, want 127.0.0.1:10249", cfg.MetricsBindAddress)
	}

	file := filepath.Join(t.TempDir(), "config.yaml")
	body := "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nwinkernel: {networkName: cbr0}\n" +
		"healthzBindAddress: 127.00.0.1:" + port + "\n"
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, _ = mustParse(t, nil, "--config="+file)
	listensOn(t, "healthzBindAddress", cfg.HealthzBindAddress, "127.0.0.1:"+port)
}
