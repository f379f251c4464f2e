package sim

import (
	"fmt"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// BenchmarkCreateLoadBalancer creates b.N ClusterIP load balancers with 16
// backends each into one HNS, so the conflict check runs against a growing
// table.
func BenchmarkCreateLoadBalancer(b *testing.B) {
	h := newSim(b, ProfileWS2022)
	n := mustNetwork(b, h, "cbr0", hnslb.NetworkTypeL2Bridge)
	backends := make([]string, 16)
	for i := range backends {
		backends[i] = mustEndpoint(b, h, n.ID, endpointDoc(fmt.Sprintf("10.244.1.%d", i+2))).ID
	}
	docs := make([]*hnslb.LoadBalancer, b.N)
	for i := range docs {
		docs[i] = lbDoc(fmt.Sprintf("10.%d.%d.%d", 96+i>>16&0x1f, i>>8&0xff, i&0xff), 80, backends...)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := h.CreateLoadBalancer(ctx, docs[i]); err != nil {
			b.Fatal(err)
		}
	}
}
