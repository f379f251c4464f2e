package reconciler

import (
	"context"
	"slices"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// frontendWatch is the simulator seen through a decorator that, after every
// write, notes whether a frontend is served by a load balancer holding a
// given backend (not a fake: every call goes to the simulator).
type frontendWatch struct {
	hnslb.Client
	e       *env
	key     intent.LBKey
	backend string
	// served holds, per write in order, whether the frontend was served after it.
	served []bool
	ops    []sim.Op
}

func (w *frontendWatch) note(op sim.Op, err error) {
	if err != nil {
		return
	}
	l := w.e.hnsLB(w.key)
	w.served = append(w.served, l != nil && slices.Contains(w.e.backendIPs(l), w.backend))
	w.ops = append(w.ops, op)
}

func (w *frontendWatch) CreateLoadBalancer(ctx context.Context, l *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	out, err := w.Client.CreateLoadBalancer(ctx, l)
	w.note(sim.OpCreateLoadBalancer, err)
	return out, err
}

func (w *frontendWatch) UpdateLoadBalancer(ctx context.Context, id string, l *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	out, err := w.Client.UpdateLoadBalancer(ctx, id, l)
	w.note(sim.OpUpdateLoadBalancer, err)
	return out, err
}

func (w *frontendWatch) DeleteLoadBalancer(ctx context.Context, id string) error {
	err := w.Client.DeleteLoadBalancer(ctx, id)
	w.note(sim.OpDeleteLoadBalancer, err)
	return err
}

func (w *frontendWatch) CreateEndpoint(ctx context.Context, n string, ep *hnslb.Endpoint) (*hnslb.Endpoint, error) {
	out, err := w.Client.CreateEndpoint(ctx, n, ep)
	w.note(sim.OpCreateEndpoint, err)
	return out, err
}

func (w *frontendWatch) DeleteEndpoint(ctx context.Context, id string) error {
	err := w.Client.DeleteEndpoint(ctx, id)
	w.note(sim.OpDeleteEndpoint, err)
	return err
}

// TestProviderAddressChangeKeepsOtherBackends: a remote endpoint whose
// provider address changed (a remote subnet route that appeared or moved)
// is replaced in one Sync; the load balancers using it keep serving their
// other backends throughout (with modify without a gap; without it, dark
// only between a delete and the create right after it, as any update
// there), and the writes are 2n + 2 for n load balancers with modify,
// 4n + 2 without.
func TestProviderAddressChangeKeepsOtherBackends(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2022, sim.ProfileWS2025} {
		t.Run(profile, func(t *testing.T) {
			e := newEnv(t, profile)
			e.local("10.244.1.10")
			e.local("10.244.1.11")
			const pod = "10.244.2.20"
			shared := lb("10.96.0.10", 80, loc("10.244.1.10"), rem(pod, "10.244.1.1"))
			other := lb("10.96.0.11", 80, loc("10.244.1.11"), rem(pod, "10.244.1.1"))
			only := lb("10.96.0.12", 80, rem(pod, "10.244.1.1"))
			w := &frontendWatch{Client: e.hns, e: e, key: shared.Key, backend: "10.244.1.10"}
			r, res := e.start(w, shared, other, only)
			if res.Failed+res.Pending != 0 {
				t.Fatalf("initial sync: %+v", res)
			}
			before := e.hnsLB(shared.Key).ID
			e.hns.ResetCounters()
			w.served, w.ops = nil, nil

			moved := []intent.LB{
				lb("10.96.0.10", 80, loc("10.244.1.10"), rem(pod, "192.168.0.2")),
				lb("10.96.0.11", 80, loc("10.244.1.11"), rem(pod, "192.168.0.2")),
				lb("10.96.0.12", 80, rem(pod, "192.168.0.2")),
			}
			upsert(r, moved...)
			if res := r.Sync(ctx); res.Failed+res.Pending != 0 {
				t.Fatalf("sync after the provider address moved: %+v", res)
			}
			e.assertRealized(moved)
			for _, ep := range e.snapshot().Endpoints {
				if ep.IsRemote() && ep.IP() == pod && ep.ProviderAddress() != "192.168.0.2" {
					t.Errorf("remote endpoint %s has provider address %q, want 192.168.0.2", pod, ep.ProviderAddress())
				}
			}

			modify := e.profile.Features().ModifyLoadBalancer
			for i, ok := range w.served {
				dark := !ok && (i+1 == len(w.served) || !w.served[i+1] || w.ops[i] != sim.OpDeleteLoadBalancer || w.ops[i+1] != sim.OpCreateLoadBalancer)
				if dark || (!ok && modify) {
					t.Fatalf("after write %d of %v the frontend %s lost its other backend %s (served: %v)", i, w.ops, shared.Key, w.backend, w.served)
				}
			}
			// Two load balancers with another backend (rewritten twice), one
			// with none (deleted, created again), the endpoint (deleted, created).
			wantWrites := 2*4 + 2 + 2
			if modify {
				wantWrites = 2*2 + 2 + 2
				if got := e.hnsLB(shared.Key).ID; got != before {
					t.Errorf("load balancer ID %s became %s: with modify it is rewritten in place", before, got)
				}
			}
			if got := e.counters().Writes(); got != wantWrites {
				t.Errorf("%d HNS writes (%v), want %d", got, w.ops, wantWrites)
			}
		})
	}
}
