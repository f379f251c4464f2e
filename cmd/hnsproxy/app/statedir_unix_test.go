//go:build !windows

package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/hnsproxy/hnsproxy/reconciler"
	"github.com/hnsproxy/hnsproxy/sim"
)

// A state directory that was there before hnsproxy and that others can
// write (here mode 0777; on Windows, a C:\ProgramData\hnsproxy another
// user made first, which the reconciler's Windows tests cover) may hold a
// state file planted there naming another program's load balancer.
// --cleanup, and the daemon alike, refuse to start on it, saying why, and
// delete nothing; before, the lock was skipped as "cannot be made" and the
// planted file was read as hnsproxy's.
func TestStateDirOthersCanWriteStopsTheStart(t *testing.T) {
	ctx := context.Background()
	hns := sim.New(sim.Options{})
	_, _, foreign := podAndForeignLB(ctx, t, hns)
	dir := filepath.Join(t.TempDir(), "hnsproxy")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	stateFile := filepath.Join(dir, "state.json")
	planted := `{"version":1,"loadBalancers":["` + foreign.ID + `"],"remoteEndpoints":[]}`
	if err := os.WriteFile(stateFile, []byte(planted), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := parseConfig(t, "--network-name=cbr0", "--hostname-override=win-1", "--hns-endpoint=sim", "--state-file="+stateFile)
	err := runCleanup(ctx, cfg, hns)
	if !errors.Is(err, reconciler.ErrStateDirNotPrivate) {
		t.Errorf("--cleanup on a state directory others can write: %v, want ErrStateDirNotPrivate", err)
	}
	if _, gerr := hns.GetLoadBalancerByID(ctx, foreign.ID); gerr != nil {
		t.Errorf("the load balancer the planted state file names: %v, want it kept", gerr)
	}
	// Bounded only so that a daemon that does start (waiting for its Node
	// forever) fails the test instead of hanging it.
	runCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	err = run(runCtx, parseConfig(t, "--network-name=cbr0", "--hostname-override=win-1", "--min-sync-period=0",
		"--healthz-port=0", "--metrics-port=0", "--state-file="+stateFile, "--hns-endpoint=sim"),
		fake.NewClientset(), hns)
	if !errors.Is(err, reconciler.ErrStateDirNotPrivate) {
		t.Errorf("the daemon on a state directory others can write: %v, want ErrStateDirNotPrivate", err)
	}
}
