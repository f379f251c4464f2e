package events

import (
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// Events about a Service carry the Service's UID: `kubectl describe
// service` looks a Service's events up by name and UID, so an event without
// one is listed only by `kubectl get events`. Code that knows a Service by
// name alone (the HNS rejections read from the reconciler's status, the
// health-check node ports) gives a reference without a UID; the recorder
// fills it in from the proxier's Service cache once the proxier runs.

// ServiceUIDs returns the UID of a Service the proxier knows.
type ServiceUIDs func(types.NamespacedName) (types.UID, bool)

// withUID fills in the UID of a Service reference that has none.
func withUID(uids *atomic.Pointer[ServiceUIDs], obj runtime.Object) runtime.Object {
	ref, ok := obj.(*v1.ObjectReference)
	if !ok || ref.Kind != "Service" || ref.UID != "" {
		return obj
	}
	resolve := uids.Load()
	if resolve == nil {
		return obj
	}
	uid, ok := (*resolve)(types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name})
	if !ok {
		return obj
	}
	filled := *ref
	filled.UID = uid
	return &filled
}

// ResolveServiceUIDs gives the reporter's recorder the proxier's Service
// cache, to put each Service's UID on the events about it.
func (r *Reporter) ResolveServiceUIDs(uids ServiceUIDs) { r.uids.Store(&uids) }
