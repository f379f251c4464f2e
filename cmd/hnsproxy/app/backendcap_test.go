package app

import (
	"context"
	"fmt"
	"strings"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	hnsevents "github.com/hnsproxy/hnsproxy/events"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
)

// A cap --max-backends-per-lb set is never lowered (its help says so):
// where HNS refuses more than 64 backends, the load balancer is refused and
// its Service told, rather than the daemon learning the cap of 64 it learns
// without the flag and dropping backends the operator asked for.
func TestAnOperatorsBackendCapIsNeverLowered(t *testing.T) {
	p, err := sim.ProfileByName(sim.ProfileWS2022)
	if err != nil {
		t.Fatal(err)
	}
	p.MaxBackends = hnslb.MaxBackendsLegacy
	hns := sim.New(sim.Options{Profile: p})
	wireWinOne(t, hns)
	objs := webOnTwoNodes()
	slice := objs[2].(*discoveryv1.EndpointSlice)
	slice.Endpoints = nil
	for i := range hnslb.MaxBackendsLegacy + 1 { // on win-2: remote endpoints hnsproxy makes
		slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{Addresses: []string{fmt.Sprintf("10.244.2.%d", i+1)},
			NodeName: ptr.To("win-2"), Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}})
	}
	client := fake.NewClientset(objs...)
	cfg := parseConfig(t, "--network-name=cbr0", "--hostname-override=win-1", "--min-sync-period=0", "--healthz-port=0", "--metrics-port=0",
		"--max-backends-per-lb=100", "--state-file="+t.TempDir()+"/state.json", "--hns-endpoint=sim")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, client, hns) }()
	if ok, seen := eventRaised(ctx, client, func(ev eventsv1.Event) bool {
		return ev.Reason == hnsevents.ReasonLoadBalancerRejected && strings.Contains(ev.Note, "(0x57)")
	}); !ok {
		t.Fatalf("no HNSLoadBalancerRejected for the backends HNS refuses; events %q", seen)
	}
	for _, lb := range hns.Snapshot().LoadBalancers {
		t.Errorf("HNS holds load balancer %v with %d backends: the operator's cap of 100 was lowered", lb.FrontendVIPs, len(lb.HostComputeEndpoints))
	}
	cancel()
	<-done
}
