package app

import (
	"context"
	"path/filepath"
	"testing"

	"k8s.io/client-go/tools/events"

	hnsevents "github.com/hnsproxy/hnsproxy/events"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/metrics"
	"github.com/hnsproxy/hnsproxy/proxier"
	"github.com/hnsproxy/hnsproxy/reconciler"
	"github.com/hnsproxy/hnsproxy/sim"
)

// A stop that ends a Sync half way leaves its load balancers failed with
// "not called: context canceled": HNS refused nothing, so no Service gets
// an HNSLoadBalancerRejected Warning from it.
func TestStopMidSyncRejectsNoLoadBalancer(t *testing.T) {
	metrics.Register()
	hns := sim.New(sim.Options{})
	network := wireWinOne(t, hns)
	rec := reconciler.New(hns, reconciler.Options{NetworkID: network.ID, StateFile: filepath.Join(t.TempDir(), "state.json")})
	if err := rec.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	rec.Upsert(intent.LB{
		Key:          intent.LBKey{Family: intent.IPv4, VIP: "10.96.0.10", Protocol: hnslb.ProtocolTCP, Port: 80},
		InternalPort: 8080, Owner: "shop/web:http", Origin: intent.OriginClusterIP,
		Backends: []intent.Backend{{IP: "10.244.1.5", Local: true}},
	})
	stopped, stop := context.WithCancel(context.Background())
	stop()
	res := rec.Sync(stopped)
	if res.Failed == 0 {
		t.Fatalf("a Sync after the stop: %+v, want its load balancer failed (the call not made)", res)
	}
	recorder := events.NewFakeRecorder(10)
	obs := newObserver(nil, nil, nil, rec, hnsevents.NewReporter(fakeBroadcaster{rec: recorder}, "win-1"))
	obs.SyncDone(proxier.SyncStats{Result: res})
	if len(recorder.Events) != 0 {
		t.Errorf("a stop raised %q", <-recorder.Events)
	}
}
