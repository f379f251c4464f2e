package options

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestExpandSandboxPath(t *testing.T) {
	env := func(root string) func(string) string {
		return func(k string) string {
			if k == SandboxMountPointEnv {
				return root
			}
			return ""
		}
	}
	for _, tc := range []struct{ root, path, want string }{
		{`C:\C\5f0e6a1c\`, `%CONTAINER_SANDBOX_MOUNT_POINT%\var\lib\hnsproxy\config.conf`, `C:\C\5f0e6a1c\var\lib\hnsproxy\config.conf`},
		{`C:\hpc\`, `%CONTAINER_SANDBOX_MOUNT_POINT%\var\lib\hnsproxy\config.conf`, `C:\hpc\var\lib\hnsproxy\config.conf`},
		{`C:\hpc\`, `$env:CONTAINER_SANDBOX_MOUNT_POINT/var/lib/hnsproxy/config.conf`, `C:\hpc/var/lib/hnsproxy/config.conf`},
		{`C:\hpc`, `%CONTAINER_SANDBOX_MOUNT_POINT%\x`, `C:\hpc\x`},
		{``, `C:\ProgramData\hnsproxy\state.json`, `C:\ProgramData\hnsproxy\state.json`},
	} {
		got, err := ExpandSandboxPath(tc.path, env(tc.root))
		if err != nil || got != tc.want {
			t.Errorf("ExpandSandboxPath(%q) with %q = %q, %v; want %q", tc.path, tc.root, got, err, tc.want)
		}
	}
	if _, err := ExpandSandboxPath(`%CONTAINER_SANDBOX_MOUNT_POINT%\x`, env("")); err == nil || !strings.Contains(err.Error(), "HostProcess") {
		t.Errorf("unset %s: %v, want an error saying the path needs a HostProcess container", SandboxMountPointEnv, err)
	}
}

// Complete resolves the config file, the kubeconfig and the state file
// against the sandbox mount point; without it, such a path is an error.
func TestCompleteExpandsSandboxPaths(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "var", "lib", "hnsproxy"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "var", "lib", "hnsproxy", "config.conf"), []byte(
		"apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n"+
			"clientConnection:\n  kubeconfig: $env:CONTAINER_SANDBOX_MOUNT_POINT/var/lib/hnsproxy/kubeconfig.conf\n"+
			"winkernel:\n  networkName: cbr0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{SandboxMountPointEnv: root + "/"}
	cfg, _ := mustParse(t, env, "--config=%CONTAINER_SANDBOX_MOUNT_POINT%/var/lib/hnsproxy/config.conf",
		"--state-file=%CONTAINER_SANDBOX_MOUNT_POINT%/state.json")
	if want := root + "/var/lib/hnsproxy/kubeconfig.conf"; cfg.Kubeconfig != want {
		t.Errorf("kubeconfig = %q, want %q", cfg.Kubeconfig, want)
	}
	if want := root + "/state.json"; cfg.StateFile != want {
		t.Errorf("state file = %q, want %q", cfg.StateFile, want)
	}
	_, _, _, _, err := parse(t, kubeNetwork, "--kubeconfig=%CONTAINER_SANDBOX_MOUNT_POINT%/kubeconfig.conf")
	wantError(t, err, "HostProcess")
}

// kubeadm's paths (/var/lib/kube-proxy/..., /var/run/secrets/...) are read
// below the sandbox mount point when the file is there, on both layouts;
// paths with a drive, UNC paths, relative paths, a missing file and a run
// outside a HostProcess container keep the path as written.
func TestResolveInputPath(t *testing.T) {
	const kubeadm = "/var/lib/kube-proxy/kubeconfig.conf"
	slash := func(p string) string { return strings.ReplaceAll(p, `\`, "/") }
	for _, tc := range []struct{ root, path, want string }{
		{`C:\C\5f0e6a1c\`, kubeadm, `C:\C\5f0e6a1c` + kubeadm},
		{`C:\hpc\`, kubeadm, `C:\hpc` + kubeadm},
		{`C:\hpc\`, `\var\lib\kube-proxy\config.conf`, `C:\hpc\var\lib\kube-proxy\config.conf`},
		{`C:\hpc\`, "%CONTAINER_SANDBOX_MOUNT_POINT%/var/lib/kube-proxy/config.conf", `C:\hpc/var/lib/kube-proxy/config.conf`},
		{`C:\hpc\`, "/var/run/secrets/kubernetes.io/serviceaccount/token", "/var/run/secrets/kubernetes.io/serviceaccount/token"},
		{`C:\hpc\`, `C:\var\lib\kube-proxy\kubeconfig.conf`, `C:\var\lib\kube-proxy\kubeconfig.conf`},
		{`C:\hpc\`, `\\server\share\var\lib\kube-proxy\x`, `\\server\share\var\lib\kube-proxy\x`},
		{`C:\hpc\`, "var/lib/kube-proxy/x", "var/lib/kube-proxy/x"},
		{``, kubeadm, kubeadm},
	} {
		root := strings.TrimRight(tc.root, `\`)
		got, err := ResolveInputPath(tc.path, func(k string) string {
			if k == SandboxMountPointEnv {
				return tc.root
			}
			return ""
		}, func(p string) bool { return strings.HasPrefix(slash(p), slash(root)+"/var/lib/kube-proxy/") }) // the volume
		if err != nil || got != tc.want {
			t.Errorf("ResolveInputPath(%q) in %q = %q, %v; want %q", tc.path, tc.root, got, err, tc.want)
		}
	}
}

// A kubeadm config file read through its Linux path in a HostProcess
// container resolves its kubeconfig the same way, and the resolved config
// path is what the daemon watches for changes.
func TestCompleteReadsKubeadmPathsBelowTheSandbox(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "var", "lib", "kube-proxy")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"config.conf": "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n" +
			"clientConnection:\n  kubeconfig: /var/lib/kube-proxy/kubeconfig.conf\n",
		"kubeconfig.conf": "apiVersion: v1\nkind: Config\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{SandboxMountPointEnv: root, "KUBE_NETWORK": "Calico"}
	cfg, _ := mustParse(t, env, "--config=/var/lib/kube-proxy/config.conf")
	if want := root + "/var/lib/kube-proxy/kubeconfig.conf"; cfg.Kubeconfig != want {
		t.Errorf("kubeconfig = %q, want %q", cfg.Kubeconfig, want)
	}
	if want := root + "/var/lib/kube-proxy/config.conf"; cfg.ConfigFile != want {
		t.Errorf("config file = %q, want %q (the file the daemon watches)", cfg.ConfigFile, want)
	}
	if cfg.Winkernel.NetworkName != "Calico" {
		t.Errorf("network = %q, want KUBE_NETWORK's", cfg.Winkernel.NetworkName)
	}
}

// A state file in the HostProcess container's own volume, named through
// the sandbox mount point or by the path it resolves to, is lost at every
// container start (Kubernetes makes that volume anew each time: "a new
// volume is created on the host upon starting the container"), and with it
// which load balancers hnsproxy owns: each restart and each upgrade would
// begin as a first start. hnsproxy runs with it, and warns, naming the
// exception it cannot tell from the path: a hostPath volume mounted there.
// The default, on the host, draws no warning.
func TestStateFileInTheSandboxIsWarned(t *testing.T) {
	root := t.TempDir()
	env := map[string]string{SandboxMountPointEnv: root + `\`, "KUBE_NETWORK": "l2bridge"}
	for _, stateFile := range []string{"%CONTAINER_SANDBOX_MOUNT_POINT%/var/lib/hnsproxy/state.json", root + "/state.json"} {
		cfg, warnings := mustParse(t, env, "--state-file="+stateFile)
		if !slices.ContainsFunc(warnings, func(w string) bool {
			return strings.Contains(w, "--state-file") && strings.Contains(w, cfg.StateFile) && strings.Contains(w, "anew at each start") && strings.Contains(w, "hostPath")
		}) {
			t.Errorf("--state-file=%s: warnings %q, want one saying the file is lost at each container start", stateFile, warnings)
		}
	}
	for _, e := range []map[string]string{env, kubeNetwork} {
		if _, warnings := mustParse(t, e); slices.ContainsFunc(warnings, func(w string) bool { return strings.Contains(w, "--state-file") }) {
			t.Errorf("default state file warned in %v: %q", e, warnings)
		}
	}
}
