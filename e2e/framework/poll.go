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
// timeout passes; the error then carries check's last complaint.
func Poll(ctx context.Context, timeout, interval time.Duration, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		err := check(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not converged after %v: %w", timeout, err)
		case <-tick.C:
		}
	}
}
