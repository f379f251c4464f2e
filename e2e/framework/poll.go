//go:build linux

package framework

import (
	"context"
	"fmt"
	"time"
)

// ConvergeWait is how long the helpers wait for hnsproxy to program HNS.
// It is a deadline for a stuck run, not a speed expectation.
const ConvergeWait = 2 * time.Minute

// Poll calls check every interval until it returns nil, ctx ends or
// timeout passes; the error then carries check's last complaint. A check
// runs with a context that lasts a little longer than timeout (as long
// again, at most 10s), so that the last one is not cut short halfway (a
// client's rate limiter refuses a wait it cannot finish in time); when one
// still is, the complaint before it is the one reported.
func Poll(ctx context.Context, timeout, interval time.Duration, check func(context.Context) error) error {
	deadline := time.Now().Add(timeout)
	checkCtx, cancel := context.WithDeadline(ctx, deadline.Add(min(timeout, 10*time.Second)))
	defer cancel()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	var complaint error
	for {
		err := check(checkCtx)
		if err == nil {
			return nil
		}
		if checkCtx.Err() == nil || complaint == nil {
			complaint = err
		}
		if ctx.Err() != nil || !time.Now().Before(deadline) {
			return fmt.Errorf("not converged after %v: %w", timeout, complaint)
		}
		select {
		case <-checkCtx.Done():
		case <-tick.C:
		}
	}
}
