package diag

import (
	"context"
	"fmt"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/utils/ptr"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
	"github.com/hnsproxy/hnsproxy/reconciler"
	"github.com/hnsproxy/hnsproxy/sim"
)

// TestDiagnoseComputesWithTheLearnedBackendCap: on a build that enforces
// 64 backends while its version says more (ws2022-cap64), hnsproxy learns
// the cap from HNS's refusal and its state file keeps it for the build. The
// diagnosis computes with that cap, as the proxier does, so a Service of
// 100 endpoints reads as programmed, not as 36 backends missing that a
// next sync would add. Where --max-backends-per-lb fixes the cap, the kept
// one is not read, as hnsproxy does not read it.
func TestDiagnoseComputesWithTheLearnedBackendCap(t *testing.T) {
	ctx := context.Background()
	f := newFixtureOn(t, fixtureNode{profile: sim.ProfileWS2022Cap64, network: hnslb.NetworkTypeL2Bridge}, sim.Echo{})
	objs := unplacedService("big", "10.96.0.42", false)
	slice := objs[1].(*discoveryv1.EndpointSlice)
	for i := range 100 {
		slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{Addresses: []string{fmt.Sprintf("10.244.2.%d", 100+i)},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}, NodeName: ptr.To(other)})
	}
	f.create(objs...)

	// hnsproxy's programming: refused over 64, the cap learned, every
	// Service computed again at it.
	in := f.read()
	if in.Config.MaxBackends <= hnslb.MaxBackendsLegacy {
		t.Fatalf("before learning: cap %d, want the build's, over 64", in.Config.MaxBackends)
	}
	rec := reconciler.New(f.hns, reconciler.Options{NetworkID: in.Network.ID, Features: in.Config.Features, StateFile: f.stateFile,
		LearnBackendCap: true, OSBuild: osBuildOf(ctx, f.hns)})
	if err := rec.Start(ctx); err != nil {
		t.Fatal(err)
	}
	program := func(cfg desired.Config) {
		state := desired.Compute(desired.InputsOf(in.Services, in.Slices), cfg)
		for _, ep := range state.RemoteEndpoints {
			rec.UpsertEndpoint(ep)
		}
		for _, lb := range state.LBs {
			rec.Upsert(*lb)
		}
		if res := rec.Sync(ctx); res.Failed+res.Pending != 0 {
			t.Fatalf("programming HNS: %+v", res)
		}
	}
	program(in.Config)
	if got := rec.LearnedBackendCap(); got != hnslb.MaxBackendsLegacy {
		t.Fatalf("learned cap %d, want 64", got)
	}
	atCap := in.Config
	atCap.LowerBackendCap(rec.LearnedBackendCap())
	program(atCap)

	in = f.read()
	if in.Config.MaxBackends != hnslb.MaxBackendsLegacy {
		t.Errorf("diagnosis computes with cap %d, want the learned 64", in.Config.MaxBackends)
	}
	got := row(t, Diagnose(in), "web/big:http", RoleClusterIP)
	if got.State != StateOK || len(got.Backends) != hnslb.MaxBackendsLegacy {
		t.Errorf("web/big: %s with %d backends, why %q; want ok with the 64 HNS holds", got.State, len(got.Backends), got.Why)
	}
	for _, b := range got.Backends {
		if b.State != "" {
			t.Errorf("backend %+v, want it as hnsproxy wants it", b)
		}
	}

	f.cfg.HNS.MaxBackendsPerLB = 200
	if in := f.read(); in.Config.MaxBackends != 200 {
		t.Errorf("with --max-backends-per-lb=200: cap %d, want 200, the kept cap not read", in.Config.MaxBackends)
	}
}
