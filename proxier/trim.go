package proxier

import (
	"slices"
	"sync"

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
// Node's image list (tens of kilobytes on a busy node), and of an
// EndpointSlice everything but its Service's name label, its trigger-time
// annotation, its ports and its endpoints' addresses, conditions, node
// names and hints. What is left of a slice is made compact: its endpoints
// in an array of their own length (the decoder's grows by doubling), and
// one shared pointer per node name and per condition value instead of one
// allocation per endpoint. At 10,000 Services the slices are most of the
// cache. Cached objects are read-only (client-go's rule), so sharing the
// pointers is safe. Whoever builds the informer factories passes it as
// informers.WithTransform.
func TrimForCache(obj any) (any, error) {
	switch o := obj.(type) {
	case *v1.Service:
		o.ManagedFields, o.Spec.Selector, o.Labels, o.OwnerReferences = nil, nil, nil, nil
		keepOnly(o.Annotations, desired.PreserveDestinationAnnotation)
	case *discoveryv1.EndpointSlice:
		trimSlice(o)
	case *v1.Node:
		o.ManagedFields = nil
		o.Status.Images = nil
	}
	return obj, nil
}

func trimSlice(s *discoveryv1.EndpointSlice) {
	s.ManagedFields, s.OwnerReferences, s.GenerateName = nil, nil, ""
	keepOnly(s.Labels, discoveryv1.LabelServiceName)
	keepOnly(s.Annotations, triggerTimeAnnotation)
	if cap(s.Endpoints) > len(s.Endpoints) {
		s.Endpoints = slices.Clone(s.Endpoints)
	}
	for i := range s.Endpoints {
		e := &s.Endpoints[i]
		e.TargetRef, e.Hostname, e.Zone, e.DeprecatedTopology = nil, nil, nil, nil
		e.NodeName = sharedNodeNames.of(e.NodeName)
		e.Conditions.Ready = sharedBool(e.Conditions.Ready)
		e.Conditions.Serving = sharedBool(e.Conditions.Serving)
		e.Conditions.Terminating = sharedBool(e.Conditions.Terminating)
	}
}

// keepOnly deletes every key of m but key.
func keepOnly(m map[string]string, key string) {
	for k := range m {
		if k != key {
			delete(m, k)
		}
	}
}

var sharedTrue, sharedFalse = true, false

// sharedBool is one of two shared pointers with b's value (nil stays nil).
func sharedBool(b *bool) *bool {
	switch {
	case b == nil:
		return nil
	case *b:
		return &sharedTrue
	default:
		return &sharedFalse
	}
}

// nodeNamePointers hands out one pointer per node name. It forgets them all
// past maxSharedNodeNames names, so node churn cannot grow it without bound
// (objects keep the pointers they were given).
type nodeNamePointers struct {
	mu sync.Mutex
	m  map[string]*string
}

const maxSharedNodeNames = 10000

var sharedNodeNames = &nodeNamePointers{m: map[string]*string{}}

func (n *nodeNamePointers) of(name *string) *string {
	if name == nil {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if p, ok := n.m[*name]; ok {
		return p
	}
	if len(n.m) >= maxSharedNodeNames {
		clear(n.m)
	}
	n.m[*name] = name
	return name
}
