package reconciler

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// guardBatch runs calls one after another on one goroutine, each with the
// call deadline, and waits for them all: one hand-over for the batch. guard
// hands each call to a goroutine of its own, and that hand-over (the
// goroutine, waking an idle processor for it, and parking and waking the
// caller) cost about 20 µs of CPU per call on a 2-core machine: a third of
// a second of a 10,000-Service cold start's 20,888 creates
// (docs/benchmarks-history.md). opOf(i) names call i's operation. Each
// call is watched as guard watches it: when one passes its deadline it is
// abandoned on its token (tokens[i]) and the batch returns; the calls after
// it are not made and fail with a timeout error, so their objects are
// retried. A call whose token an abandoned call still holds is not made
// either.
func guardBatch[T any](d *deadlines, ctx context.Context, opOf func(int) string, calls []func(context.Context) (T, error), tokens []string) ([]T, []error) {
	out := make([]T, len(calls))
	errs := make([]error, len(calls))
	if ctx.Err() != nil {
		notCalled(ctx, opOf, errs, 0)
		return out, errs
	}
	d.mu.Lock()
	if d.total >= d.maxAbandoned {
		n := d.total
		d.mu.Unlock()
		for i := range errs {
			errs[i] = errNotCalled(opOf(i), "%d earlier HNS calls have not returned (HNS hung?)", n)
		}
		return out, errs
	}
	busy := make([]bool, len(calls)) // read-only once the calls start
	for i, t := range tokens {
		if t != "" && d.abandoned[t] > 0 {
			busy[i] = true
			errs[i] = errNotCalled(opOf(i), "an earlier call on %s has not returned", t)
		}
	}
	d.waiting++
	d.mu.Unlock()

	b := &batchRun{current: -1}
	timer := d.clock.NewTimer(d.call)
	defer timer.Stop()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i, call := range calls {
			if busy[i] {
				continue
			}
			if ctx.Err() != nil || !b.start(i, d.clock.Now()) {
				// Shutting down between two calls: none runs, and every
				// call not made answers with an error, never a nil result.
				notCalled(ctx, opOf, errs, i)
				return
			}
			v, err := call(ctx)
			if !b.finish() {
				d.log.Info("Abandoned HNS call returned", "operation", opOf(i), "objects", tokens[i:i+1], "err", err)
				d.returned(tokens[i : i+1])
				return
			}
			out[i], errs[i] = v, err
		}
	}()
	for {
		select {
		case <-done:
			d.ended(false, nil)
			return out, errs
		case <-timer.C():
			i, wait, hung := b.overdue(d, tokens, d.clock.Now(), d.call)
			if !hung {
				timer.Reset(wait)
				continue
			}
			expired := errTimeout(opOf(i), "no reply within %v; the call was abandoned and its object is retried once it returns", d.call)
			d.log.Error(expired, "HNS call timed out", "operation", opOf(i), "objects", tokens[i:i+1])
			if d.timedOut != nil {
				d.timedOut(opOf(i))
			}
			return out, b.abandon(opOf, i, expired, errs)
		case <-ctx.Done(): // shutting down
			i := b.stop(d, tokens)
			if i < 0 {
				<-done // between calls: the batch stops at once
				return out, errs
			}
			return out, b.abandon(opOf, i, fmt.Errorf("hns %s: abandoned: %w", opOf(i), ctx.Err()), errs)
		}
	}
}

// notCalled fails the calls from i on that have no error yet: a batch
// whose context ended (shutting down) did not make them.
func notCalled(ctx context.Context, opOf func(int) string, errs []error, i int) {
	for j := i; j < len(errs); j++ {
		if errs[j] == nil {
			errs[j] = errNotCalledAtShutdown(opOf(j), ctx.Err())
		}
	}
}

// batchRun is what the caller of a batch and the goroutine making its calls
// share: which call runs, since when, and whether the caller has left.
type batchRun struct {
	mu      sync.Mutex
	current int // the call running, or -1
	since   time.Time
	left    bool // the caller stopped waiting: make no more calls
}

// start marks call i running from now, unless the caller has left.
func (b *batchRun) start(i int, now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.left {
		return false
	}
	b.current, b.since = i, now
	return true
}

// finish marks the running call returned; false if it was abandoned.
func (b *batchRun) finish() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.current = -1
	return !b.left
}

// overdue reports the running call if it is past its deadline, and then
// abandons it on its token; else how long to wait before looking again.
func (b *batchRun) overdue(d *deadlines, tokens []string, now time.Time, deadline time.Duration) (i int, wait time.Duration, hung bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.current < 0 {
		return -1, deadline, false
	}
	if wait := b.since.Add(deadline).Sub(now); wait > 0 {
		return -1, wait, false
	}
	b.leave(d, tokens)
	return b.current, 0, true
}

// stop makes the batch call nothing more and reports the call running, or
// -1; a running call is abandoned on its token.
func (b *batchRun) stop(d *deadlines, tokens []string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.leave(d, tokens)
	return b.current
}

// leave marks the caller gone, and the running call, if any, abandoned;
// under b.mu, so that the call, returning now, finds its abandonment
// recorded before it releases it (a release first left its token busy
// for good, or, on the process's first abandoned call, panicked).
func (b *batchRun) leave(d *deadlines, tokens []string) {
	b.left = true
	if b.current < 0 {
		d.ended(false, nil)
		return
	}
	d.ended(true, tokens[b.current:b.current+1])
}

// abandon fails call i, abandoned (leave), with err; the calls after it
// were not made.
func (b *batchRun) abandon(opOf func(int) string, i int, err error, errs []error) []error {
	errs[i] = err
	for j := i + 1; j < len(errs); j++ {
		if errs[j] == nil {
			errs[j] = errNotCalled(opOf(j), "an earlier HNS call of its batch did not return in time")
		}
	}
	return errs
}
