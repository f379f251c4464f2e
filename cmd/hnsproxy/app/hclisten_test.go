package app

import (
	"context"
	"net"
	"slices"
	"strconv"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
)

// kube-proxy on Windows runs dual-stack wherever HNS supports IPv6 dual
// stack on a network that is not overlay (cmd/kube-proxy/app
// server_windows.go platformCheckSupported, pkg/proxy/winkernel
// supported.go DualStackCompatible), and then opens every health-check
// node port on 0.0.0.0 (tcp4) and :: (tcp6): it never reads
// --cluster-cidr for that. hnsproxy serves IPv6 Services on the same
// condition (proxier/desired familyUnsupported), so an IPv6 load
// balancer's probes of an externalTrafficPolicy Local Service must find a
// listener on :: whether or not --cluster-cidr names an IPv6 range.
func TestHealthCheckPortsListenInEveryFamilyServed(t *testing.T) {
	for _, tc := range []struct {
		name         string
		clusterCIDRs []string
		servesIPv6   bool
		want         []string
	}{
		{"IPv6 served, no --cluster-cidr", nil, true, []string{"0.0.0.0", "::"}},
		{"IPv6 served, IPv4 --cluster-cidr", []string{"10.244.0.0/16"}, true, []string{"0.0.0.0", "::"}},
		{"IPv6 served, dual-stack --cluster-cidr", []string{"10.244.0.0/16", "fd00::/56"}, true, []string{"0.0.0.0", "::"}},
		{"IPv6 not served", nil, false, []string{"0.0.0.0"}},
		{"IPv6 not served, IPv6 --cluster-cidr", []string{"fd00::/56"}, false, []string{"::"}},
	} {
		if got := healthCheckListenIPs(tc.clusterCIDRs, tc.servesIPv6); !slices.Equal(got, tc.want) {
			t.Errorf("%s: health checks listen on %v, want %v", tc.name, got, tc.want)
		}
	}
	dual := Capabilities{Features: hnslb.Features{IPv6DualStack: true}}
	if servesIPv6(dual, &hnslb.Network{Type: hnslb.NetworkTypeOverlay}) {
		t.Error("overlay networks serve no IPv6")
	}
	if servesIPv6(Capabilities{}, &hnslb.Network{Type: hnslb.NetworkTypeL2Bridge}) {
		t.Error("an HNS without IPv6 dual stack serves no IPv6")
	}
}

// A stopped daemon has closed its Services' health-check node ports when
// it returns: the next hnsproxy on the node (a replaced pod, the service
// restarted) must find them free, not fail each with "address already in
// use".
func TestAStoppedDaemonFreesItsHealthCheckPorts(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hns := sim.New(sim.Options{})
	wireWinOne(t, hns)
	port := freePort(t)
	hcPort, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	objs := webOnTwoNodes()
	web := objs[1].(*v1.Service)
	web.Spec.Type = v1.ServiceTypeLoadBalancer
	web.Spec.ExternalTrafficPolicy = v1.ServiceExternalTrafficPolicyLocal
	web.Spec.Ports[0].NodePort = 30080
	web.Spec.HealthCheckNodePort = int32(hcPort)
	web.Status.LoadBalancer.Ingress = []v1.LoadBalancerIngress{{IP: "198.51.100.7"}}
	cfg := parseConfig(t, "--network-name=cbr0", "--hostname-override=win-1", "--min-sync-period=0",
		"--healthz-bind-address=127.0.0.1:"+freePort(t), "--metrics-port=0",
		"--state-file="+t.TempDir()+"/state.json", "--hns-endpoint=sim")
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, fake.NewClientset(objs...), hns) }()
	addr := net.JoinHostPort("127.0.0.1", port)
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		select {
		case err := <-done:
			t.Fatalf("the daemon stopped: %v", err)
		default:
		}
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil, nil
	}); err != nil {
		t.Fatalf("shop/web's health-check port %s never opened: %v", port, err)
	}
	cancel()
	<-done
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("shop/web's health-check port after the daemon returned: %v", err)
	}
	ln.Close()
}
