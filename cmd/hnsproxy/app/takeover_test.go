package app

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
)

// --takeover with a new token has the start take over load balancers the
// previous proxy left on the frontends hnsproxy wants, an external IP's
// included, though hnsproxy has a state file of its own from an earlier
// run: without it the foreign one stays, only reported (F1), and the
// Service's external IP is never served by hnsproxy.
func TestTakeoverReachesTheReconciler(t *testing.T) {
	hns := sim.New(sim.Options{})
	wireWinOne(t, hns)
	args := []string{"--network-name=cbr0", "--hostname-override=win-1", "--min-sync-period=0", "--healthz-port=0", "--metrics-port=0",
		"--state-file=" + t.TempDir() + "/state.json", "--hns-endpoint=sim"}

	// A first run leaves a state file: later starts take over only with a new token.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, parseConfig(t, args...), fake.NewClientset(webOnTwoNodes()...), hns) }()
	waitForWeb(ctx, t, hns, done)
	cancel()
	<-done

	var podA string
	for _, e := range hns.Snapshot().Endpoints {
		if e.IP() == "10.244.1.5" {
			podA = e.ID
		}
	}
	if _, err := hns.CreateLoadBalancer(context.Background(), &hnslb.LoadBalancer{ // the previous proxy's
		HostComputeEndpoints: []string{podA},
		FrontendVIPs:         []string{"192.0.2.50"},
		PortMappings:         []hnslb.PortMapping{{Protocol: hnslb.ProtocolTCP, InternalPort: 8080, ExternalPort: 80}},
		SchemaVersion:        hnslb.SchemaVersion{Major: 2},
	}); err != nil {
		t.Fatal(err)
	}
	objs := webOnTwoNodes()
	objs[1].(*v1.Service).Spec.ExternalIPs = []string{"192.0.2.50"}
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	go func() {
		done <- run(ctx, parseConfig(t, append(args, "--takeover=replace-kube-proxy")...), fake.NewClientset(objs...), hns)
	}()
	waitForVIP(ctx, t, hns, done, "192.0.2.50")
	cancel()
	<-done
}
