package proxier

import (
	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/hnsproxy/hnsproxy/proxier/desired"
)

// TrimForCache drops, before an object enters the informer caches, the
// fields hnsproxy never reads and a real API server sends in bulk: managed
// fields on every object; of a Service its labels (the informer selects on
// them server-side), its owners, every annotation but preserve-destination
// (kubectl's last-applied copy, Helm's and other tools' notes) and its
// selector (the EndpointSlice controller's to read, not a proxy's); a
// Node's image list (tens of kilobytes on a busy node). An EndpointSlice
// is replaced by a cachedSlice: at 10,000 Services the slices are most of
// the cache, and the API type spends on each endpoint several times what
// the mapping reads of it. Cached objects are read-only (client-go's
// rule). The proxier's own informers apply it; whoever builds a Node
// informer factory for it passes it as informers.WithTransform. It is
// idempotent, as client-go asks.
func TrimForCache(obj any) (any, error) {
	switch o := obj.(type) {
	case *v1.Service:
		o.ManagedFields, o.Spec.Selector, o.Labels, o.OwnerReferences = nil, nil, nil, nil
		keepOnly(o.Annotations, desired.PreserveDestinationAnnotation)
	case *discoveryv1.EndpointSlice:
		return cacheSlice(o), nil
	case *v1.Node:
		o.ManagedFields = nil
		o.Status.Images = nil
	}
	return obj, nil
}

// keepOnly deletes every key of m but key.
func keepOnly(m map[string]string, key string) {
	for k := range m {
		if k != key {
			delete(m, k)
		}
	}
}
