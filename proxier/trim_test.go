package proxier

import (
	"context"
	"reflect"
	"testing"
	"time"
	"unique"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
	"github.com/hnsproxy/hnsproxy/reconciler"
	"github.com/hnsproxy/hnsproxy/sim"
)

// TestInformerCachesHoldTrimmedObjects: what the API server sends in bulk
// and hnsproxy never reads stays out of the caches; what it reads stays in.
func TestInformerCachesHoldTrimmedObjects(t *testing.T) {
	managed := []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate}}
	svc := service("web", "10.96.0.10")
	svc.ManagedFields = managed
	svc.Spec.Selector = map[string]string{"app": "web"}
	svc.Annotations = map[string]string{
		v1.LastAppliedConfigAnnotation:        `{"kind":"Service"}`,
		"meta.helm.sh/release-name":           "web",
		desired.PreserveDestinationAnnotation: "true",
	}
	svc.Labels = map[string]string{"app.kubernetes.io/name": "web", "helm.sh/chart": "web-1.0.0"}
	svc.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "operator"}}
	sl := slice("web", endpoint{"10.244.1.5", nodeName}, endpoint{"10.244.1.6", nodeName}, endpoint{"10.244.2.7", "other"})
	sl.ManagedFields = managed
	sl.GenerateName = "web-"
	sl.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: "web"}}
	sl.Labels[discoveryv1.LabelManagedBy] = "endpointslice-controller.k8s.io"
	sl.Labels["app"] = "web"
	sl.Annotations = map[string]string{triggerTimeAnnotation: "2026-11-26T08:00:00Z", "example.com/note": "x"}
	sl.Endpoints[0].TargetRef = &v1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web-1"}
	sl.Endpoints[0].Hostname = ptr.To("web-1")
	sl.Endpoints[0].Zone = ptr.To("zone-a")
	sl.Endpoints[2].Conditions = discoveryv1.EndpointConditions{Ready: ptr.To(false), Serving: ptr.To(true), Terminating: ptr.To(true)}
	sl.Endpoints[2].Hints = &discoveryv1.EndpointHints{ForZones: []discoveryv1.ForZone{{Name: "zone-a"}}}
	node := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: nodeName, ManagedFields: managed, Labels: map[string]string{v1.LabelTopologyZone: "zone-a"}},
		Spec:       v1.NodeSpec{PodCIDRs: []string{"10.244.1.0/24"}},
		Status:     v1.NodeStatus{Images: []v1.ContainerImage{{Names: []string{"mcr.microsoft.com/windows/servercore:ltsc2022"}}}},
	}
	client := fake.NewClientset(svc, sl, node)
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTransform(TrimForCache))
	p, err := New(Options{NodeName: nodeName, Kube: client, Reconciler: reconciler.New(sim.New(sim.Options{Seed: 1}), reconciler.Options{})}, factory)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.queue.ShutDown)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	factory.Start(ctx.Done())
	p.informers.run(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), p.servicesSynced, p.slicesSynced, p.nodesSynced) {
		t.Fatal("caches did not sync")
	}

	gotSvc, err := p.services.Services("default").Get("web")
	if err != nil {
		t.Fatal(err)
	}
	if gotSvc.ManagedFields != nil || len(gotSvc.Annotations) != 1 || gotSvc.Spec.Selector != nil || gotSvc.Labels != nil || gotSvc.OwnerReferences != nil {
		t.Errorf("cached Service keeps managed fields, annotations hnsproxy does not read, its selector, labels or owners: %+v", gotSvc)
	}
	if gotSvc.Annotations[desired.PreserveDestinationAnnotation] != "true" || gotSvc.Spec.ClusterIP != "10.96.0.10" {
		t.Errorf("cached Service lost what hnsproxy reads: %+v", gotSvc)
	}

	obj, exists, err := p.slices.GetByKey("default/" + sl.Name)
	if err != nil || !exists {
		t.Fatalf("slice not cached: %v", err)
	}
	got, ok := obj.(*cachedSlice)
	if !ok {
		t.Fatalf("slice cached as %T, want the proxier's own form", obj)
	}
	want := &cachedSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "default", Name: sl.Name, ResourceVersion: got.ResourceVersion},
		service:     types.NamespacedName{Namespace: "default", Name: "web"},
		triggerTime: time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC),
		slice: desired.EndpointSlice{Name: sl.Name, Family: intent.IPv4, Ports: sl.Ports, Endpoints: []desired.Endpoint{
			{Address: "10.244.1.5", Node: unique.Make(nodeName), Ready: true, Serving: true},
			{Address: "10.244.1.6", Node: unique.Make(nodeName), Ready: true, Serving: true},
			{Address: "10.244.2.7", Node: unique.Make("other"), Serving: true, Terminating: true, Hints: sl.Endpoints[2].Hints},
		}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("cached slice\n%+v\nwant\n%+v", got, want)
	}

	gotNode, err := p.nodes.Get(nodeName)
	if err != nil {
		t.Fatal(err)
	}
	if gotNode.ManagedFields != nil || gotNode.Status.Images != nil {
		t.Errorf("cached Node keeps managed fields or images: %+v", gotNode)
	}
	if gotNode.Labels[v1.LabelTopologyZone] != "zone-a" || len(gotNode.Spec.PodCIDRs) != 1 {
		t.Errorf("cached Node lost what hnsproxy reads: %+v", gotNode)
	}
}
