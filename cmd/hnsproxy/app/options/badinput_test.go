package options

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHostileConfigFiles is the configuration loader's part of the bad-input
// table. Like kube-proxy (cmd/kube-proxy/app/options.go loadConfig), a file
// with unknown or duplicate fields is decoded strictly, then leniently with
// a warning, and its known fields apply; anything else wrong is an error
// that names the problem.
func TestHostileConfigFiles(t *testing.T) {
	const head = "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n"
	dir := t.TempDir()
	for _, c := range []struct {
		name, body string
		// warning (lenient decode) or error expected, as a substring.
		warning, err string
		// network is the winkernel network name the daemon ends up with.
		network string
	}{
		{"unknown top-level field", head + "winkernel: {networkName: vxlan0}\nfrobnicate: true\n", "unknown field \"frobnicate\"", "", "vxlan0"},
		{"unknown nested field", head + "winkernel: {networkName: vxlan0, dsrMode: always}\n", "unknown field \"winkernel.dsrMode\"", "", "vxlan0"},
		{"duplicate field: the last wins", head + "winkernel: {networkName: a}\nwinkernel: {networkName: b}\n", "already set in map", "", "b"},
		{"unknown field in JSON", `{"apiVersion":"kubeproxy.config.k8s.io/v1alpha1","kind":"KubeProxyConfiguration","winkernel":{"networkName":"x"},"x":1}`, "unknown field \"x\"", "", "x"},
		{"wrong type", head + "winkernel: {networkName: [a, b]}\n", "", "decoding", ""},
		{"unknown apiVersion", "apiVersion: kubeproxy.config.k8s.io/v9\nkind: KubeProxyConfiguration\n", "", "decoding", ""},
		{"another kind", "apiVersion: v1\nkind: ConfigMap\ndata: {}\n", "", "decoding", ""},
		{"empty file", "", "", "decoding", ""},
		{"binary", "\x00\x01\xff\xfe", "", "decoding", ""},
		{"DEL in the network name (JSON)", `{"apiVersion":"kubeproxy.config.k8s.io/v1alpha1","kind":"KubeProxyConfiguration","winkernel":{"networkName":"vx\u007flan0"}}`, "", `winkernel.networkName: control character '\x7f' at byte 2`, ""},
		{"escape in a listed address", head + "nodePortAddresses: [\"10.0.0.0/8\", \"\\e[31m\"]\n", "", `nodePortAddresses[1]: control character '\x1b'`, ""},
		{"C1 control in a feature gate", head + "featureGates: {\"WinDSR\\u0085\": true}\n", "", "featureGates key: control character", ""},
		{"YAML alias bomb", head + "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n", "", "decoding", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".yaml")
			if err := os.WriteFile(p, []byte(c.body), 0o600); err != nil {
				t.Fatal(err)
			}
			_, _, cfg, warnings, err := parse(t, nil, "--config="+p)
			if c.err != "" {
				wantError(t, err, c.err)
				return
			}
			if err != nil {
				t.Fatalf("rejected: %v", err)
			}
			wantWarning(t, warnings, "lenient decoding")
			wantWarning(t, warnings, c.warning)
			if cfg.Winkernel.NetworkName != c.network {
				t.Errorf("network %q, want %q", cfg.Winkernel.NetworkName, c.network)
			}
		})
	}
	_, _, _, _, err := parse(t, nil, "--config="+dir)
	wantError(t, err, "reading config file")
}

// TestConfigFilesAsWindowsToolsSaveThem: a config file as Notepad and
// PowerShell 5.1 save it (CRLF; a UTF-8 byte order mark; UTF-16LE with one,
// which Out-File and > write) loads as kube-proxy loads it: its decoder
// (go-yaml) reads each. A Windows path in double quotes, where YAML and
// JSON take each backslash for an escape, or a tab in the indentation
// (Notepad's Tab key), is refused as kube-proxy refuses it, and the error
// says why.
func TestConfigFilesAsWindowsToolsSaveThem(t *testing.T) {
	files, err := filepath.Glob("testdata/windows-saved/*.*")
	if err != nil || len(files) < 5 {
		t.Fatalf("fixtures %v, %v", files, err)
	}
	for _, f := range files {
		if filepath.Base(f) == ".gitattributes" {
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			_, _, cfg, _, err := parse(t, nil, "--config="+f)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Winkernel.NetworkName != "vxlan0" || cfg.Kubeconfig != `C:\k\kubeconfig` {
				t.Errorf("network %q, kubeconfig %q; want vxlan0 and C:\\k\\kubeconfig", cfg.Winkernel.NetworkName, cfg.Kubeconfig)
			}
		})
	}
	const head = "apiVersion: kubeproxy.config.k8s.io/v1alpha1\r\nkind: KubeProxyConfiguration\r\nwinkernel: {networkName: vxlan0}\r\n"
	for name, body := range map[string]string{
		"YAML": head + "clientConnection:\r\n  kubeconfig: \"C:\\k\\kubeconfig\"\r\n",
		"JSON": `{"apiVersion": "kubeproxy.config.k8s.io/v1alpha1", "kind": "KubeProxyConfiguration", "clientConnection": {"kubeconfig": "C:\k\kubeconfig"}}`,
		// \t and \f are escapes YAML knows: the path would hold a tab.
		"YAML, known escapes": head + "clientConnection:\r\n  kubeconfig: \"C:\\temp\\fabric.conf\"\r\n",
	} {
		t.Run("double-quoted Windows path in "+name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "config.conf")
			if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			_, _, _, _, err := parse(t, nil, "--config="+p)
			wantError(t, err, "a backslash inside double quotes starts an escape")
		})
	}
	for name, body := range map[string]string{
		"a tab for the indentation":             head + "clientConnection:\r\n\tkubeconfig: C:\\k\\kubeconfig\r\n",
		"a tab after spaces in the indentation": head + "clientConnection:\r\n  kubeconfig: C:\\k\\kubeconfig\r\n  \tqps: 5\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "config.conf")
			if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			_, _, _, _, err := parse(t, nil, "--config="+p)
			wantError(t, err, "YAML indents with spaces only")
		})
	}
}
