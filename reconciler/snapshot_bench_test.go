package reconciler

import (
	"runtime"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/sim"
)

// BenchmarkSyncAfterALook is one load balancer's backends changed and
// synced among 10,000 (bigCluster), after one look at the status: a
// minute before (the hand-over on: each Sync hands its objects over) and
// statusReaderIdle before (the first Sync stops the hand-over). heap-MiB is
// the live heap after the loop, the reconciler's and the simulator's: the
// difference between the two is what the hand-over keeps.
func BenchmarkSyncAfterALook(b *testing.B) {
	for _, c := range []struct {
		name  string
		since time.Duration
	}{{"looked=1m", time.Minute}, {"looked=idle", statusReaderIdle}} {
		b.Run(c.name, func(b *testing.B) {
			e := newEnv(b, sim.ProfileWS2025)
			e.stateFile = ""
			want := e.bigCluster(10000)
			r := e.started(want...)
			r.StatusSnapshot()
			e.clock.Step(c.since)
			changeOneEachOp(b, r, want)
			b.StopTimer()
			runtime.GC()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			b.ReportMetric(float64(m.HeapAlloc)/(1<<20), "heap-MiB")
			b.ReportAllocs()
			runtime.KeepAlive(r)
			runtime.KeepAlive(e)
		})
	}
}
