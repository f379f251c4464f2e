package proxier

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/hnsproxy/hnsproxy/internal/liveheap"
)

// BenchmarkHeldBySliceCache reports the heap 10,000 EndpointSlices of 10
// endpoints (100,000 endpoints, as make bench-e2e loads) hold as the
// decoder makes them (api-held-B) and as the slice informer caches them
// (cached-held-B). The slices are decoded from protobuf, as client-go
// receives them, in the shape the EndpointSlice controller writes.
func BenchmarkHeldBySliceCache(b *testing.B) {
	wire := make([][]byte, 10000)
	for i := range wire {
		data, err := controllerSlice(i).Marshal()
		if err != nil {
			b.Fatal(err)
		}
		wire[i] = data
	}
	var apiHeld, cachedHeld uint64
	for b.Loop() {
		b.StopTimer()
		before := liveheap.Bytes()
		decoded := make([]*discoveryv1.EndpointSlice, len(wire))
		for i, data := range wire {
			decoded[i] = &discoveryv1.EndpointSlice{}
			if err := decoded[i].Unmarshal(data); err != nil {
				b.Fatal(err)
			}
		}
		apiHeld += liveheap.Bytes() - before
		b.StartTimer()
		cached := make([]any, len(decoded))
		for i, s := range decoded {
			cached[i], _ = TrimForCache(s)
		}
		b.StopTimer()
		decoded = nil
		cachedHeld += liveheap.Bytes() - before
		runtime.KeepAlive(cached)
		b.StartTimer()
	}
	b.ReportMetric(float64(apiHeld)/float64(b.N), "api-held-B")
	b.ReportMetric(float64(cachedHeld)/float64(b.N), "cached-held-B")
}

// controllerSlice is slice i as the EndpointSlice controller writes it:
// its labels, trigger time and owner, and of each endpoint the pod, node
// and zone, with all three conditions set.
func controllerSlice(i int) *discoveryv1.EndpointSlice {
	name := fmt.Sprintf("svc-%d", i)
	s := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "bench", Name: name + "-abcde", GenerateName: name + "-",
			ResourceVersion: fmt.Sprint(100000 + i), UID: "0f8fad5b-d9cb-469f-a165-70867728950e",
			Labels: map[string]string{
				discoveryv1.LabelServiceName: name,
				discoveryv1.LabelManagedBy:   "endpointslice-controller.k8s.io",
			},
			Annotations:     map[string]string{triggerTimeAnnotation: time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC).Format(time.RFC3339Nano)},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: name, UID: "7c9e6679-7425-40de-944b-e07fc1f90ae7"}},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Protocol: ptr.To(v1.ProtocolTCP), Port: ptr.To[int32](8080)}},
	}
	for j := range 10 {
		pod := i*10 + j
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{fmt.Sprintf("10.%d.%d.%d", 64+pod>>16, pod>>8&255, pod&255)},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true), Serving: ptr.To(true), Terminating: ptr.To(false)},
			NodeName:   ptr.To(fmt.Sprintf("win-%d", pod%50)),
			Zone:       ptr.To("zone-a"),
			TargetRef:  &v1.ObjectReference{Kind: "Pod", Namespace: "bench", Name: fmt.Sprintf("pod-%d", pod), UID: "6ba7b810-9dad-11d1-80b4-00c04fd430c8"},
		})
	}
	return s
}
