package app

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
)

// TestInformerFactoriesTrimCachedObjects: the daemon's caches hold objects
// without the bulk hnsproxy never reads (proxier.TrimForCache).
func TestInformerFactoriesTrimCachedObjects(t *testing.T) {
	managed := []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager"}}
	client := fake.NewClientset(
		&v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", ManagedFields: managed}},
		&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-a", ManagedFields: managed},
			Status: v1.NodeStatus{Images: []v1.ContainerImage{{Names: []string{"pause"}}}}},
	)
	factory, nodeFactory, err := newInformerFactories(client, &options.Config{NodeName: "win-a"})
	if err != nil {
		t.Fatal(err)
	}
	services := factory.Core().V1().Services().Lister()
	nodes := nodeFactory.Core().V1().Nodes().Lister()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	factory.Start(ctx.Done())
	nodeFactory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	nodeFactory.WaitForCacheSync(ctx.Done())

	svc, err := services.Services("default").Get("web")
	if err != nil {
		t.Fatal(err)
	}
	node, err := nodes.Get("win-a")
	if err != nil {
		t.Fatal(err)
	}
	if svc.ManagedFields != nil || node.ManagedFields != nil || node.Status.Images != nil {
		t.Errorf("cached objects untrimmed: service %+v, node %+v", svc.ObjectMeta, node)
	}
}

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
	rc, err := kubeconfigClientConfig(kubeconfig, "https://10.0.0.1:6443", getenv)
	if err != nil {
		t.Fatal(err)
	}
	if rc.TLSClientConfig.CAFile != root+"/ca.crt" || rc.BearerTokenFile != root+"/token" || rc.Host != "https://10.0.0.1:6443" {
		t.Errorf("CA %q token file %q host %q; want them below %s and --master's host", rc.TLSClientConfig.CAFile, rc.BearerTokenFile, rc.Host, root)
	}
	if rc, err := kubeconfigClientConfig("", "https://10.0.0.1:6443", getenv); err != nil || rc.Host != "https://10.0.0.1:6443" {
		t.Errorf("--master alone: %v, %v; want its host", rc, err)
	}
	if _, err := kubeconfigClientConfig(kubeconfig, "", func(string) string { return "" }); err == nil {
		t.Error("a kubeconfig naming CONTAINER_SANDBOX_MOUNT_POINT loaded without it set")
	}
}
