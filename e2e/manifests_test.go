//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
)

// deployObjects decodes every object of the manifests deploy/kustomization.yaml lists.
func deployObjects(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	var kust struct {
		Resources []string `json:"resources"`
	}
	raw, err := os.ReadFile("../deploy/kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &kust); err != nil {
		t.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	for _, f := range kust.Resources {
		data, err := os.ReadFile(filepath.Join("../deploy", f))
		if err != nil {
			t.Fatal(err)
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			obj := &unstructured.Unstructured{}
			err := dec.Decode(&obj.Object)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if len(obj.Object) > 0 {
				objs = append(objs, obj)
			}
		}
	}
	return objs
}

// Every manifest in deploy/ passes the real kube-apiserver's validation in
// a server-side dry-run create with strict field validation (the
// HostProcess DaemonSet needs --allow-privileged). A DaemonSet with a field
// the API does not have is refused the same way, so the check can fail.
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
	for _, obj := range deployObjects(t) {
		kinds[obj.GetKind()] = true
		if obj.GetKind() == "DaemonSet" {
			daemonSet = obj.DeepCopy()
		}
		if err := create(obj); err != nil {
			t.Errorf("%s %s/%s: server-side dry-run: %v", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
		}
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
