package app

import (
	"context"
	"io"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options/optionstest"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/sim/remote"
	"github.com/hnsproxy/hnsproxy/sim/remote/remotetest"
)

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

func parseConfig(t *testing.T, args ...string) *options.Config {
	t.Helper()
	cfg, err := completeConfig(args...)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// completeConfig completes args as the command does: the configuration a
// start would run with, or the error it would end on.
func completeConfig(args ...string) (*options.Config, error) {
	cfg, _, err := optionstest.Complete(args...)
	return cfg, err
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestDaemonProgramsHNS runs the whole daemon against a fake API server and
// a simulated HNS, in process and as the hnssim service over a unix socket:
// a ClusterIP Service with a local and a remote endpoint becomes one HNS
// load balancer, and the servers report it.
func TestDaemonProgramsHNS(t *testing.T) {
	t.Run("in-process simulator", func(t *testing.T) {
		hns := sim.New(sim.Options{})
		testDaemon(t, hns, "sim", hns)
	})
	t.Run("hnssim over a unix socket", func(t *testing.T) {
		hns := sim.New(sim.Options{})
		testDaemon(t, hns, serveHNSSim(t, hns), nil)
	})
}

// serveHNSSim serves hns as the hnssim service does, on a unix socket, for
// the test's duration, and returns its --hns-endpoint.
func serveHNSSim(t *testing.T, hns *sim.HNS) string {
	t.Helper()
	return "unix://" + remotetest.Serve(t, remote.NewServer(hns, remote.Extras{}))
}

// testDaemon runs the daemon with --hns-endpoint=endpoint (inject, if not
// nil, replaces the client that selects) and checks what hns ends up holding.
func testDaemon(t *testing.T, hns *sim.HNS, endpoint string, inject hnslb.Client) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wireWinOne(t, hns)

	client := fake.NewClientset(webOnTwoNodes()...)

	healthz, metricsPort := freePort(t), freePort(t)
	cfg := parseConfig(t, "--network-name=cbr0", "--hostname-override=win-1", "--min-sync-period=0",
		"--healthz-bind-address=127.0.0.1:"+healthz, "--metrics-bind-address=127.0.0.1:"+metricsPort,
		"--state-file="+t.TempDir()+"/state.json", "--hns-endpoint="+endpoint)

	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, client, inject) }()

	lb := waitForWeb(ctx, t, hns, done)
	if pm := lb.PortMappings[0]; pm.ExternalPort != 80 || pm.InternalPort != 8080 || pm.Protocol != hnslb.ProtocolTCP {
		t.Errorf("port mapping = %+v", pm)
	}

	if code, body := httpGet(t, "http://127.0.0.1:"+healthz+"/healthz"); code != 200 || !strings.Contains(body, `"nodeEligible":true`) {
		t.Errorf("/healthz = %d %s", code, body)
	}
	// /debug/hns never waits for a sync: read during one, it shows the last
	// published status, and the sync it met publishes when it ends.
	var code int
	var body string
	_ = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		code, body = httpGet(t, "http://127.0.0.1:"+metricsPort+"/debug/hns")
		return code == 200 && strings.Contains(body, lb.ID), nil
	})
	if code != 200 || !strings.Contains(body, lb.ID) || !strings.Contains(body, "shop/web") {
		t.Errorf("/debug/hns = %d %s; want the load balancer %s under shop/web", code, body, lb.ID)
	}
	// The reconciler publishes the status /debug/hns shows as the sync ends,
	// and the object gauges are set after it, when the sync is observed:
	// read /metrics until they are.
	realized := `hnsproxy_objects{kind="loadbalancer",state="realized"} 1`
	var scrape string
	_ = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		_, scrape = httpGet(t, "http://127.0.0.1:"+metricsPort+"/metrics")
		return strings.Contains(scrape, realized), nil
	})
	for _, want := range []string{
		`hnsproxy_hns_operations_total{operation="create_load_balancer",result="success"}`,
		realized,
		`kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="IPv4"}`,
		`hnsproxy_build_info{version="` + Version().GitVersion + `"} 1`,
	} {
		if !strings.Contains(scrape, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// The load balancer's declaration was fsynced before its create.
	if m := regexp.MustCompile(`(?m)^hnsproxy_state_file_sync_duration_seconds_count (\d+)$`).FindStringSubmatch(scrape); m == nil || m[1] == "0" {
		t.Errorf("/metrics: state file fsyncs %v, want some", m)
	}

	cancel()
	if err := <-done; err != nil && err != context.Canceled {
		t.Errorf("the daemon returned %v on shutdown", err)
	}
}

// webOnTwoNodes are the API objects of the daemon tests: the Node win-1 and
// a ClusterIP Service shop/web with a ready endpoint on win-1 (10.244.1.5)
// and one on win-2 (10.244.2.6).
func webOnTwoNodes() []runtime.Object {
	return []runtime.Object{
		&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-1"},
			Status: v1.NodeStatus{Addresses: []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.5"}}}},
		&v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
			Spec: v1.ServiceSpec{Type: v1.ServiceTypeClusterIP, ClusterIP: "10.96.0.10", ClusterIPs: []string{"10.96.0.10"},
				IPFamilies: []v1.IPFamily{v1.IPv4Protocol},
				Ports:      []v1.ServicePort{{Name: "http", Protocol: v1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(8080)}}}},
		&discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Namespace: "shop", Name: "web-1", Labels: map[string]string{discoveryv1.LabelServiceName: "web"}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Protocol: ptr.To(v1.ProtocolTCP), Port: ptr.To[int32](8080)}},
			Endpoints: []discoveryv1.Endpoint{
				{Addresses: []string{"10.244.1.5"}, NodeName: ptr.To("win-1"), Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}},
				{Addresses: []string{"10.244.2.6"}, NodeName: ptr.To("win-2"), Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}},
			}},
	}
}

// wireWinOne makes win-1's network cbr0 and the pod endpoint 10.244.1.5 on
// it, as its CNI would, and returns the network.
func wireWinOne(t *testing.T, hns *sim.HNS) *hnslb.Network {
	t.Helper()
	network, err := hns.CreateNetwork(context.Background(), &hnslb.Network{Name: "cbr0", Type: hnslb.NetworkTypeL2Bridge,
		Ipams: []hnslb.Ipam{{Subnets: []hnslb.Subnet{{IpAddressPrefix: "10.244.1.0/24"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hns.CreateEndpoint(context.Background(), network.ID, &hnslb.Endpoint{Name: "pod-a",
		IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.1.5", PrefixLength: 24}}, MacAddress: "00-15-5D-01-01-05"}); err != nil {
		t.Fatal(err)
	}
	return network
}

// waitForWeb waits until hns balances shop/web's cluster IP to its two
// backends and returns that load balancer; the daemon must not stop first.
func waitForWeb(ctx context.Context, t *testing.T, hns *sim.HNS, done <-chan error) hnslb.LoadBalancer {
	t.Helper()
	return waitForVIP(ctx, t, hns, done, "10.96.0.10")
}

// waitForVIP waits until hns balances vip to two backends and returns that
// load balancer; the daemon must not stop first.
func waitForVIP(ctx context.Context, t *testing.T, hns *sim.HNS, done <-chan error, vip string) hnslb.LoadBalancer {
	t.Helper()
	var lb hnslb.LoadBalancer
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		select {
		case err := <-done:
			t.Fatalf("the daemon stopped: %v", err)
		default:
		}
		lbs, err := hns.ListLoadBalancers(ctx)
		if err != nil {
			return false, err
		}
		for _, l := range lbs {
			if len(l.FrontendVIPs) == 1 && l.FrontendVIPs[0] == vip && len(l.HostComputeEndpoints) == 2 {
				lb = l
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no load balancer for %s with two backends: %v", vip, err)
	}
	return lb
}

// hasLB reports whether lbs holds the load balancer id.
func hasLB(lbs []hnslb.LoadBalancer, id string) bool {
	return slices.ContainsFunc(lbs, func(l hnslb.LoadBalancer) bool { return l.ID == id })
}

// eventRaised polls the API's events until match takes one, for up to a
// minute, and returns whether one came and the events it saw last.
func eventRaised(ctx context.Context, client *fake.Clientset, match func(eventsv1.Event) bool) (bool, []string) {
	var seen []string
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := client.EventsV1().Events("").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		seen = seen[:0]
		for _, ev := range list.Items {
			seen = append(seen, ev.Reason+": "+ev.Note)
			if match(ev) {
				return true, nil
			}
		}
		return false, nil
	})
	return err == nil, seen
}
