package proxier

import (
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hnsproxy/hnsproxy/proxier/desired"
)

// cachedSlice is the slice informer's cache form of an EndpointSlice
// (TrimForCache makes it): what the mapping reads, and what the proxier
// reads of the object itself, decoded once.
type cachedSlice struct {
	// ObjectMeta keeps the namespace, name and resource version: the
	// informer's key, and how it tells a resync from a change.
	metav1.ObjectMeta
	// service is the Service the kubernetes.io/service-name label names
	// (Name empty when the label is missing).
	service types.NamespacedName
	// triggerTime is the last-change-trigger-time annotation (zero when
	// missing or unreadable), for the network programming latency metric.
	triggerTime time.Time
	slice       desired.EndpointSlice
}

func cacheSlice(s *discoveryv1.EndpointSlice) *cachedSlice {
	c := &cachedSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Name, ResourceVersion: s.ResourceVersion},
		slice:      desired.SliceOf(s),
	}
	if name := s.Labels[discoveryv1.LabelServiceName]; name != "" {
		c.service = types.NamespacedName{Namespace: s.Namespace, Name: name}
	}
	if v, ok := s.Annotations[triggerTimeAnnotation]; ok {
		if ts, err := time.Parse(time.RFC3339Nano, v); err == nil {
			c.triggerTime = ts
		}
	}
	return c
}

// triggerTimeAnnotation is set by the EndpointSlice controller to when the
// change that caused this slice version happened.
const triggerTimeAnnotation = "endpoints.kubernetes.io/last-change-trigger-time"
