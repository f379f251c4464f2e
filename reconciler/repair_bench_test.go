package reconciler

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/internal/liveheap"
	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/sim/remote"
	"github.com/hnsproxy/hnsproxy/sim/remote/remotetest"
)

// BenchmarkRepair10k is one drift repair of 10,000 load balancers with 10
// remote backends each (10,000 remote endpoints: groups of 10 Services
// share 10 pods, as make bench-e2e loads them), through hnssim's wire as
// the daemon lists it (sim/remote over a unix socket). Besides B/op it
// reports listing-held-B/op: the live heap at the end of the listing (the
// endpoint listing just returned) above the live heap before the repair,
// both after a collection: what the listing adds to the heap the collector
// sizes its goal from.
func BenchmarkRepair10k(b *testing.B) {
	e := newEnv(b, sim.ProfileWS2025)
	e.stateFile = ""
	c := &heldAtListingEnd{Client: serveOverWire(b, remote.NewServer(e.hns, remote.Extras{}))}
	r, res := e.start(c, bigRemoteCluster(10000)...)
	if res.Failed+res.Pending != 0 {
		b.Fatalf("first sync %+v", res)
	}
	var held uint64
	for b.Loop() {
		c.before = liveheap.Bytes()
		if err := r.Repair(ctx); err != nil {
			b.Fatal(err)
		}
		held += c.held
		if res := r.Sync(ctx); res.Created+res.Updated+res.Deleted+res.Failed != 0 {
			b.Fatalf("a repair without drift made work: %+v", res)
		}
	}
	b.ReportMetric(float64(held)/float64(b.N), "listing-held-B/op")
}

// bigRemoteCluster is n ClusterIP load balancers in groups of 10 sharing 10
// remote pods (n remote endpoints on 50 nodes).
func bigRemoteCluster(n int) []intent.LB {
	out := make([]intent.LB, n)
	for i := range out {
		g := i / 10
		backends := make([]intent.Backend, 10)
		for j := range backends {
			p := g*10 + j
			backends[j] = rem(fmt.Sprintf("10.%d.%d.%d", 100+p/65536, p/256%256, p%256), fmt.Sprintf("192.168.1.%d", p%50+1))
		}
		out[i] = lb(fmt.Sprintf("10.96.%d.%d", i/250, i%250+1), 80, backends...)
	}
	return out
}

// serveOverWire serves handler (hnssim's: remote.NewServer) on a unix
// socket and returns a client for it.
func serveOverWire(t testing.TB, handler http.Handler) *remote.Client {
	t.Helper()
	c := remote.NewClient(remotetest.Serve(t, handler))
	t.Cleanup(c.Close)
	return c
}

// heldAtListingEnd measures the live heap when the endpoint listing, a
// repair's last, returns: what the repair holds of both listings then.
type heldAtListingEnd struct {
	hnslb.Client
	before, held uint64
}

func (h *heldAtListingEnd) ListEndpointsOfNetwork(ctx context.Context, networkID string) ([]hnslb.Endpoint, error) {
	eps, err := h.Client.ListEndpointsOfNetwork(ctx, networkID)
	h.held = liveheap.Bytes() - h.before
	runtime.KeepAlive(eps)
	return eps, err
}

func (h *heldAtListingEnd) WalkLoadBalancers(ctx context.Context, fn func(*hnslb.LoadBalancer) error) error {
	return hnslb.WalkLoadBalancers(ctx, h.Client, fn)
}

func (h *heldAtListingEnd) WalkEndpointsOfNetwork(ctx context.Context, networkID string, fn func(*hnslb.Endpoint) error) error {
	err := hnslb.WalkEndpointsOfNetwork(ctx, h.Client, networkID, fn)
	h.held = liveheap.Bytes() - h.before
	if p := os.Getenv("REPAIR_HEAP_PROFILE"); p != "" {
		f, _ := os.Create(p)
		pprof.WriteHeapProfile(f)
		f.Close()
	}
	return err
}

// BenchmarkHeldAfterColdStart10k reports what the reconciler keeps after
// realizing bigRemoteCluster(10000) (10,000 load balancers of 10 remote
// backends over 10,000 remote endpoints), as held-B: the live heap after
// Start and the first Sync above the live heap before, hnssim's own
// objects included. The steady live heap is what the collector sizes its
// goal, and so the resident size, from. With HELD_HEAP_PROFILE=path (and
// -memprofilerate 1) it writes the heap profile of that moment.
func BenchmarkHeldAfterColdStart10k(b *testing.B) {
	want := bigRemoteCluster(10000)
	var held uint64
	for b.Loop() {
		b.StopTimer()
		e := newEnv(b, sim.ProfileWS2025)
		e.stateFile = ""
		before := liveheap.Bytes()
		b.StartTimer()
		r, res := e.start(e.hns, want...)
		b.StopTimer()
		if res.Failed+res.Pending != 0 {
			b.Fatalf("first sync %+v", res)
		}
		held += liveheap.Bytes() - before
		if p := os.Getenv("HELD_HEAP_PROFILE"); p != "" {
			f, _ := os.Create(p)
			pprof.WriteHeapProfile(f)
			f.Close()
		}
		runtime.KeepAlive(r)
		b.StartTimer()
	}
	b.ReportMetric(float64(held)/float64(b.N), "held-B")
}
