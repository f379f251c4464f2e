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
// timeout passes; the error then carries check's last complaint (not the
// deadline cutting short the last call, when an earlier call said more).
func Poll(ctx context.Context, timeout, interval time.Duration, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	var complaint error
	for {
		err := check(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() == nil || complaint == nil {
			complaint = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not converged after %v: %w", timeout, complaint)
		case <-tick.C:
		}
	}
}
