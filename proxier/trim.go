package proxier

import (
	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// TrimForCache drops, before an object enters the informer caches, the
// fields hnsproxy never reads and a real API server sends in bulk: managed
// fields on every object, kubectl's last-applied copy of a Service, each
// endpoint's pod reference and hostname, and a Node's image list (tens of
// kilobytes on a busy node). At 10,000 Services they are most of the cache.
// Whoever builds the informer factories passes it as informers.WithTransform.
func TrimForCache(obj any) (any, error) {
	switch o := obj.(type) {
	case *v1.Service:
		o.ManagedFields = nil
		delete(o.Annotations, v1.LastAppliedConfigAnnotation)
	case *discoveryv1.EndpointSlice:
		o.ManagedFields = nil
		for i := range o.Endpoints {
			o.Endpoints[i].TargetRef = nil
			o.Endpoints[i].Hostname = nil
		}
	case *v1.Node:
		o.ManagedFields = nil
		o.Status.Images = nil
	}
	return obj, nil
}
