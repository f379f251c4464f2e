//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
)

// The fixtures the migration overlay works with (their sources are named in each).
const (
	kubeadmConfigMapFixture = "../deploy/testdata/kubeadm-kube-proxy.yaml"
	kubeProxyWindowsFixture = "../deploy/testdata/sig-windows-tools-kube-proxy-windows.yaml"
)

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// manifestObjects decodes every object of what `kubectl apply -k` makes of
// deploy/ and of the migration overlay deploy/replace-kube-proxy, and of
// the fixtures the overlay works with (kubeadm's kube-proxy ConfigMap,
// sig-windows-tools' kube-proxy-windows DaemonSet).
func manifestObjects(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	for _, dir := range []string{"../deploy", "../deploy/replace-kube-proxy"} {
		res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
		if err != nil {
			t.Fatalf("kustomize build %s: %v", dir, err)
		}
		data, err := res.AsYaml()
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, decodeObjects(t, dir, data)...)
	}
	for _, f := range []string{kubeadmConfigMapFixture, kubeProxyWindowsFixture} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, decodeObjects(t, f, data)...)
	}
	return objs
}

// decodeObjects decodes a stream of YAML documents.
func decodeObjects(t *testing.T, name string, data []byte) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		obj := &unstructured.Unstructured{}
		err := dec.Decode(&obj.Object)
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(obj.Object) > 0 {
			objs = append(objs, obj)
		}
	}
}

// Every manifest in deploy/ (the plain install and the migration overlay,
// as kustomize builds them) passes the real kube-apiserver's validation in
// a server-side dry-run create with strict field validation (the
// HostProcess DaemonSets need --allow-privileged), and so does the overlay's
// patch of kube-proxy-windows, applied to sig-windows-tools' DaemonSet. A
// DaemonSet with a field the API does not have is refused the same way, so
// the check can fail.
func TestManifestsServerSideDryRun(t *testing.T) {
	cp := framework.StartForTest(t)
	cfg, err := cp.AdminConfig()
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: metav1.FieldValidationStrict}
	create := func(obj *unstructured.Unstructured) error {
		gvk := obj.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return err
		}
		_, err = dyn.Resource(m.Resource).Namespace(obj.GetNamespace()).Create(context.Background(), obj, dryRun)
		return err
	}

	kinds := map[string]bool{}
	var daemonSet *unstructured.Unstructured
	for _, obj := range manifestObjects(t) {
		kinds[obj.GetKind()] = true
		if obj.GetKind() == "DaemonSet" {
			daemonSet = obj.DeepCopy()
		}
		if err := create(obj); err != nil {
			t.Errorf("%s %s/%s: server-side dry-run: %v", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
		}
	}

	// kube-proxy-windows as sig-windows-tools installs it, then the overlay's
	// patch of it, as `kubectl patch --type strategic` sends it.
	kubeProxy := decodeObjects(t, kubeProxyWindowsFixture, mustRead(t, kubeProxyWindowsFixture))[0]
	dsClient := dyn.Resource(appsv1.SchemeGroupVersion.WithResource("daemonsets")).Namespace(kubeProxy.GetNamespace())
	if _, err := dsClient.Create(context.Background(), kubeProxy, metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict}); err != nil {
		t.Fatalf("creating kube-proxy-windows: %v", err)
	}
	patch, err := yaml.YAMLToJSON(mustRead(t, "../deploy/replace-kube-proxy/kube-proxy-windows-patch.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	patched, err := dsClient.Patch(context.Background(), kubeProxy.GetName(), types.StrategicMergePatchType, patch,
		metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: metav1.FieldValidationStrict})
	if err != nil {
		t.Fatalf("patching kube-proxy-windows: %v", err)
	}
	if terms, _, _ := unstructured.NestedSlice(patched.Object, "spec", "template", "spec", "affinity", "nodeAffinity",
		"requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms"); len(terms) != 1 {
		t.Errorf("patched kube-proxy-windows has node selector terms %v, want the one that excludes hnsproxy's nodes", terms)
	}
	for _, k := range []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ConfigMap", "DaemonSet"} {
		if !kinds[k] {
			t.Errorf("no %s in deploy/", k)
		}
	}
	if daemonSet == nil {
		t.Fatal("no DaemonSet to try a broken copy of")
	}
	if err := unstructured.SetNestedField(daemonSet.Object, true, "spec", "template", "spec", "hostProcess"); err != nil {
		t.Fatal(err)
	}
	if err := create(daemonSet); err == nil {
		t.Error("a DaemonSet with an unknown field passed the dry-run: the check checks nothing")
	}
}
