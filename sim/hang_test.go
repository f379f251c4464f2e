package sim

import (
	"context"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// A hung call ignores its context, changes nothing while held, and goes on
// once SetFaults lifts the hang; other operations pass meanwhile.
func TestHangHoldsCallsUntilLifted(t *testing.T) {
	h := New(Options{Seed: 1})
	n, err := h.CreateNetwork(ctx, &hnslb.Network{Name: "cbr0", Type: hnslb.NetworkTypeL2Bridge})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := h.CreateEndpoint(ctx, n.ID, endpointDoc("10.244.1.2"))
	if err != nil {
		t.Fatal(err)
	}
	h.SetFaults(Faults{Hang: []Op{OpCreateLoadBalancer}})
	cancelled, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := h.CreateLoadBalancer(cancelled, lbDoc("10.96.0.10", 80, ep.ID))
		done <- err
	}()
	if err := h.WaitHeld(ctx, 1); err != nil {
		t.Fatal(err)
	}
	cancel() // hcn calls cannot be cancelled: the call stays held
	if lbs, err := h.ListLoadBalancers(ctx); err != nil || len(lbs) != 0 {
		t.Fatalf("while held: ListLoadBalancers = %d, %v; want 0 load balancers, nil", len(lbs), err)
	}
	select {
	case err := <-done:
		t.Fatalf("hung call returned %v before the hang was lifted", err)
	default:
	}
	h.SetFaults(Faults{})
	if err := <-done; err != nil {
		t.Fatalf("released call: %v", err)
	}
	if lbs, _ := h.ListLoadBalancers(ctx); len(lbs) != 1 {
		t.Errorf("after release: %d load balancers, want 1", len(lbs))
	}
	if h.Held() != 0 {
		t.Errorf("Held = %d after release", h.Held())
	}
}

// HangReply applies the write and holds the reply: the object exists while
// its creator still waits.
func TestHangReplyAppliesTheWrite(t *testing.T) {
	h := New(Options{Seed: 1})
	n, err := h.CreateNetwork(ctx, &hnslb.Network{Name: "cbr0", Type: hnslb.NetworkTypeL2Bridge})
	if err != nil {
		t.Fatal(err)
	}
	h.SetFaults(Faults{HangReply: []Op{AnyOp}})
	done := make(chan error, 1)
	go func() {
		_, err := h.CreateEndpoint(ctx, n.ID, endpointDoc("10.244.1.2"))
		done <- err
	}()
	if err := h.WaitHeld(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if got := h.Snapshot().Endpoints; len(got) != 1 {
		t.Errorf("while the reply is held: %d endpoints, want 1", len(got))
	}
	h.SetFaults(Faults{})
	if err := <-done; err != nil {
		t.Fatalf("released call: %v", err)
	}
}
