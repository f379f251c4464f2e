package proxier

import (
	"context"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

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
	sl.Endpoints = slices.Grow(sl.Endpoints, 10) // as the decoder leaves it: room to spare
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
	p, err := New(Options{NodeName: nodeName, Reconciler: reconciler.New(sim.New(sim.Options{Seed: 1}), reconciler.Options{})}, factory, factory)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.queue.ShutDown)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	factory.Start(ctx.Done())
	for _, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatal("caches did not sync")
		}
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
	gotSlice := obj.(*discoveryv1.EndpointSlice)
	ep := gotSlice.Endpoints[0]
	if gotSlice.ManagedFields != nil || gotSlice.OwnerReferences != nil || gotSlice.GenerateName != "" ||
		ep.TargetRef != nil || ep.Hostname != nil || ep.Zone != nil {
		t.Errorf("cached slice keeps managed fields, owners, a pod reference, a hostname or a zone: %+v", gotSlice)
	}
	if len(gotSlice.Labels) != 1 || len(gotSlice.Annotations) != 1 {
		t.Errorf("cached slice keeps labels %v and annotations %v; want only the Service name and the trigger time", gotSlice.Labels, gotSlice.Annotations)
	}
	if cap(gotSlice.Endpoints) != len(gotSlice.Endpoints) {
		t.Errorf("cached slice holds room for %d endpoints, has %d", cap(gotSlice.Endpoints), len(gotSlice.Endpoints))
	}
	last := gotSlice.Endpoints[2]
	if ep.Addresses[0] != "10.244.1.5" || ptr.Deref(ep.NodeName, "") != nodeName || ptr.Deref(last.NodeName, "") != "other" ||
		!*ep.Conditions.Ready || *ep.Conditions.Terminating || *last.Conditions.Ready || !*last.Conditions.Serving || !*last.Conditions.Terminating ||
		last.Hints == nil || gotSlice.Labels[discoveryv1.LabelServiceName] != "web" || gotSlice.Annotations[triggerTimeAnnotation] == "" ||
		len(gotSlice.Ports) != 1 {
		t.Errorf("cached slice lost what hnsproxy reads: %+v", gotSlice)
	}
	if ep.NodeName != gotSlice.Endpoints[1].NodeName || ep.Conditions.Ready != last.Conditions.Serving {
		t.Errorf("endpoints of one node, or of one condition value, do not share one pointer")
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

// The decoder grows a slice's endpoints by doubling (the fake clientset's
// deep copies do not), so the trim is checked on such an object directly.
func TestTrimFitsEndpointsToTheirNumber(t *testing.T) {
	sl := slice("web", endpoint{"10.244.1.5", nodeName}, endpoint{"10.244.1.6", nodeName})
	sl.Endpoints = slices.Grow(sl.Endpoints, 14)
	if _, err := TrimForCache(sl); err != nil {
		t.Fatal(err)
	}
	if len(sl.Endpoints) != 2 || cap(sl.Endpoints) != 2 || sl.Endpoints[1].Addresses[0] != "10.244.1.6" {
		t.Errorf("endpoints %d of capacity %d: %+v", len(sl.Endpoints), cap(sl.Endpoints), sl.Endpoints)
	}
}
