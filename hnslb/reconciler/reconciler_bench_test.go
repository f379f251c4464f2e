package reconciler

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"k8s.io/klog/v2"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// mapHNS is a bare in-memory HNS for benchmarks: no validation and no
// scans, so that the reconciler's own cost is what is measured. Methods the
// reconciler does not call are left to the nil embedded interface.
type mapHNS struct {
	hnslb.Client
	next int
	lbs  map[string]hnslb.LoadBalancer
	eps  map[string]hnslb.Endpoint
}

func newMapHNS() *mapHNS {
	return &mapHNS{lbs: map[string]hnslb.LoadBalancer{}, eps: map[string]hnslb.Endpoint{}}
}

func (m *mapHNS) id() string {
	m.next++
	return fmt.Sprintf("%08x-0000-0000-0000-000000000000", m.next)
}

func (m *mapHNS) ListLoadBalancers(context.Context) ([]hnslb.LoadBalancer, error) {
	out := make([]hnslb.LoadBalancer, 0, len(m.lbs))
	for _, lb := range m.lbs {
		out = append(out, lb)
	}
	return out, nil
}

func (m *mapHNS) ListEndpointsOfNetwork(context.Context, string) ([]hnslb.Endpoint, error) {
	out := make([]hnslb.Endpoint, 0, len(m.eps))
	for _, ep := range m.eps {
		out = append(out, ep)
	}
	return out, nil
}

func (m *mapHNS) CreateEndpoint(_ context.Context, _ string, e *hnslb.Endpoint) (*hnslb.Endpoint, error) {
	c := *e
	c.ID = m.id()
	m.eps[c.ID] = c
	return &c, nil
}

func (m *mapHNS) DeleteEndpoint(_ context.Context, id string) error { delete(m.eps, id); return nil }

func (m *mapHNS) CreateLoadBalancer(_ context.Context, lb *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	c := *lb
	c.ID = m.id()
	m.lbs[c.ID] = c
	return &c, nil
}

func (m *mapHNS) UpdateLoadBalancer(_ context.Context, id string, lb *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	c := *lb
	c.ID = id
	m.lbs[id] = c
	return &c, nil
}

func (m *mapHNS) DeleteLoadBalancer(_ context.Context, id string) error {
	delete(m.lbs, id)
	return nil
}

// BenchmarkUpsertSync is the reconciler's share of one endpoint change: one
// desired load balancer among many gains or loses one remote backend (one
// that other load balancers keep using, so no remote endpoint changes),
// then Sync diffs and updates it in place. HNS is mapHNS.
func BenchmarkUpsertSync(b *testing.B) {
	for _, n := range []int{2000, 20000} {
		b.Run(fmt.Sprintf("lbs=%d", n), func(b *testing.B) {
			hns := newMapHNS()
			r := New(hns, Options{
				NetworkID: "net", Features: hnslb.FeaturesFor(hnslb.Version{Major: 15, Minor: 5}),
				StateFile: filepath.Join(b.TempDir(), "state.json"), Logger: klog.Background(),
			})
			remotes := n // a pool as large as the load balancers, ten backends each
			backends := func(i int) []Backend {
				out := make([]Backend, 10)
				for j := range out {
					p := (i*7 + j*131) % remotes
					out[j] = rem(fmt.Sprintf("10.%d.%d.%d", 128+p/65536, p/256%256, p%256), "")
				}
				return out
			}
			for i := range n {
				r.Upsert(lb(fmt.Sprintf("10.96.%d.%d", i/256, i%256), 80, backends(i)...))
			}
			if err := r.Start(ctx); err != nil {
				b.Fatal(err)
			}
			if res := r.Sync(ctx); res.Failed+res.Pending != 0 {
				b.Fatalf("initial sync: %+v", res)
			}
			full := lb("10.96.0.0", 80, backends(0)...)
			less := lb("10.96.0.0", 80, backends(0)[1:]...)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if i%2 == 0 {
					r.Upsert(less)
				} else {
					r.Upsert(full)
				}
				if res := r.Sync(ctx); res.Updated != 1 || res.Created+res.Deleted+res.Failed != 0 {
					b.Fatalf("sync %d: %+v, want exactly one update", i, res)
				}
				i++
			}
		})
	}
}
