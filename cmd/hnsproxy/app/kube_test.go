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
