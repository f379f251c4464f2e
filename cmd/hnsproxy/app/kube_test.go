package app

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
)

// TestNodeInformersTrimCachedObjects: the daemon's Node cache holds this
// node without the bulk hnsproxy never reads (proxier.TrimForCache), and
// it lists and watches this node only: every Windows node watching every
// Node would load the apiserver with the cluster's size.
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
	// The fake clientset ignores field selectors: read what was asked.
	lists := 0
	for _, a := range client.Actions() {
		var sel fmt.Stringer
		switch a := a.(type) {
		case clienttesting.ListAction:
			lists++
			sel = a.GetListRestrictions().Fields
		case clienttesting.WatchAction:
			sel = a.GetWatchRestrictions().Fields
		default:
			continue
		}
		if a.GetResource().Resource == "nodes" && sel.String() != "metadata.name=win-a" {
			t.Errorf("%s of nodes with field selector %q, want metadata.name=win-a", a.GetVerb(), sel)
		}
	}
	if lists == 0 {
		t.Error("the node informer listed nothing")
	}
}
