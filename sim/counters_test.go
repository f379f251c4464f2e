package sim

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

func TestCounters(t *testing.T) {
	h := newSim(t, ProfileWS2022)
	n := mustNetwork(t, h, "cbr0", hnslb.NetworkTypeL2Bridge) // 1 write
	a := mustEndpoint(t, h, n.ID, endpointDoc("10.244.1.5"))  // 1 write
	b := mustEndpoint(t, h, n.ID, endpointDoc("10.244.1.6"))  // 1 write
	if _, err := h.CreateLoadBalancer(ctx, lbDoc("10.96.0.10", 80, a.ID)); err != nil {
		t.Fatal(err) // 1 write
	}
	if _, err := h.CreateLoadBalancer(ctx, lbDoc("10.96.0.10", 80, b.ID)); err == nil {
		t.Fatal("conflict accepted") // failed: not a write
	}
	if _, err := h.ListEndpoints(ctx); err != nil { // 1 + 3*2 hcn calls
		t.Fatal(err)
	}
	if _, err := h.ListLoadBalancers(ctx); err != nil { // 1 + 3*1
		t.Fatal(err)
	}
	if _, err := h.Version(ctx); err != nil {
		t.Fatal(err)
	}
	c := h.Counters()
	if got := c.Count(OpCreateLoadBalancer); got != 2 {
		t.Errorf("Count(Create LB) = %d", got)
	}
	if c.CountResult(OpCreateLoadBalancer, ResultOK) != 1 || c.CountResult(OpCreateLoadBalancer, "PortAlreadyExists") != 1 {
		t.Errorf("results %v", c.Calls[OpCreateLoadBalancer])
	}
	if c.Writes() != 4 || c.Lists() != 2 || c.Total() != 8 {
		t.Errorf("Writes %d Lists %d Total %d", c.Writes(), c.Lists(), c.Total())
	}
	// Network 3, endpoints 5+5, LB 3, failed LB 1, lists (1+3*2) and (1+3*1), version 1.
	if c.HCNCalls != 3+10+3+1+7+4+1 {
		t.Errorf("HCNCalls = %d", c.HCNCalls)
	}
	// Counters are a copy.
	c.Calls[OpVersion][ResultOK] = 100
	if h.Counters().Count(OpVersion) != 1 {
		t.Error("Counters shares its maps")
	}
	// Snapshots are not calls.
	h.Snapshot()
	if h.Counters().Total() != 8 {
		t.Error("Snapshot was counted")
	}
	// A get is a filtered enumerate: 1 + 3 when found, 1 when not.
	h.ResetCounters()
	if _, err := h.GetEndpointByID(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := h.GetNetworkByName(ctx, "missing"); err == nil {
		t.Fatal("found a missing network")
	}
	if got := h.Counters().HCNCalls; got != 4+1 {
		t.Errorf("gets cost %d HCN calls", got)
	}
	h.ResetCounters()
	if c := h.Counters(); c.Total() != 0 || c.HCNCalls != 0 {
		t.Errorf("after reset %+v", c)
	}
}

func TestCancelledCallIsNotCounted(t *testing.T) {
	p, _ := ProfileByName(ProfileWS2022)
	h := New(Options{Profile: p, Latency: 1 << 40}) // a latency no test waits for
	cctx, cancel := contextWithCancel()
	cancel()
	if _, err := h.CreateNetwork(cctx, &hnslb.Network{Name: "x", Type: hnslb.NetworkTypeL2Bridge}); err == nil {
		t.Fatal("call with a cancelled context succeeded")
	}
	if h.Counters().Total() != 0 || len(h.Snapshot().Networks) != 0 {
		t.Error("cancelled call reached HNS")
	}
}

func TestLatencyEndsWithTheContext(t *testing.T) {
	h := New(Options{Latency: 1 << 40})
	cctx, cancel := contextWithCancel()
	done := make(chan error)
	go func() {
		_, err := h.ListNetworks(cctx)
		done <- err
	}()
	cancel()
	if err := <-done; err == nil {
		t.Fatal("call outlived its context")
	}
	h.SetLatency(0)
	if _, err := h.ListNetworks(ctx); err != nil {
		t.Fatal(err)
	}
	if got := h.Counters().Count(OpListNetworks); got != 1 {
		t.Errorf("%d list calls counted, want the one that reached HNS", got)
	}
}

// recordSleeps replaces h's latency wait with one that records each wait
// and returns at once.
func recordSleeps(h *HNS) *[]time.Duration {
	var waits []time.Duration
	h.sleep = func(_ context.Context, d time.Duration) error {
		waits = append(waits, d)
		return nil
	}
	return &waits
}

// Latency is charged per hcn RPC: the first before the call reaches HNS,
// the call's remaining RPCs after it, so a list of N objects waits 1+3N
// latencies and a failed call one.
func TestLatencyIsChargedPerHCNRPC(t *testing.T) {
	const rpc = time.Millisecond
	h := newSim(t, ProfileWS2022)
	n := mustNetwork(t, h, "cbr0", hnslb.NetworkTypeL2Bridge)
	a := mustEndpoint(t, h, n.ID, endpointDoc("10.244.1.5"))
	b := mustEndpoint(t, h, n.ID, endpointDoc("10.244.1.6"))
	h.SetLatency(rpc)
	waits := recordSleeps(h)
	for _, tc := range []struct {
		name string
		call func() error
		rpcs int
	}{
		{"create load balancer", func() error { _, err := h.CreateLoadBalancer(ctx, lbDoc("10.96.0.10", 80, a.ID)); return err }, 3},
		{"conflicting create (fails)", func() error {
			if _, err := h.CreateLoadBalancer(ctx, lbDoc("10.96.0.10", 80, b.ID)); err == nil {
				return errors.New("conflict accepted")
			}
			return nil
		}, 1},
		{"create remote endpoint", func() error { _, err := h.CreateEndpoint(ctx, n.ID, remoteDoc("10.244.2.5", "10.0.0.2")); return err }, 5},
		{"list three endpoints", func() error { _, err := h.ListEndpoints(ctx); return err }, 1 + 3*3},
		{"get one endpoint", func() error { _, err := h.GetEndpointByID(ctx, a.ID); return err }, 4},
		{"delete an endpoint", func() error { return h.DeleteEndpoint(ctx, b.ID) }, 1},
	} {
		*waits = nil
		before := h.Counters().HCNCalls
		if err := tc.call(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := h.Counters().HCNCalls - before; got != tc.rpcs {
			t.Fatalf("%s: %d hcn RPCs counted, want %d", tc.name, got, tc.rpcs)
		}
		want := []time.Duration{rpc}
		if tc.rpcs > 1 {
			want = append(want, time.Duration(tc.rpcs-1)*rpc)
		}
		if !slices.Equal(*waits, want) {
			t.Errorf("%s: waited %v, want %v (first RPC, then the rest)", tc.name, *waits, want)
		}
	}
}

// A context that ends while the remaining RPCs of a list are waited out
// fails the list, which HNS served and counted.
func TestContextEndingDuringTheRemainingRPCsFailsTheCall(t *testing.T) {
	h := newSim(t, ProfileWS2022)
	mustNetwork(t, h, "cbr0", hnslb.NetworkTypeL2Bridge)
	h.SetLatency(time.Millisecond)
	cctx, cancel := contextWithCancel()
	calls := 0
	h.sleep = func(ctx context.Context, _ time.Duration) error {
		if calls++; calls == 2 {
			cancel()
			return ctx.Err()
		}
		return nil
	}
	if nws, err := h.ListNetworks(cctx); err == nil || nws != nil {
		t.Fatalf("ListNetworks = %v, %v; want no result and the context's error", nws, err)
	}
	if got := h.Counters().Count(OpListNetworks); got != 1 {
		t.Errorf("%d list calls counted, want the one HNS served", got)
	}
}
