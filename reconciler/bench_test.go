package reconciler

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// bigCluster is n load balancers over 250 local and 500 remote pods.
func (e *env) bigCluster(n int) []intent.LB {
	for i := range 250 {
		e.local(fmt.Sprintf("10.244.1.%d", i+1))
	}
	out := make([]intent.LB, n)
	for i := range out {
		out[i] = lb(fmt.Sprintf("10.96.%d.%d", i/250, i%250+1), 80,
			loc(fmt.Sprintf("10.244.1.%d", i%250+1)),
			loc(fmt.Sprintf("10.244.1.%d", (i+1)%250+1)),
			rem(fmt.Sprintf("10.244.%d.%d", 2+i%2, i%250+1), "192.168.0.2"))
	}
	return out
}

// BenchmarkUpsertSyncOneOf20k is the incremental path: one load balancer's
// backends change among 20,000 desired ones, then Sync. With a state file
// on ws2019 every update is delete + create, a new ID, and a state write.
func BenchmarkUpsertSyncOneOf20k(b *testing.B) {
	for _, tc := range []struct {
		profile   string
		stateFile bool
	}{
		{sim.ProfileWS2025, false},
		{sim.ProfileWS2025, true},
		{sim.ProfileWS2019, false},
		{sim.ProfileWS2019, true},
	} {
		b.Run(fmt.Sprintf("%s/statefile=%v", tc.profile, tc.stateFile), func(b *testing.B) {
			e := newEnv(b, tc.profile)
			if !tc.stateFile {
				e.stateFile = ""
			}
			want := e.bigCluster(20000)
			r := e.started(want...)
			i := changeOneEachOp(b, r, want)
			c := e.counters()
			if c.Lists() != 0 {
				b.Fatalf("the incremental path listed HNS %d times", c.Lists())
			}
			b.ReportMetric(float64(c.Writes())/float64(i), "hns-writes/op")
			b.ReportAllocs()
		})
	}
}

// BenchmarkColdStart10k is a node's first start: 10,000 load balancers
// (and their 500 remote endpoints) created on an empty HNS by Start and one
// Sync, with a state file. The simulator's own work is in the figure.
func BenchmarkColdStart10k(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		e := newEnv(b, sim.ProfileWS2025)
		want := e.bigCluster(10000)
		b.StartTimer()
		e.started(want...)
	}
	b.ReportAllocs()
}

// BenchmarkWriteSnapshot10k writes the state file's snapshot of a node
// with 10,000 load balancers and their baselines: what a compaction holds
// while it encodes (B/op) is live at once, and raises the collector's goal
// when a collection lands in it.
func BenchmarkWriteSnapshot10k(b *testing.B) {
	e := newEnv(b, sim.ProfileWS2025)
	r := e.started(e.bigCluster(10000)...)
	b.ReportMetric(float64(len(r.ownedLBs)), "load-balancers")
	b.ResetTimer()
	for b.Loop() {
		if err := r.writeSnapshot(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
}

// BenchmarkFingerprint is the baseline every create and modify computes:
// a load balancer of ten backends, and HNS's echo of it (the same fields
// as sent, as HNS mostly answers, and the backends reordered and
// upper-cased, which takes the canonical form's sorting and folding).
func BenchmarkFingerprint(b *testing.B) {
	written := &hnslb.LoadBalancer{SourceVIP: "10.244.1.2", FrontendVIPs: []string{"10.96.0.1"},
		PortMappings: []hnslb.PortMapping{{Protocol: 6, InternalPort: 8080, ExternalPort: 80, Flags: 2}}, Flags: 1}
	for i := range 10 {
		written.HostComputeEndpoints = append(written.HostComputeEndpoints, fmt.Sprintf("a1b2c3d4-0000-0000-0000-%012d", 97-i*7))
	}
	same := *written
	same.HostComputeEndpoints = slices.Clone(written.HostComputeEndpoints)
	reordered := same
	reordered.HostComputeEndpoints = slices.Clone(written.HostComputeEndpoints)
	slices.Reverse(reordered.HostComputeEndpoints)
	reordered.HostComputeEndpoints[0] = strings.ToUpper(reordered.HostComputeEndpoints[0])
	for _, tc := range []struct {
		name string
		echo *hnslb.LoadBalancer
	}{{"echoed-as-sent", &same}, {"echo-reordered", &reordered}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				_ = fingerprint(written, tc.echo)
			}
			b.ReportAllocs()
		})
	}
}

// changeOneEachOp has each op of b change one load balancer of want (its
// first backend dropped, put back on the next pass over want) and Sync;
// it returns how many ops ran.
func changeOneEachOp(b *testing.B, r *Reconciler, want []intent.LB) int {
	i := 0
	for b.Loop() {
		d := want[i%len(want)]
		if i/len(want)%2 == 0 {
			d.Backends = d.Backends[1:]
		}
		r.Upsert(d)
		if res := r.Sync(ctx); res.Updated != 1 || res.Failed != 0 {
			b.Fatalf("sync %d: %+v", i, res)
		}
		i++
	}
	return i
}
