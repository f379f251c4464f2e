package sim

import (
	"slices"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// A failed load balancer create leaves one without port mappings
// (kubernetes/kubernetes#141488) at the rate asked; it holds its frontend
// unseen only in the PartialHoldsFrontend variant, until deleted.
func TestPartialCreates(t *testing.T) {
	for _, holds := range []bool{false, true} {
		h := newSim(t, ProfileWS2022)
		doc := withBackend(t, h, lbDoc("10.96.0.10", 80))
		h.SetFaults(Faults{ErrorRate: map[Op]float64{OpCreateLoadBalancer: 1}, Errors: []hnslb.ErrorCode{hnslb.CodeInvalidParameter},
			PartialCreates: 1, PartialHoldsFrontend: holds})
		_, err := h.CreateLoadBalancer(ctx, doc)
		wantCode(t, err, hnslb.CodeInvalidParameter)
		list, err := h.ListLoadBalancers(ctx)
		if err != nil || len(list) != 1 {
			t.Fatalf("holds %v: listing after the failed create %+v, %v; want the partial one", holds, list, err)
		}
		partial := list[0]
		if len(partial.PortMappings) != 0 || !slices.Equal(partial.FrontendVIPs, doc.FrontendVIPs) ||
			!slices.Equal(partial.HostComputeEndpoints, doc.HostComputeEndpoints) || !hnslb.IsGUID(partial.ID) {
			t.Errorf("holds %v: partial %+v, want the document's VIPs and backends without port mappings", holds, partial)
		}
		if n := h.Counters().PartialCreates; n != 1 {
			t.Errorf("holds %v: PartialCreates %d, want 1", holds, n)
		}

		h.SetFaults(Faults{})
		got, err := h.CreateLoadBalancer(ctx, doc)
		if holds {
			wantCode(t, err, hnslb.CodePortAlreadyExists)
			if err == nil || !strings.Contains(err.Error(), partial.ID) {
				t.Errorf("create on the partial's frontend: %v, want it named", err)
			}
			if err := h.DeleteLoadBalancer(ctx, partial.ID); err != nil {
				t.Fatal(err)
			}
			got, err = h.CreateLoadBalancer(ctx, doc)
		}
		if err != nil || len(got.PortMappings) != 1 {
			t.Errorf("holds %v: create once free: %+v, %v", holds, got, err)
		}
	}
}

// No partial load balancer where the create never reached HNS, named a
// backend HNS lacks, or the rate is 0.
func TestNoPartialCreates(t *testing.T) {
	h := newSim(t, ProfileWS2022)
	doc := withBackend(t, h, lbDoc("10.96.0.10", 80))
	for _, f := range []Faults{
		{ErrorRate: map[Op]float64{OpCreateLoadBalancer: 1}, PartialCreates: 1}, // RPC server unavailable
		{ErrorRate: map[Op]float64{OpCreateLoadBalancer: 1}, Errors: []hnslb.ErrorCode{hnslb.CodeInvalidParameter}},
	} {
		h.SetFaults(f)
		if _, err := h.CreateLoadBalancer(ctx, doc); err == nil {
			t.Fatalf("faults %+v: the create did not fail", f)
		}
	}
	h.SetFaults(Faults{PartialCreates: 1})
	gone := lbDoc("10.96.0.11", 80, "6f1c9c1e-4d36-4a51-9b1e-2c8e3f0a7b10")
	if _, err := h.CreateLoadBalancer(ctx, gone); !hnslb.IsMissingReference(err) {
		t.Fatalf("create with a missing backend: %v", err)
	}
	if list, _ := h.ListLoadBalancers(ctx); len(list) != 0 || h.Counters().PartialCreates != 0 {
		t.Errorf("partial load balancers %+v (%d counted), want none", list, h.Counters().PartialCreates)
	}
}

// A create HNS applied before its error (a reply lost, hcn's query after
// the create failing) stored the whole load balancer: HNS leaves no partial
// one beside it.
func TestNoPartialBesideAnAppliedCreate(t *testing.T) {
	h := newSim(t, ProfileWS2022)
	doc := withBackend(t, h, lbDoc("10.96.0.10", 80))
	h.SetFaults(Faults{ErrorRate: map[Op]float64{OpCreateLoadBalancer: 1}, Errors: []hnslb.ErrorCode{hnslb.CodeTimeout},
		Committed: 1, PartialCreates: 1, PartialHoldsFrontend: true})
	if _, err := h.CreateLoadBalancer(ctx, doc); err == nil {
		t.Fatal("the create did not fail")
	}
	list := h.Snapshot().LoadBalancers
	if len(list) != 1 || len(list[0].PortMappings) != 1 || h.Counters().PartialCreates != 0 {
		t.Errorf("after an applied create: %+v (%d partial counted), want the whole load balancer alone", list, h.Counters().PartialCreates)
	}
}
