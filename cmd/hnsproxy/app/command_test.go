package app

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
)

func execute(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := NewCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func TestHelpListsKubeProxyAndHNSProxyFlags(t *testing.T) {
	out, err := execute(t, "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{
		"--proxy-mode", "--config", "--kubeconfig", "--master", "--hostname-override", "--cluster-cidr",
		"--feature-gates", "--healthz-bind-address", "--metrics-bind-address", "--min-sync-period", "--sync-period",
		"--network-name", "--source-vip", "--enable-dsr", "--root-hnsendpoint-name", "--forward-healthcheck-vip",
		"-v, --v", "--version", "--max-backends-per-lb", "--drift-repair-period", "--state-file", "--takeover", "--refuse-node-external-ips", "--hns-endpoint",
		"--hns-sim-profile", "--enable-debug-endpoint", "--masquerade-all", "--conntrack-max-per-core", "--ipvs-scheduler",
	} {
		if !strings.Contains(out, flag) {
			t.Errorf("--help does not list %s", flag)
		}
	}
	for _, section := range []string{"Kube-proxy flags:", "Windows (winkernel) flags:", "Hnsproxy flags:", "Linux-only (accepted for compatibility, no effect) flags:", "Logging flags:"} {
		if !strings.Contains(out, section) {
			t.Errorf("--help has no section %q", section)
		}
	}
}

func TestVersion(t *testing.T) {
	out, err := execute(t, "--version")
	if err != nil || !strings.HasPrefix(out, "Kubernetes v1.37.0 (hnsproxy v") {
		t.Errorf("--version = %q, %v", out, err)
	}
	// Calico's kube-proxy start script (projectcalico, Windows
	// kube-proxy-service.ps1) matches "v([0-9])\.([0-9]+)" and needs >= 1.14
	// to keep --enable-dsr and start overlay.
	m := regexp.MustCompile(`v([0-9])\.([0-9]+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("Calico's version pattern finds nothing in %q", out)
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	if !(major > 1 || major == 1 && minor >= 14) {
		t.Errorf("Calico's script reads v%d.%d from %q: below 1.14", major, minor, out)
	}
	out, err = execute(t, "--version=raw")
	if err != nil || !strings.Contains(out, "GitVersion:") {
		t.Errorf("--version=raw = %q, %v", out, err)
	}
	if _, err := execute(t, "--version=maybe"); err == nil {
		t.Error("--version=maybe parsed")
	}
}

func TestBadCommandLines(t *testing.T) {
	cases := map[string][]string{
		`implements only "kernelspace"`: {"--proxy-mode=ipvs", "--network-name=n"},
		"does not take any arguments":   {"extra"},
		"unknown flag":                  {"--no-such-flag"},
		"KUBE_NETWORK":                  {"--hns-endpoint=sim"},
	}
	t.Setenv("KUBE_NETWORK", "")
	for want, args := range cases {
		out, err := execute(t, args...)
		if err == nil || !strings.Contains(err.Error()+out, want) {
			t.Errorf("%v: err %v, output %q; want %q", args, err, out, want)
		}
	}
}

// kube-up's GCE Windows nodes split KUBEPROXY_ARGS on single spaces, so
// an argument may be empty (options' TestGCEWindowsKubeProxyArgs):
// kube-proxy's command takes an empty argument for none, and so does
// hnsproxy's.
func TestEmptyArgumentsAreNone(t *testing.T) {
	path := t.TempDir() + "/kube-proxy.yaml"
	if out, err := execute(t, "", "--network-name=l2bridge", "", "--write-config-to="+path, ""); err != nil {
		t.Errorf("empty arguments: %v %s", err, out)
	}
}

// --write-config-to writes the configuration kube-proxy would run with:
// the flags', or with --config the file's (the flags it ignores stay out;
// --hostname-override and the logging flags go in), and it loads back.
func TestWriteConfigTo(t *testing.T) {
	t.Setenv("KUBE_NETWORK", "")
	path := t.TempDir() + "/kube-proxy.yaml"
	if _, err := execute(t, "--network-name=vxlan0", "--source-vip=10.0.0.2", "--write-config-to="+path); err != nil {
		t.Fatal(err)
	}
	again := t.TempDir() + "/again.yaml"
	out, err := execute(t, "--config="+path, "--network-name=ignored", "--hostname-override=Win-2", "-v=3", "--write-config-to="+again)
	if err != nil {
		t.Fatalf("the written config does not load back: %v %s", err, out)
	}
	kp, _, _, err := options.LoadConfigFile(again)
	if err != nil {
		t.Fatal(err)
	}
	if kp.Winkernel.NetworkName != "vxlan0" || kp.Winkernel.SourceVip != "10.0.0.2" || kp.HostnameOverride != "win-2" || kp.Logging.Verbosity != 3 {
		t.Errorf("with --config wrote network %q, source VIP %q, hostnameOverride %q, verbosity %d; want the file's, win-2 and 3",
			kp.Winkernel.NetworkName, kp.Winkernel.SourceVip, kp.HostnameOverride, kp.Logging.Verbosity)
	}
	if _, err := execute(t, "--write-config-to="+t.TempDir()+"/bare.yaml"); err != nil {
		t.Errorf("--write-config-to without a network name: %v; kube-proxy writes the file", err)
	}
}
