package app

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/client-go/kubernetes/fake"

	hnsevents "github.com/hnsproxy/hnsproxy/events"
	"github.com/hnsproxy/hnsproxy/reconciler"
	"github.com/hnsproxy/hnsproxy/sim"
)

// A fatal error (the config file changed, a server that must listen
// cannot) stops the proxier and waits for it before run returns: the
// process exits only after the sync loop ended and its last state file
// write was made, not beside a Sync still writing HNS.
func TestFatalErrorStopsTheProxierFirst(t *testing.T) {
	failure := errors.New("content of the configuration file was updated")
	fatal := make(chan error, 1)
	running, stopping, release := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var finished bool
	done := make(chan error, 1)
	go func() {
		done <- runUntilFatal(context.Background(), fatal, func(ctx context.Context) error {
			close(running)
			<-ctx.Done()
			close(stopping)
			<-release // still stopping: its last Sync and state file write
			finished = true
			return nil
		})
	}()
	<-running
	fatal <- failure
	select {
	case err := <-done:
		t.Fatalf("returned %v with the proxier still running: its context never ended", err)
	case <-stopping:
	}
	close(release)
	if err := <-done; !errors.Is(err, failure) {
		t.Errorf("returned %v, want the fatal error", err)
	}
	if !finished {
		t.Error("returned before the proxier did")
	}
}

// The proxier's own return, an error or ctx's end, is run's.
func TestRunUntilFatalReturnsTheProxiersError(t *testing.T) {
	failure := errors.New("HNS network replaced")
	err := runUntilFatal(context.Background(), make(chan error), func(context.Context) error { return failure })
	if !errors.Is(err, failure) {
		t.Errorf("returned %v, want %v", err, failure)
	}
}

// --bind-address-hard-fail: a healthz address another process holds ends
// the daemon with the server's error, after the proxier stopped.
func TestDaemonHardFailsOnABusyHealthzAddress(t *testing.T) {
	busy := busyAddress(t)
	hns := sim.New(sim.Options{})
	wireWinOne(t, hns)
	state := t.TempDir() + "/state.json"
	cfg := parseConfig(t, "--network-name=cbr0", "--hostname-override=win-1", "--hns-endpoint=sim",
		"--healthz-bind-address="+busy.Addr().String(), "--metrics-port=0", "--bind-address-hard-fail",
		"--state-file="+state)
	err := run(context.Background(), cfg, fake.NewClientset(webOnTwoNodes()...), hns)
	if err == nil || !strings.Contains(err.Error(), "healthz server on "+busy.Addr().String()) {
		t.Fatalf("run = %v, want the healthz server's failure", err)
	}
	lock, err := reconciler.LockStateFile(state)
	if err != nil {
		t.Fatalf("the state file's lock is still held after run returned: %v", err)
	}
	lock.Release()
}

// TestHardFailWhileWaitingForTheNetwork: a server that cannot listen under
// --bind-address-hard-fail stops hnsproxy while it still waits for the HNS
// network, not only once the network is there (up to --hns-network-timeout
// later). The test's own deadline only keeps a regression from hanging.
func TestHardFailWhileWaitingForTheNetwork(t *testing.T) {
	busy := busyAddress(t)
	// No network: the CNI has not made it yet. The HNS is given, not named
	// "sim" (which would seed the network).
	hns := sim.New(sim.Options{})
	cfg := parseConfig(t, "--network-name=cbr0", "--hostname-override=win-1",
		"--healthz-bind-address="+busy.Addr().String(), "--metrics-port=0", "--bind-address-hard-fail",
		"--hns-network-timeout=1h", "--state-file="+t.TempDir()+"/state.json")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := run(ctx, cfg, fake.NewClientset(webOnTwoNodes()...), hns)
	if err == nil || !strings.Contains(err.Error(), "healthz server on "+busy.Addr().String()) {
		t.Fatalf("run = %v, want the healthz server's failure", err)
	}
}

// Without --bind-address-hard-fail a server that cannot listen stops
// nothing: programming goes on, and the Node gets a Warning saying why
// (kube-proxy's FailedToStartMetricServer), the one sign of it outside
// the log.
func TestABusyMetricsAddressIsRaisedOnTheNodeAndProgrammingGoesOn(t *testing.T) {
	busy := busyAddress(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hns := sim.New(sim.Options{})
	wireWinOne(t, hns)
	client := fake.NewClientset(webOnTwoNodes()...)
	cfg := parseConfig(t, "--network-name=cbr0", "--hostname-override=win-1", "--hns-endpoint=sim", "--min-sync-period=0",
		"--healthz-bind-address=127.0.0.1:"+freePort(t), "--metrics-bind-address="+busy.Addr().String(),
		"--state-file="+t.TempDir()+"/state.json")
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, client, hns) }()
	waitForWeb(ctx, t, hns, done)
	if ok, seen := eventRaised(ctx, client, func(ev eventsv1.Event) bool {
		return ev.Reason == hnsevents.ReasonFailedToStartMetricServer && ev.Type == v1.EventTypeWarning &&
			ev.Regarding.Kind == "Node" && strings.Contains(ev.Note, busy.Addr().String())
	}); !ok {
		t.Errorf("no FailedToStartMetricServer Warning on the Node naming %s; events: %q", busy.Addr(), seen)
	}
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("the daemon returned %v, want it to run on until stopped", err)
	}
}

// busyAddress is a loopback listener another server cannot take.
func busyAddress(t *testing.T) net.Listener {
	t.Helper()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { busy.Close() })
	return busy
}
