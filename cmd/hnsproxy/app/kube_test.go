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
	"k8s.io/apimachinery/pkg/fields"
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

// TestListsLeaveOutWhatKubeProxyLeavesOut: the proxier's lists skip the
// Services another proxy implements and headless Services, and the slices
// of both, as kube-proxy's do. A fake clientset applies label selectors
// only, so the Services' field selector is evaluated here as the apiserver
// would (spec.clusterIP is one of a Service's selectable fields).
func TestListsLeaveOutWhatKubeProxyLeavesOut(t *testing.T) {
	other := map[string]string{labelServiceProxyName: "other-proxy"}
	headless := map[string]string{v1.IsHeadlessService: ""}
	client := fake.NewClientset(
		&v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}, Spec: v1.ServiceSpec{ClusterIP: "10.96.0.10"}},
		&v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "elsewhere", Labels: other}, Spec: v1.ServiceSpec{ClusterIP: "10.96.0.11"}},
		&v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "db"}, Spec: v1.ServiceSpec{ClusterIP: v1.ClusterIPNone}},
		&discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-1"}},
		&discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "elsewhere-1", Labels: other}},
		&discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "db-1", Labels: headless}},
	)
	narrowServices, narrowSlices, err := proxiedLists()
	if err != nil {
		t.Fatal(err)
	}
	var so, eo metav1.ListOptions
	narrowServices(&so)
	narrowSlices(&eo)
	ctx := context.Background()
	svcs, err := client.CoreV1().Services("").List(ctx, so)
	if err != nil {
		t.Fatal(err)
	}
	byField, err := fields.ParseSelector(so.FieldSelector)
	if err != nil {
		t.Fatalf("Services' field selector %q: %v", so.FieldSelector, err)
	}
	var served []string
	for _, svc := range svcs.Items {
		if byField.Matches(fields.Set{"spec.clusterIP": svc.Spec.ClusterIP}) {
			served = append(served, svc.Name)
		}
	}
	slices, err := client.DiscoveryV1().EndpointSlices("").List(ctx, eo)
	if err != nil {
		t.Fatal(err)
	}
	if len(served) != 1 || served[0] != "web" || len(slices.Items) != 1 || slices.Items[0].Name != "web-1" {
		t.Errorf("narrowed lists hold Services %v and %d slices (selectors %q, %q; %q), want web and web-1",
			served, len(slices.Items), so.LabelSelector, so.FieldSelector, eo.LabelSelector)
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
