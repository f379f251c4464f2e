package desired

import (
	"fmt"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
)

// benchInput is Service i with n ready endpoints, the first on this node.
func benchInput(i, n int) ServiceInput {
	eps := make([]discoveryv1.Endpoint, n)
	for j := range eps {
		eps[j] = ep(fmt.Sprintf("10.%d.%d.%d", 128+j/65536, j/256%256, j%256+1))
	}
	eps[0].NodeName = ptrTo(thisNode)
	vip := fmt.Sprintf("10.96.%d.%d", i/256, i%256+1)
	return ServiceInput{
		Service: service(fmt.Sprintf("svc-%d", i), clusterIPs(vip)),
		Slices:  []*discoveryv1.EndpointSlice{slice(fmt.Sprintf("svc-%d-abc", i), 8080, eps...)},
	}
}

func ptrTo[T any](v T) *T { return &v }

// BenchmarkForService is the pure mapping of one ClusterIP Service.
func BenchmarkForService(b *testing.B) {
	for _, n := range []int{10, 100, 2000} { // 2000: over the 1024 cap, rendezvous subset
		b.Run(fmt.Sprintf("endpoints=%d", n), func(b *testing.B) {
			in, cfg := benchInput(1, n), config()
			b.ReportAllocs()
			for b.Loop() {
				ForService(in, cfg)
			}
		})
	}
}

// BenchmarkStateSet is the incremental path of one endpoint change: one
// Service's new result set into the state of a node with many Services.
func BenchmarkStateSet(b *testing.B) {
	for _, services := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("services=%d", services), func(b *testing.B) {
			cfg := config()
			inputs := make([]ServiceInput, services)
			for i := range inputs {
				inputs[i] = benchInput(i, 10)
			}
			s := Compute(inputs, cfg)
			// Two results of Service 0 that differ in one endpoint's readiness.
			flipped := benchInput(0, 10)
			notReady(&flipped.Slices[0].Endpoints[3])
			results := [2]ServiceResult{ForService(flipped, cfg), ForService(inputs[0], cfg)}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if ch := s.Set(results[i%2]); len(ch.LBs) != 1 {
					b.Fatalf("one endpoint change changed %d load balancers, want 1", len(ch.LBs))
				}
				i++
			}
			if _, ok := s.Services[types.NamespacedName{Namespace: "ns", Name: "svc-0"}]; !ok {
				b.Fatal("svc-0 lost")
			}
		})
	}
}

// BenchmarkCompute is the whole node's desired state from scratch.
func BenchmarkCompute(b *testing.B) {
	for _, services := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("services=%d", services), func(b *testing.B) {
			inputs := make([]ServiceInput, services)
			for i := range inputs {
				inputs[i] = benchInput(i, 10)
			}
			cfg := config()
			b.ReportAllocs()
			for b.Loop() {
				Compute(inputs, cfg)
			}
		})
	}
}
