package kubeapi

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
)

// The kubeconfig's files are found below the sandbox mount point, and
// --master still applies over its server.
func TestKubeconfigInHostProcessContainer(t *testing.T) {
	root := t.TempDir()
	for name, content := range map[string]string{"ca.crt": "not parsed here", "token": "t0ken"} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	kubeconfig := filepath.Join(root, "kubeconfig.conf")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters:
- name: default
  cluster:
    certificate-authority: '%CONTAINER_SANDBOX_MOUNT_POINT%/ca.crt'
    server: https://kubernetes.example:6443
users:
- name: default
  user:
    tokenFile: '%CONTAINER_SANDBOX_MOUNT_POINT%/token'
contexts:
- name: default
  context: {cluster: default, user: default}
current-context: default
`), 0o600); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		if k == options.SandboxMountPointEnv {
			return root + "/"
		}
		return ""
	}
	rc, err := clientConfig(kubeconfig, "https://10.0.0.1:6443", getenv)
	if err != nil {
		t.Fatal(err)
	}
	if rc.TLSClientConfig.CAFile != root+"/ca.crt" || rc.BearerTokenFile != root+"/token" || rc.Host != "https://10.0.0.1:6443" {
		t.Errorf("CA %q token file %q host %q; want them below %s and --master's host", rc.TLSClientConfig.CAFile, rc.BearerTokenFile, rc.Host, root)
	}
	if rc, err := clientConfig("", "https://10.0.0.1:6443", getenv); err != nil || rc.Host != "https://10.0.0.1:6443" {
		t.Errorf("--master alone: %v, %v; want its host", rc, err)
	}
	if _, err := clientConfig(kubeconfig, "", func(string) string { return "" }); err == nil {
		t.Error("a kubeconfig naming CONTAINER_SANDBOX_MOUNT_POINT loaded without it set")
	}
}
