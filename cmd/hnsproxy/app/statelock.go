package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/klog/v2"

	"github.com/hnsproxy/hnsproxy/reconciler"
)

// How long the daemon waits for another process to let go of the state
// file's lock: a DaemonSet pod replaced while the old one still shuts down,
// or Windows not yet done releasing a killed process's locks. --cleanup
// does not wait. A variable for tests.
var stateLockWait = 30 * time.Second

const stateLockPoll = time.Second

// lockState takes the state file's lock (reconciler.LockStateFile) for the
// caller to hold while it runs, waiting up to wait while another process
// holds it. A lock that cannot be taken for another reason (a read-only or
// full state directory) is logged and run without: an unwritable state
// path never stops convergence (docs/reliability.md). A state directory
// others can write is the exception: its state file may be someone else's,
// and reading it as hnsproxy's would delete what it names, so the start
// stops (reconciler.ErrStateDirNotPrivate).
func lockState(ctx context.Context, logger klog.Logger, stateFile string, wait time.Duration) (*reconciler.StateLock, error) {
	deadline := time.Now().Add(wait)
	for first := true; ; first = false {
		l, err := reconciler.LockStateFile(stateFile)
		switch {
		case err == nil:
			return l, nil
		case errors.Is(err, reconciler.ErrStateDirNotPrivate):
			return nil, err
		case !errors.Is(err, reconciler.ErrStateFileLocked):
			logger.Error(err, "Cannot take the state file's lock; running without it", "stateFile", stateFile)
			return nil, nil
		case !time.Now().Before(deadline):
			return nil, fmt.Errorf("%w: only one hnsproxy may run on a node (as a service or as a pod), and --cleanup only while it is stopped", err)
		case first:
			logger.Info("Another hnsproxy process holds the state file's lock; waiting for it to stop", "stateFile", stateFile, "wait", wait)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(stateLockPoll):
		}
	}
}
