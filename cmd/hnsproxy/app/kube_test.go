package app

import (
	"context"
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
