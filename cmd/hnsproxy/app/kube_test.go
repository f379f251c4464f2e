package app

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
)

// TestNodeInformersTrimCachedObjects: the daemon's Node cache holds this
// node without the bulk hnsproxy never reads (proxier.TrimForCache).
func TestNodeInformersTrimCachedObjects(t *testing.T) {
	managed := []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager"}}
	client := fake.NewClientset(
		&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-a", ManagedFields: managed},
			Status: v1.NodeStatus{Images: []v1.ContainerImage{{Names: []string{"pause"}}}}},
	)
	nodeFactory := newNodeInformers(client, &options.Config{NodeName: "win-a"})
	nodes := nodeFactory.Core().V1().Nodes().Lister()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nodeFactory.Start(ctx.Done())
	nodeFactory.WaitForCacheSync(ctx.Done())

	node, err := nodes.Get("win-a")
	if err != nil {
		t.Fatal(err)
	}
	if node.ManagedFields != nil || node.Status.Images != nil {
		t.Errorf("cached node untrimmed: %+v", node)
	}
}

// TestListsLeaveOutOtherProxies: the proxier's lists skip the Services (and
// their slices) another proxy implements, as kube-proxy's do.
func TestListsLeaveOutOtherProxies(t *testing.T) {
	other := map[string]string{labelServiceProxyName: "other-proxy"}
	client := fake.NewClientset(
		&v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}},
		&v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "elsewhere", Labels: other}},
		&discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-1"}},
		&discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "elsewhere-1", Labels: other}},
	)
	narrow, err := withoutOtherProxies()
	if err != nil {
		t.Fatal(err)
	}
	var o metav1.ListOptions
	narrow(&o)
	ctx := context.Background()
	svcs, err := client.CoreV1().Services("").List(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	slices, err := client.DiscoveryV1().EndpointSlices("").List(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(svcs.Items) != 1 || svcs.Items[0].Name != "web" || len(slices.Items) != 1 || slices.Items[0].Name != "web-1" {
		t.Errorf("narrowed lists hold %d Services and %d slices (selector %q), want web and web-1", len(svcs.Items), len(slices.Items), o.LabelSelector)
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
