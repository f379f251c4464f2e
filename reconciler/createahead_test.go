package reconciler

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// silentCreates answers endpoint creates (silent) or load balancer
// creates (silentLBs) with no document while set.
type silentCreates struct {
	hnslb.Client
	silent, silentLBs atomic.Bool
}

func (s *silentCreates) CreateLoadBalancer(ctx context.Context, lb *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	got, err := s.Client.CreateLoadBalancer(ctx, lb)
	if s.silentLBs.Load() {
		return nil, err
	}
	return got, err
}

func (s *silentCreates) CreateEndpoint(ctx context.Context, networkID string, e *hnslb.Endpoint) (*hnslb.Endpoint, error) {
	got, err := s.Client.CreateEndpoint(ctx, networkID, e)
	if s.silent.Load() {
		return nil, err
	}
	return got, err
}

// TestBatchedCreateAnsweredWithoutDocument: a batched endpoint create that
// HNS answers with no document (so no ID) is an error, not a panic: the
// endpoint is uncertain, found in HNS by the retry and adopted, not made twice.
func TestBatchedCreateAnsweredWithoutDocument(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2025)
	c := &silentCreates{Client: e.hns}
	c.silent.Store(true)
	want := e.threeServices()
	e.hns.ResetCounters()
	r, res := e.start(c, want...)
	if res.Failed == 0 {
		t.Fatalf("first sync %+v: want the endpoints answered without a document failed", res)
	}
	c.silent.Store(false)
	e.converge(r)
	e.assertRealized(want)
	if n := e.counters().CountResult(sim.OpCreateEndpoint, "ok"); n != 3 {
		t.Errorf("%d endpoint creates succeeded in all, want 3 (none made twice)", n)
	}
}

// A single create (no batch) answered with no document is an error too,
// not a panic: for an endpoint, then for a load balancer; each is found in
// HNS by the retry and adopted, never made twice.
func TestSingleCreateAnsweredWithoutDocument(t *testing.T) {
	want := lb("10.96.0.10", 80, rem("10.244.2.20", "192.168.0.2"))
	for _, op := range []sim.Op{sim.OpCreateEndpoint, sim.OpCreateLoadBalancer} {
		t.Run(string(op), func(t *testing.T) {
			e := newEnv(t, sim.ProfileWS2025)
			c := &silentCreates{Client: e.hns}
			silent := &c.silent
			if op == sim.OpCreateLoadBalancer {
				silent = &c.silentLBs
			}
			r, _ := e.start(c)
			silent.Store(true)
			upsert(r, want)
			if res := r.Sync(ctx); res.Failed == 0 {
				t.Fatalf("sync %+v: want the create answered without a document failed", res)
			}
			silent.Store(false)
			e.converge(r)
			e.assertRealized([]intent.LB{want})
			if n := e.counters().CountResult(op, "ok"); n != 1 {
				t.Errorf("%d creates succeeded, want 1", n)
			}
		})
	}
}

// Load balancers are made ahead a chunk at a time (createAheadChunk): over
// three chunks, each is created once, and nothing made ahead is left over
// and deleted.
func TestLoadBalancersMadeAheadInChunks(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2025)
	want := bigRemoteCluster(2*createAheadChunk + 10)
	e.hns.ResetCounters()
	r, res := e.start(e.hns, want...)
	if res.Failed+res.Pending != 0 {
		t.Fatalf("first sync %+v", res)
	}
	c := e.counters()
	if n := c.CountResult(sim.OpCreateLoadBalancer, "ok"); n != len(want) || c.Count(sim.OpDeleteLoadBalancer) != 0 {
		t.Errorf("%d load balancer creates and %d deletes, want %d and 0", n, c.Count(sim.OpDeleteLoadBalancer), len(want))
	}
	if n := len(e.snapshot().LoadBalancers); n != len(want) {
		t.Errorf("HNS holds %d load balancers, want %d", n, len(want))
	}
	if res := r.Sync(ctx); res.Created+res.Updated+res.Deleted != 0 {
		t.Errorf("a second sync wrote: %+v", res)
	}
}
