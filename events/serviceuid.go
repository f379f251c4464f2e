package events

import (
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8sevents "k8s.io/client-go/tools/events"
)

// Events about a Service carry the Service's UID: `kubectl describe
// service` looks a Service's events up by name and UID, so an event without
// one is listed only by `kubectl get events`. Code that knows a Service by
// name alone (the HNS rejections read from the reconciler's status, the
// health-check node ports) gives a reference without a UID; the recorder
// fills it in from the proxier's Service cache once the proxier runs.

// ServiceUIDs returns the UID of a Service the proxier knows.
type ServiceUIDs func(types.NamespacedName) (types.UID, bool)

// serviceUIDRecorder fills in the UID of a Service reference that has none.
type serviceUIDRecorder struct {
	k8sevents.EventRecorder
	uids *atomic.Pointer[ServiceUIDs]
}

func (r serviceUIDRecorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	r.EventRecorder.Eventf(r.withUID(regarding), related, eventtype, reason, action, note, args...)
}

func (r serviceUIDRecorder) withUID(obj runtime.Object) runtime.Object {
	ref, ok := obj.(*v1.ObjectReference)
	if !ok || ref.Kind != "Service" || ref.UID != "" {
		return obj
	}
	uids := r.uids.Load()
	if uids == nil {
		return obj
	}
	uid, ok := (*uids)(types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name})
	if !ok {
		return obj
	}
	withUID := *ref
	withUID.UID = uid
	return &withUID
}

// ResolveServiceUIDs gives the reporter's recorder the proxier's Service
// cache, to put each Service's UID on the events about it.
func (r *Reporter) ResolveServiceUIDs(uids ServiceUIDs) { r.uids.Store(&uids) }
