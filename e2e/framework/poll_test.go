//go:build linux

package framework

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// A check cut short by the deadline must not hide what it said before, and
// the last check is not cut short in the first place.
func TestPollReportsLastComplaint(t *testing.T) {
	untilDeadline := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	err := Poll(context.Background(), 50*time.Millisecond, time.Millisecond, untilDeadline)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Poll = %v, want the deadline when nothing else was said", err)
	}
	calls := 0
	err = Poll(context.Background(), 50*time.Millisecond, time.Millisecond, func(ctx context.Context) error {
		calls++
		if calls == 1 {
			return errors.New("endpoint 10.244.1.10 is still there")
		}
		return untilDeadline(ctx) // the call the deadline cuts short, as a slow Dump would be
	})
	if err == nil || !strings.Contains(err.Error(), "still there") {
		t.Fatalf("Poll = %v, want the last complaint before the deadline", err)
	}
	// The checks' context outlives the timeout, so that the last check can
	// finish (a client's rate limiter refuses a wait it cannot finish).
	start := time.Now()
	var checkDeadline time.Time
	_ = Poll(context.Background(), 50*time.Millisecond, time.Millisecond, func(ctx context.Context) error {
		checkDeadline, _ = ctx.Deadline()
		return errors.New("not yet")
	})
	if checkDeadline.Sub(start) < 90*time.Millisecond {
		t.Errorf("the checks' context ends %v after the start, want about twice the 50ms timeout", checkDeadline.Sub(start))
	}
}
