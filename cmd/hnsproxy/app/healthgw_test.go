package app

import (
	"context"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
)

// The daemon finds a root endpoint its CNI made after hnsproxy started
// (flannel makes cbr0, then cbr0_ep) and forwards health checks on an
// ingress IP to it, without a restart.
func TestDaemonFindsARootEndpointMadeAfterStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hns := sim.New(sim.Options{})
	network := wireWinOne(t, hns)
	objs := webOnTwoNodes()
	web := objs[1].(*v1.Service)
	web.Spec.Type = v1.ServiceTypeLoadBalancer
	web.Spec.ExternalTrafficPolicy = v1.ServiceExternalTrafficPolicyLocal
	web.Spec.Ports[0].NodePort = 30080
	web.Spec.HealthCheckNodePort = 32001
	web.Status.LoadBalancer.Ingress = []v1.LoadBalancerIngress{{IP: "198.51.100.7"}}
	client := fake.NewClientset(objs...)
	cfg := parseConfig(t, "--network-name=cbr0", "--hostname-override=win-1", "--min-sync-period=0",
		"--forward-healthcheck-vip", "--root-hnsendpoint-name=cbr0_ep", "--healthz-port=0", "--metrics-port=0", "--iptables-sync-period=200ms",
		"--state-file="+t.TempDir()+"/state.json", "--hns-endpoint=sim")
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, client, hns) }()
	lbOn := func(vip string, port uint16, backends ...string) func(context.Context) (bool, error) {
		return func(ctx context.Context) (bool, error) {
			select {
			case err := <-done:
				t.Fatalf("the daemon stopped: %v", err)
			default:
			}
			snap := hns.Snapshot()
			ips := map[string]string{}
			for _, e := range snap.Endpoints {
				ips[e.ID] = e.IP()
			}
			return slices.ContainsFunc(snap.LoadBalancers, func(lb hnslb.LoadBalancer) bool {
				var got []string
				for _, id := range lb.HostComputeEndpoints {
					got = append(got, ips[id])
				}
				return slices.Contains(lb.FrontendVIPs, vip) && len(lb.PortMappings) > 0 &&
					lb.PortMappings[0].ExternalPort == port && (backends == nil || slices.Equal(got, backends))
			}), nil
		}
	}
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, time.Minute, true, lbOn("198.51.100.7", 80)); err != nil {
		t.Fatalf("no ingress load balancer: %v", err)
	}
	if _, err := hns.CreateEndpoint(ctx, network.ID, &hnslb.Endpoint{Name: "cbr0_ep",
		IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.1.2", PrefixLength: 24}}}); err != nil {
		t.Fatal(err)
	}
	// The next read, at most a sync period later, finds it.
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, time.Minute, true, lbOn("198.51.100.7", 32001, "10.244.1.2")); err != nil {
		t.Fatalf("health checks on the ingress IP are not forwarded to the root endpoint made after start: %v", err)
	}
	// Its last state file write must land before t.TempDir's removal.
	cancel()
	<-done
}
