package kubeapi

import (
	"path/filepath"
	"testing"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
)

// The kubeconfig's files are found below the sandbox mount point, and
// --master still applies over its server.
func TestKubeconfigInHostProcessContainer(t *testing.T) {
	root, err := filepath.Abs("testdata/hostprocess")
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(root, "kubeconfig.conf")
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
