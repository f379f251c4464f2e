package diag

import (
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
)

// TestReadListsInPagesAndTrimsNodes: on a large cluster the diagnosis
// lists in pages, as kubectl does, not every object in one response; and
// it keeps of each Node only what hnsproxy's own Node cache keeps (no image
// list, no managed fields), so at thousands of Nodes a page at a time is
// held whole, not the cluster.
func TestReadListsInPagesAndTrimsNodes(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	node, err := f.kube.CoreV1().Nodes().Get(ctx, other, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}
	node.Status.Images = []v1.ContainerImage{{Names: []string{"mcr.microsoft.com/oss/kubernetes/pause:3.9"}}}
	if _, err := f.kube.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.kube.ClearActions()

	in := f.read()
	lists := 0
	for _, a := range f.kube.Actions() {
		list, ok := a.(k8stesting.ListActionImpl)
		if !ok {
			continue
		}
		lists++
		if list.ListOptions.Limit <= 0 {
			t.Errorf("%s listed without a page size: %+v", list.GetResource().Resource, list.ListOptions)
		}
	}
	if lists != 3 {
		t.Errorf("%d lists, want Services, EndpointSlices and Nodes", lists)
	}
	for _, n := range in.Nodes {
		if n.ManagedFields != nil || n.Status.Images != nil {
			t.Errorf("Node %s kept whole: %d managed fields, %d images", n.Name, len(n.ManagedFields), len(n.Status.Images))
		}
	}
	if len(in.Nodes) != 2 || in.node(other) == nil || len(in.node(other).Status.Addresses) == 0 {
		t.Errorf("Nodes read %+v, want win-a and win-b with their addresses", in.Nodes)
	}
}

// TestReadKeepsEveryPage: a list that comes in pages is read to its end,
// every page's items kept.
func TestReadKeepsEveryPage(t *testing.T) {
	f := newFixture(t)
	all, err := f.kube.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// One Node a page, each page naming the next.
	f.kube.PrependReactor("list", "nodes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		i := len(a.(k8stesting.ListActionImpl).ListOptions.Continue)
		page := &v1.NodeList{Items: all.Items[i : i+1]}
		if i+1 < len(all.Items) {
			page.Continue = strings.Repeat("c", i+1)
		}
		return true, page, nil
	})
	in := f.read()
	if len(in.Nodes) != len(all.Items) || in.node(self) == nil || in.node(other) == nil {
		t.Errorf("read %d Nodes over %d pages, want them all", len(in.Nodes), len(all.Items))
	}
}
