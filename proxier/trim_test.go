package proxier

import (
	"context"
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
	svc.Annotations = map[string]string{
		v1.LastAppliedConfigAnnotation:        `{"kind":"Service"}`,
		desired.PreserveDestinationAnnotation: "true",
	}
	sl := slice("web", endpoint{"10.244.1.5", nodeName})
	sl.ManagedFields = managed
	sl.Endpoints[0].TargetRef = &v1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web-1"}
	sl.Endpoints[0].Hostname = ptr.To("web-1")
	sl.Endpoints[0].Zone = ptr.To("zone-a")
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
	if gotSvc.ManagedFields != nil || gotSvc.Annotations[v1.LastAppliedConfigAnnotation] != "" {
		t.Errorf("cached Service keeps managed fields or last-applied: %+v", gotSvc.ObjectMeta)
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
	if gotSlice.ManagedFields != nil || ep.TargetRef != nil || ep.Hostname != nil {
		t.Errorf("cached slice keeps managed fields, a pod reference or a hostname: %+v", gotSlice)
	}
	if ep.Addresses[0] != "10.244.1.5" || ptr.Deref(ep.NodeName, "") != nodeName || ptr.Deref(ep.Zone, "") != "zone-a" ||
		gotSlice.Labels[discoveryv1.LabelServiceName] != "web" {
		t.Errorf("cached slice lost what hnsproxy reads: %+v", gotSlice)
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
