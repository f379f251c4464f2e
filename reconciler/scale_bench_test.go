package reconciler

import (
	"fmt"
	"testing"

	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// BenchmarkScaleOneOf10k is a Service scaled 10→50→10 among 10,000: each
// op adds 40 remote endpoints to one load balancer or takes them away, with
// a state file, as `hack/scale -scales` does per EndpointSlice written.
func BenchmarkScaleOneOf10k(b *testing.B) {
	for _, profile := range []string{sim.ProfileWS2022, sim.ProfileWS2025} {
		b.Run(profile, func(b *testing.B) {
			e := newEnv(b, profile)
			want := e.bigCluster(10000)
			r := e.started(want...)
			small := want[0]
			big := small
			big.Backends = append([]intent.Backend(nil), small.Backends...)
			for i := range 40 {
				big.Backends = append(big.Backends, rem(fmt.Sprintf("10.244.%d.%d", 5+i/200, i%200+1), "192.168.0.2"))
			}
			added := big.Backends[len(small.Backends):]
			big = lb(big.Key.VIP, big.Key.Port, big.Backends...)
			i := 0
			for b.Loop() {
				if i%2 == 0 {
					for _, be := range added {
						r.UpsertEndpoint(intent.EndpointOf(be))
					}
					r.Upsert(big)
				} else {
					r.Upsert(small)
					for _, be := range added {
						r.DeleteEndpoint(be.IP)
					}
				}
				if res := r.Sync(ctx); res.Failed != 0 || res.Pending != 0 {
					b.Fatalf("sync %d: %+v", i, res)
				}
				i++
			}
			b.ReportMetric(float64(e.counters().Writes())/float64(i), "hns-writes/op")
			b.ReportAllocs()
		})
	}
}
