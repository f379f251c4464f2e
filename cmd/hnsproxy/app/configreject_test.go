package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/component-base/metrics/testutil"

	"github.com/hnsproxy/hnsproxy/events"
	"github.com/hnsproxy/hnsproxy/metrics"
	"github.com/hnsproxy/hnsproxy/sim"
)

// A changed file the restart would refuse stops nothing: each new refused
// content is reported once, however often it is read, with the error the
// restart would end on; a file the restart takes then stops the daemon.
func TestConfigFileTheRestartWouldRefuseIsReportedNotObeyed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.conf")
	mustDo(t, os.WriteFile(path, []byte(configV1), 0o600))
	cfg := parseConfig(t, "--config="+path, "--hostname-override=win-1")
	var rejected []error
	p := startWatcher(t, newConfigWatcher(cfg.ConfigFile, cfg.ConfigFileContent, cfg.Recomplete, func(err error) { rejected = append(rejected, err) }))
	for _, bad := range []struct{ content, says string }{
		{configV1 + "winkernel: {enableDSR: true\n", "yaml"},        // a brace left open
		{configV1 + "iptables: {syncPeriod: -30s}\n", "syncPeriod"}, // out of range
	} {
		mustDo(t, os.WriteFile(path, []byte(bad.content), 0o600))
		for range 2 {
			if stopped, err := p.poll(); stopped {
				t.Fatalf("a file the restart would refuse stopped the daemon: %v", err)
			}
		}
		if len(rejected) != 1 || !strings.Contains(rejected[0].Error(), bad.says) {
			t.Fatalf("reported %v, want once the error naming %s", rejected, bad.says)
		}
		rejected = nil
	}
	mustDo(t, os.WriteFile(path, []byte(configV2), 0o600))
	if stopped, err := p.poll(); !stopped || !strings.Contains(err.Error(), "was updated") {
		t.Fatalf("the fixed file: stopped %v with %v, want the restart", stopped, err)
	}
	if len(rejected) != 0 {
		t.Errorf("the fixed file was reported: %v", rejected)
	}
}

// A refused file is a state, not only an event: it holds, for the
// hnsproxy_config_file_rejected gauge, until the file holds the running
// configuration's bytes again, and a refusal after that is reported anew.
// The Node's Warning expires with the apiserver's event TTL while every
// restart of the node (a reboot, a rollout) would meet the broken file.
func TestConfigFileRejectionHoldsUntilTheFileIsPutBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.conf")
	mustDo(t, os.WriteFile(path, []byte(configV1), 0o600))
	cfg := parseConfig(t, "--config="+path, "--hostname-override=win-1")
	rejected, cleared := 0, 0
	w := newConfigWatcher(cfg.ConfigFile, cfg.ConfigFileContent, cfg.Recomplete, func(error) { rejected++ })
	w.cleared = func() { cleared++ }
	p := startWatcher(t, w)
	const broken = configV1 + "winkernel: {enableDSR: true\n"
	for round := 1; round <= 2; round++ {
		mustDo(t, os.WriteFile(path, []byte(broken), 0o600))
		for range 2 {
			if stopped, err := p.poll(); stopped {
				t.Fatalf("round %d: the broken file stopped the daemon: %v", round, err)
			}
		}
		if rejected != round || cleared != round-1 {
			t.Fatalf("round %d, broken: rejected %d times, cleared %d, want %d and %d", round, rejected, cleared, round, round-1)
		}
		mustDo(t, os.WriteFile(path, []byte(configV1), 0o600))
		for range 2 {
			if stopped, err := p.poll(); stopped {
				t.Fatalf("round %d: the file put back stopped the daemon: %v", round, err)
			}
		}
		if cleared != round {
			t.Fatalf("round %d, put back: cleared %d times, want %d", round, cleared, round)
		}
	}
}

// An operator breaks the ConfigMap's YAML: the daemon runs on and says so
// on the Node. Restarted meanwhile for another reason (a node reboot), it
// cannot start, with an error naming the file, and HNS keeps every load
// balancer; once the file is fixed, the start adopts them: no load
// balancer deleted, the one of a Service made meanwhile the one created.
func TestBrokenConfigFileLosesNoLoadBalancer(t *testing.T) {
	pollConfigOften(t)
	head := "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n" +
		"healthzBindAddress: 127.0.0.1:" + freePort(t) + "\nmetricsBindAddress: \"\"\nwinkernel: {networkName: cbr0}\n" +
		"iptables: {minSyncPeriod: 0s}\n"
	path := filepath.Join(t.TempDir(), "config.conf")
	mustDo(t, os.WriteFile(path, []byte(head), 0o600))
	args := []string{"--config=" + path, "--hostname-override=win-1", "--state-file=" + t.TempDir() + "/state.json"}
	hns := sim.New(sim.Options{})
	wireWinOne(t, hns)
	client := fake.NewClientset(webOnTwoNodes()...)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, parseConfig(t, args...), client, hns) }()
	web := waitForWeb(ctx, t, hns, done)

	mustDo(t, os.WriteFile(path, []byte(head+"configSyncPeriod: 10m\nwinkernel: {enableDSR: true\n"), 0o600))
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		select {
		case err := <-done:
			t.Fatalf("the daemon stopped on a file it could not start with: %v", err)
		default:
		}
		evs, err := client.EventsV1().Events("").List(ctx, metav1.ListOptions{})
		for _, ev := range evs.Items {
			if ev.Reason == events.ReasonConfigFileRejected && ev.Regarding.Kind == "Node" && strings.Contains(ev.Note, "runs on") {
				return true, nil
			}
		}
		return false, err
	}); err != nil {
		t.Fatalf("no %s event on the Node: %v", events.ReasonConfigFileRejected, err)
	}
	// What lasts after the event expires.
	if v, err := testutil.GetGaugeMetricValue(metrics.ConfigFileRejected); err != nil || v != 1 {
		t.Errorf("hnsproxy_config_file_rejected = %v (%v) while the file is refused, want 1", v, err)
	}
	cancel()
	if err := <-done; err != nil && err != context.Canceled {
		t.Fatalf("the daemon returned %v on shutdown", err)
	}

	if _, err := completeConfig(args...); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("a start with the broken file: %v, want an error naming %s", err, path)
	}
	if lbs, err := hns.ListLoadBalancers(context.Background()); err != nil || len(lbs) != 1 || lbs[0].ID != web.ID {
		t.Fatalf("HNS holds %+v (%v) while hnsproxy cannot start, want the load balancer %s", lbs, err, web.ID)
	}

	mustDo(t, os.WriteFile(path, []byte(head+"configSyncPeriod: 10m\n"), 0o600))
	cfg, err := completeConfig(args...)
	if err != nil {
		t.Fatal(err)
	}
	hns.ResetCounters()
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	go func() { done <- run(ctx, cfg, client, hns) }()
	addAPIService(t, client)
	waitForVIP(ctx, t, hns, done, "10.96.0.11")
	if lbs, _ := hns.ListLoadBalancers(ctx); !hasLB(lbs, web.ID) {
		t.Errorf("after the restart HNS holds %+v, not the load balancer %s it adopted", lbs, web.ID)
	}
	if c := hns.Counters(); c.Count(sim.OpDeleteLoadBalancer) != 0 || c.Count(sim.OpCreateLoadBalancer) != 1 {
		t.Errorf("the restart created %d load balancers and deleted %d, want the new Service's one and none",
			c.Count(sim.OpCreateLoadBalancer), c.Count(sim.OpDeleteLoadBalancer))
	}
}

// addAPIService adds shop/api, cluster IP 10.96.0.11, with web's backends.
func addAPIService(t *testing.T, client *fake.Clientset) {
	t.Helper()
	objs := webOnTwoNodes()
	svc := objs[1].(*v1.Service).DeepCopy()
	svc.Name, svc.Spec.ClusterIP, svc.Spec.ClusterIPs = "api", "10.96.0.11", []string{"10.96.0.11"}
	slice := objs[2].(*discoveryv1.EndpointSlice).DeepCopy()
	slice.Name, slice.Labels[discoveryv1.LabelServiceName] = "api-1", "api"
	if _, err := client.CoreV1().Services("shop").Create(context.Background(), svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.DiscoveryV1().EndpointSlices("shop").Create(context.Background(), slice, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
