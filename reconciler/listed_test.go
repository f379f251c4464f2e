package reconciler

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"k8s.io/klog/v2/ktesting"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/sim/remote"
)

// walkCounter counts the walks a client was asked for.
type walkCounter struct {
	hnslb.Client
	walks atomic.Int32
}

func (w *walkCounter) WalkLoadBalancers(ctx context.Context, fn func(*hnslb.LoadBalancer) error) error {
	w.walks.Add(1)
	return hnslb.WalkLoadBalancers(ctx, w.Client, fn)
}

func (w *walkCounter) WalkEndpointsOfNetwork(ctx context.Context, networkID string, fn func(*hnslb.Endpoint) error) error {
	w.walks.Add(1)
	return hnslb.WalkEndpointsOfNetwork(ctx, w.Client, networkID, fn)
}

// TestDriftRepairOverTheWire: a repair that walks hnssim's wire, keeping
// only the IDs of what matched, finds each kind of drift at once (a load
// balancer deleted, one changed, a remote endpoint deleted) and nothing in
// a listing without drift.
func TestDriftRepairOverTheWire(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2025)
	c := &walkCounter{Client: serveOverWire(t, remote.NewServer(e.hns, remote.Extras{}))}
	want := e.threeServices()
	r, res := e.start(c, want...)
	if res.Pending+res.Failed != 0 {
		t.Fatalf("first sync %+v", res)
	}
	if err := r.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	if res := r.Sync(ctx); res.Created+res.Updated+res.Deleted != 0 || c.walks.Load() != 2 {
		t.Fatalf("a repair without drift: %+v after %d walks; want no work after 2", res, c.walks.Load())
	}

	if err := e.hns.DeleteLoadBalancerOutOfBand(e.hnsLB(want[1].Key).ID); err != nil {
		t.Fatal(err)
	}
	changed := *e.hnsLB(want[0].Key)
	changed.SourceVIP = "10.244.1.99"
	if _, err := e.hns.UpdateLoadBalancer(ctx, changed.ID, &changed); err != nil {
		t.Fatal(err)
	}
	for _, ep := range e.snapshot().Endpoints {
		if ep.IsRemote() && ep.IP() == "10.244.3.31" { // want[2]'s only backend
			if err := e.hns.DeleteEndpoint(ctx, ep.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	e.hns.ResetCounters()
	if err := r.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	res = r.Sync(ctx)
	cnt := e.counters()
	if cnt.Count(sim.OpCreateEndpoint) != 1 || cnt.Count(sim.OpUpdateLoadBalancer) != 1 || cnt.Count(sim.OpCreateLoadBalancer) != 2 || cnt.Count(sim.OpDeleteLoadBalancer) != 1 {
		t.Errorf("after the repair: %v %+v; want the endpoint and the deleted load balancer created, the changed one replaced and the endpoint's user modified", cnt.Calls, res)
	}
	e.converge(r)
	e.assertRealized(want)
}

// TestAbandonedWalkCallsNothingAfter: once a walk's caller has given up on
// it, the walk may go on in HNS but hands the caller nothing more, and its
// context is over.
func TestAbandonedWalkCallsNothingAfter(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2025)
	started, release, walked := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	c := &stallingWalker{Client: e.hns, started: started, release: release, walked: walked}
	d := newDeadlines(c, e.options(), ktesting.NewLogger(t, ktesting.DefaultConfig))
	returned := make(chan struct{})
	d.onReturn = func() { close(returned) }
	stopping, stop := context.WithCancel(ctx)
	go func() { <-started; stop() }()
	var got []string
	err := d.WalkLoadBalancers(stopping, func(lb *hnslb.LoadBalancer) error { got = append(got, lb.ID); return nil })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("walk returned %v, want it abandoned at shutdown", err)
	}
	close(release)
	<-returned
	if err := <-walked; err == nil {
		t.Error("the document after the abandonment was handed over")
	}
	if len(got) != 1 || got[0] != "first" {
		t.Errorf("handed over %v, want only the document before the abandonment", got)
	}
	if c.ctxErr == nil {
		t.Error("the abandoned walk's context is not over")
	}
}

// stallingWalker hands over one document, stalls until released, then
// tries a second.
type stallingWalker struct {
	hnslb.Client
	started, release chan struct{}
	walked           chan error
	ctxErr           error
}

func (s *stallingWalker) WalkLoadBalancers(ctx context.Context, fn func(*hnslb.LoadBalancer) error) error {
	if err := fn(&hnslb.LoadBalancer{ID: "first"}); err != nil {
		return err
	}
	close(s.started)
	<-s.release
	s.ctxErr = ctx.Err()
	err := fn(&hnslb.LoadBalancer{ID: "second"})
	s.walked <- err
	return err
}

func (s *stallingWalker) WalkEndpointsOfNetwork(ctx context.Context, networkID string, fn func(*hnslb.Endpoint) error) error {
	return hnslb.WalkEndpointsOfNetwork(ctx, s.Client, networkID, fn)
}
