package diag

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/pager"
)

// listPageSize is kubectl's page size (its --chunk-size default): a large
// cluster's Nodes or EndpointSlices come in pages, not in one response the
// API server builds and the diagnosis decodes whole.
const listPageSize = 500

// listEach lists kind in pages and hands add each item. add copies what it
// keeps, so a page is freed once it has been read; one page is fetched
// ahead. Its error names kind, and a refusal the read access needed.
func listEach[T any](ctx context.Context, kind string, opts metav1.ListOptions,
	list func(context.Context, metav1.ListOptions) (runtime.Object, error), add func(*T)) error {
	p := pager.New(list)
	p.PageSize = listPageSize
	p.PageBufferSize = 1
	err := p.EachListItem(ctx, opts, func(obj runtime.Object) error {
		item, ok := any(obj).(*T)
		if !ok {
			return fmt.Errorf("the list held a %T", obj)
		}
		add(item)
		return nil
	})
	if err != nil {
		return listFailed(kind, err)
	}
	return nil
}

// trimNode drops what the diagnosis never reads of a Node and kubelet
// writes in bulk (its image list, tens of kilobytes on a busy node) and
// managed fields, as hnsproxy's own Node cache does (proxier.TrimForCache):
// at thousands of Nodes the rest is a few megabytes.
func trimNode(n *v1.Node) v1.Node {
	kept := *n
	kept.ManagedFields, kept.Status.Images = nil, nil
	return kept
}

// listFailed is a list's error; a refusal names the read access needed.
func listFailed(kind string, err error) error {
	if apierrors.IsForbidden(err) {
		return fmt.Errorf("listing %s: %w (hnsproxy-diag needs list on services, endpointslices.discovery.k8s.io and nodes, as the ClusterRole hnsproxy of deploy/base/rbac.yaml grants)", kind, err)
	}
	return fmt.Errorf("listing %s: %w", kind, err)
}
