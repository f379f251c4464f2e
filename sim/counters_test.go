package sim

import (
	"testing"

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
