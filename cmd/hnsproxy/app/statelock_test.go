package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2"

	"github.com/hnsproxy/hnsproxy/reconciler"
	"github.com/hnsproxy/hnsproxy/sim"
)

// Two hnsproxy processes on one state file would each write it from their
// own memory, and --cleanup run beside the daemon deletes what the daemon
// is serving and its state file. The state file's lock lets only one
// process at a time use it: --cleanup beside a running daemon is refused,
// deletes nothing and leaves the state file as it was.
func TestCleanupBesideARunningDaemonIsRefused(t *testing.T) {
	// --cleanup refuses at once, never waiting as the daemon does for a
	// predecessor: with an hour's wait, a cleanup that waited would be
	// stopped by its "waiting" line below and fail with that, not the lock.
	old := stateLockWait
	stateLockWait = time.Hour
	t.Cleanup(func() { stateLockWait = old })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hns := sim.New(sim.Options{})
	wireWinOne(t, hns)
	stateFile := filepath.Join(t.TempDir(), "state.json")
	cfg := parseConfig(t, "--network-name=cbr0", "--hostname-override=win-1", "--min-sync-period=0",
		"--healthz-port=0", "--metrics-port=0", "--state-file="+stateFile, "--hns-endpoint=sim")
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, fake.NewClientset(webOnTwoNodes()...), hns) }()
	lb := waitForWeb(ctx, t, hns, done)

	cleanupCtx, stopCleanup := context.WithCancel(ctx)
	defer stopCleanup()
	logger, waiting := logSignal(lockWaitLine)
	go func() {
		select {
		case <-waiting:
			stopCleanup()
		case <-cleanupCtx.Done():
		}
	}()
	err := runCleanup(klog.NewContext(cleanupCtx, logger), cfg, hns)
	if !errors.Is(err, reconciler.ErrStateFileLocked) {
		t.Errorf("--cleanup beside the running daemon: %v, want it refused at once for the lock", err)
	}
	if _, gerr := hns.GetLoadBalancerByID(ctx, lb.ID); gerr != nil {
		t.Errorf("the daemon's load balancer after the refused --cleanup: %v", gerr)
	}
	if _, serr := os.Stat(stateFile); serr != nil {
		t.Errorf("the daemon's state file after the refused --cleanup: %v", serr)
	}

	cancel()
	<-done
}

// A second daemon on the state file of a running one stops with an error
// saying why, and the first goes on serving.
func TestSecondDaemonOnOneStateFileStops(t *testing.T) {
	old := stateLockWait
	stateLockWait = 0
	t.Cleanup(func() { stateLockWait = old })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hns := sim.New(sim.Options{})
	wireWinOne(t, hns)
	args := []string{"--network-name=cbr0", "--hostname-override=win-1", "--min-sync-period=0",
		"--healthz-port=0", "--metrics-port=0", "--state-file=" + filepath.Join(t.TempDir(), "state.json"), "--hns-endpoint=sim"}
	done := make(chan error, 1)
	go func() { done <- run(ctx, parseConfig(t, args...), fake.NewClientset(webOnTwoNodes()...), hns) }()
	waitForWeb(ctx, t, hns, done)

	err := run(ctx, parseConfig(t, args...), fake.NewClientset(webOnTwoNodes()...), hns)
	if !errors.Is(err, reconciler.ErrStateFileLocked) || !strings.Contains(err.Error(), "only one hnsproxy") {
		t.Errorf("second daemon: %v, want ErrStateFileLocked saying only one may run", err)
	}
	select {
	case err := <-done:
		t.Errorf("the first daemon stopped: %v", err)
	default:
	}
	cancel()
	<-done
}

// A lock file that cannot be opened (here a directory in its place; a
// read-only or full state directory alike) does not stop --cleanup: it runs
// without the lock, as an unwritable state path never stops the daemon.
func TestCleanupRunsWhereTheLockCannotBeMade(t *testing.T) {
	stateFile := filepath.Join(t.TempDir(), "state.json")
	if err := os.Mkdir(stateFile+".lock", 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := parseConfig(t, "--network-name=cbr0", "--hostname-override=win-1", "--hns-endpoint=sim", "--state-file="+stateFile)
	if err := runCleanup(context.Background(), cfg, sim.New(sim.Options{})); err != nil {
		t.Errorf("--cleanup where the lock file cannot be opened: %v", err)
	}
}

// A DaemonSet pod replaced while the old one still shuts down finds the
// state file locked: it waits for the lock rather than failing its start
// (and crash-looping) while its predecessor lets go.
func TestADaemonWaitsForTheLockItsPredecessorStillHolds(t *testing.T) {
	stateFile := filepath.Join(t.TempDir(), "state.json")
	held, err := reconciler.LockStateFile(stateFile)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	logger, waiting := logSignal(lockWaitLine)
	got := make(chan error, 1)
	go func() {
		l, err := lockState(context.Background(), logger, stateFile, time.Hour)
		l.Release()
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("lockState beside a held lock returned %v without waiting", err)
	case <-waiting:
	}
	held.Release()
	if err := <-got; err != nil {
		t.Errorf("lockState once the predecessor let go: %v, want the lock", err)
	}
}

// lockWaitLine is what lockState logs when it starts waiting for the lock.
const lockWaitLine = "waiting for it to stop"

// logSignal is a logger whose returned channel closes when a line holding
// text is logged.
func logSignal(text string) (logr.Logger, <-chan struct{}) {
	seen := make(chan struct{})
	var once sync.Once
	return funcr.New(func(_, args string) {
		if strings.Contains(args, text) {
			once.Do(func() { close(seen) })
		}
	}, funcr.Options{}), seen
}
