package app

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/component-base/metrics/testutil"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/metrics"
	"github.com/hnsproxy/hnsproxy/reconciler"
	"github.com/hnsproxy/hnsproxy/sim"
)

// Under an HNS that takes calls and never answers them (kubernetes/aks-engine#4315),
// hnsproxy's start fails within --hns-network-timeout and says HNS hangs,
// where it used to wait for good; at most the bound on abandoned calls
// reaches HNS however long the wait polls, and each is counted.
func TestConnectHNSUnderAHungHNS(t *testing.T) {
	metrics.Register()
	cases := []struct {
		name    string
		hang    sim.Op
		op      string
		wantErr []string
	}{
		{"the network", sim.OpGetNetwork, "get_network_by_name",
			[]string{`HNS network "cbr0" did not appear`, "HNS may be hung", "restarting the hns service"}},
		{"the version", sim.OpVersion, "version", []string{"reading the HNS version", "restarting the hns service"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			hns := sim.New(sim.Options{})
			if _, err := hns.CreateNetwork(ctx, &hnslb.Network{Name: "cbr0", Type: hnslb.NetworkTypeL2Bridge}); err != nil {
				t.Fatal(err)
			}
			hns.SetFaults(sim.Faults{Hang: []sim.Op{c.hang}})
			t.Cleanup(func() { hns.SetFaults(sim.Faults{}) }) // lets the abandoned calls return
			cfg := parseConfig(t, "--network-name=cbr0", "--hns-endpoint=unix:///hung/hns.sock",
				"--hns-call-timeout=20ms", "--hns-network-timeout=300ms")
			timedOut := timeoutsOf(t, c.op)

			done := make(chan error, 1)
			go func() { done <- connectHNS(ctx, cfg, &Deps{}, hns) }()
			var err error
			select {
			case err = <-done:
			case <-time.After(time.Minute):
				t.Fatal("connectHNS still waits on a hung HNS after a minute")
			}
			for _, want := range c.wantErr {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("error %v, want it to say %q", err, want)
				}
			}
			if !hnsHung(err) {
				t.Errorf("error %v, want an HNS timeout", err)
			}
			held := hns.Held()
			if held < 1 || held > reconciler.DefaultMaxAbandonedCalls {
				t.Errorf("%d calls reached the hung HNS, want 1 to %d", held, reconciler.DefaultMaxAbandonedCalls)
			}
			if got := timeoutsOf(t, c.op) - timedOut; got != float64(held) {
				t.Errorf("hnsproxy_hns_call_timeouts_total{operation=%q} rose by %v, want %d", c.op, got, held)
			}
		})
	}
}

// Once a hung HNS answers within --hns-network-timeout, the start goes on
// with the network it found.
func TestConnectHNSOnceAHungHNSAnswers(t *testing.T) {
	metrics.Register()
	ctx := context.Background()
	hns := sim.New(sim.Options{})
	network, err := hns.CreateNetwork(ctx, &hnslb.Network{Name: "cbr0", Type: hnslb.NetworkTypeL2Bridge})
	if err != nil {
		t.Fatal(err)
	}
	hns.SetFaults(sim.Faults{Hang: []sim.Op{sim.OpGetNetwork}})
	cfg := parseConfig(t, "--network-name=cbr0", "--hns-endpoint=unix:///hung/hns.sock",
		"--hns-call-timeout=20ms", "--hns-network-timeout=1h")
	deps := &Deps{}
	done := make(chan error, 1)
	go func() { done <- connectHNS(ctx, cfg, deps, hns) }()
	if err := hns.WaitHeld(ctx, 2); err != nil { // one abandoned, one more asked
		t.Fatal(err)
	}
	hns.SetFaults(sim.Faults{})
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		t.Fatal("connectHNS still waits after HNS answered")
	}
	if err != nil || deps.Network == nil || deps.Network.ID != network.ID || deps.StartupCalls == nil {
		t.Fatalf("connectHNS once HNS answers: %v, network %+v", err, deps.Network)
	}
}

// timeoutsOf reads hnsproxy_hns_call_timeouts_total for op.
func timeoutsOf(t *testing.T, op string) float64 {
	t.Helper()
	v, err := testutil.GetCounterMetricValue(metrics.HNSCallTimeoutsTotal.WithLabelValues(op))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// A sync stuck on a hung HNS call is no dead hnsproxy: once a change has
// waited past the health timeout, kube-proxy's two sync periods, /healthz
// says so (503), while /livez stays 200, so the liveness probe does not
// restart a pod that a restart would not help (F7). The daemon's /livez
// must see the reconciler's HNS calls.
func TestLivezStaysHealthyWhileASyncWaitsOnAHungHNS(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hns := sim.New(sim.Options{})
	wireWinOne(t, hns)
	client := fake.NewClientset(webOnTwoNodes()...)
	healthz := "http://127.0.0.1:" + freePort(t)
	cfg := parseConfig(t, "--network-name=cbr0", "--hostname-override=win-1", "--hns-endpoint=sim", "--min-sync-period=0",
		"--iptables-sync-period=1s", "--hns-call-timeout=1h", "--healthz-bind-address="+strings.TrimPrefix(healthz, "http://"),
		"--metrics-port=0", "--state-file="+t.TempDir()+"/state.json")
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, client, hns) }()
	waitForWeb(ctx, t, hns, done)

	hns.SetFaults(sim.Faults{Hang: []sim.Op{sim.OpCreateLoadBalancer}})
	defer func() {
		cancel()
		hns.SetFaults(sim.Faults{}) // lets the held create return
		<-done
	}()
	web, err := client.CoreV1().Services("shop").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	web.Spec.ExternalIPs = []string{"192.0.2.50"} // a load balancer to create
	changed := time.Now()
	if _, err := client.CoreV1().Services("shop").Update(ctx, web, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// /healthz turns 503 once the change has waited the health timeout,
	// which is when a /livez blind to HNS would turn 503 too.
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		code, _ := httpGet(t, healthz+"/healthz")
		return code == http.StatusServiceUnavailable, nil
	}); err != nil {
		t.Fatalf("/healthz never turned 503 while the create hung (held calls: %d): %v", hns.Held(), err)
	}
	// The health server queued the change after changed, and answers 503
	// only once now - queued >= its timeout: a lower bound, whatever the load.
	if waited := time.Since(changed); waited < 2*time.Second {
		t.Errorf("/healthz turned 503 %v after the change, before two sync periods (2s)", waited)
	}
	if hns.Held() == 0 {
		t.Fatal("no create is held: the test's hang did not take")
	}
	if code, body := httpGet(t, healthz+"/livez"); code != http.StatusOK {
		t.Errorf("/livez while the sync waits on a hung HNS call = %d %s, want 200", code, body)
	}
}
