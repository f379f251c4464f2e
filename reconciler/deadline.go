package reconciler

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

// Every HNS call the reconciler makes has a deadline. hcn calls are
// synchronous RPCs into the HNS service that cannot be cancelled, so a call
// past its deadline is abandoned, not stopped: it keeps running in its
// goroutine, the caller gets a timeout error (hnslb.CodeTimeout: unavailable,
// so retried with backoff; for a create, uncertain), and whatever the call
// eventually returns is dropped. Its object stays busy until it returns, and
// the reconciler does not touch a busy object, so a late write can never
// overtake a newer one, and a late create is found by the next attempt (as
// an identical load balancer or endpoint) rather than leaked. At most
// MaxAbandonedCalls calls are left running; past that HNS counts as hung and
// calls fail at once, without a goroutine, until one returns. While any is
// running, listings get the call deadline rather than their longer one.

// Default deadlines and bound; see Options.
const (
	// DefaultCallTimeout: a healthy hcn call on one object takes
	// milliseconds and the slowest seen on loaded nodes seconds
	// (kubernetes/kubernetes#109124); ten seconds is past both, and keeps
	// a hung call from holding the sync loop longer than a third of the
	// default 30 s sync period.
	DefaultCallTimeout = 10 * time.Second
	// DefaultListTimeout: a listing costs one RPC plus three per object
	// (about 90,000 RPCs at 10,000 Services, 20 to 90 s at 0.2 to 1 ms
	// each); drift repair lists without the sync lock, so a long one holds
	// no change back.
	DefaultListTimeout = 2 * time.Minute
	// DefaultMaxAbandonedCalls: four hung calls say HNS is wedged; more
	// goroutines (and RPC threads on Windows) would only pile up.
	DefaultMaxAbandonedCalls = 4
)

// newDeadlines wraps c (nil stays nil: Start refuses it) with o's deadlines.
func newDeadlines(c hnslb.Client, o Options, log klog.Logger) *deadlines {
	if c == nil {
		return nil
	}
	d := &deadlines{c: c, call: o.CallTimeout, list: o.ListTimeout, maxAbandoned: o.MaxAbandonedCalls,
		log: log, timedOut: o.CallTimedOut}
	if d.call <= 0 {
		d.call = DefaultCallTimeout
	}
	if d.list <= 0 {
		d.list = DefaultListTimeout
	}
	if d.maxAbandoned <= 0 {
		d.maxAbandoned = DefaultMaxAbandonedCalls
	}
	d.returns = make(chan struct{}, 1)
	d.clock, _ = o.Clock.(clock.Clock)
	if d.clock == nil {
		d.clock = clock.RealClock{}
	}
	return d
}

// deadlines wraps the HNS client with per-call deadlines and tracks the
// calls it abandoned. It has only the calls the reconciler makes, so none
// goes without a deadline.
type deadlines struct {
	c            hnslb.Client
	call, list   time.Duration
	maxAbandoned int
	clock        clock.Clock
	log          klog.Logger
	timedOut     func(op string) // may be nil
	// failed are the load balancer creates HNS refused (partial.go).
	failed failedCreates
	// refused are the load balancer writes HNS refused, while someone is
	// told of them (refusals.go).
	refused lbRefusals
	// suspect is set when an answer suggests the network is gone (network.go).
	suspect networkSuspect

	mu sync.Mutex
	// abandoned counts running abandoned calls per object token (see
	// lbToken and friends); total counts them all.
	abandoned map[string]int
	total     int
	// waiting counts callers waiting on a call now; lastEnded is when a
	// call last returned or was abandoned. Liveness reads them.
	waiting   int
	lastEnded time.Time
	// returnedSince: an abandoned call returned since the last Sync took
	// it (takeReturned); returns signals each return, without blocking.
	returnedSince bool
	returns       chan struct{}
	// onReturn, if set, runs after an abandoned call returned (tests).
	onReturn func()
}

// Object tokens name what a write touches: a load balancer by frontend key
// or by ID, a remote endpoint by IP or by ID.
func lbToken(k intent.LBKey) string { return "lb " + k.String() }
func epToken(ip string) string      { return "ep " + ip }
func idToken(id string) string {
	if id == "" {
		return ""
	}
	return "id " + id
}

// errTimeout is the error of an abandoned call.
func errTimeout(op, format string, args ...any) error {
	return hnslb.NewError(op, hnslb.CodeTimeout, format, args...)
}

// errCallNotMade is in the error of a call the deadlines did not make:
// HNS held others, or shutdown began. A create not made surely made
// nothing (definitive).
var errCallNotMade = errors.New("not called")

// errNotCalled is the error of a call not made because HNS hangs: a
// timeout, as an abandoned call's.
func errNotCalled(op, format string, args ...any) error {
	e := hnslb.NewError(op, hnslb.CodeTimeout, "not called: "+format, args...)
	e.Err = errCallNotMade
	return e
}

// errNotCalledAtShutdown is the error of a call not made because ctx ended.
func errNotCalledAtShutdown(op string, err error) error {
	return fmt.Errorf("hns %s: %w: %w", op, errCallNotMade, err)
}

// busy reports whether an abandoned call on any of tokens is still running.
func (d *deadlines) busy(tokens ...string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, t := range tokens {
		if t != "" && d.abandoned[t] > 0 {
			return true
		}
	}
	return false
}

// busyTokens are the tokens abandoned calls hold now.
func (d *deadlines) busyTokens() map[string]struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.abandoned) == 0 {
		return nil
	}
	out := make(map[string]struct{}, len(d.abandoned))
	for t := range d.abandoned {
		out[t] = struct{}{}
	}
	return out
}

// hanging reports whether a call abandoned at its deadline still runs in HNS.
func (d *deadlines) hanging() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.total > 0
}

// activity reports whether a caller waits on HNS now, and when a call last
// returned or was abandoned.
func (d *deadlines) activity() (waiting bool, lastEnded time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.waiting > 0, d.lastEnded
}

// guard runs fn with the deadline timeout, on behalf of the objects named
// by tokens (none for reads).
func guard[T any](d *deadlines, ctx context.Context, op string, timeout time.Duration, fn func(context.Context) (T, error), tokens ...string) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, errNotCalledAtShutdown(op, err)
	}
	d.mu.Lock()
	if d.total >= d.maxAbandoned {
		n := d.total
		d.mu.Unlock()
		return zero, errNotCalled(op, "%d earlier HNS calls have not returned (HNS hung?)", n)
	}
	for _, t := range tokens {
		if t != "" && d.abandoned[t] > 0 {
			d.mu.Unlock()
			return zero, errNotCalled(op, "an earlier call on %s has not returned", t)
		}
	}
	if d.total > 0 {
		// HNS has a call hanging: a listing gets no more time than a
		// call, so a Sync that needs one is not held for minutes.
		timeout = min(timeout, d.call)
	}
	d.waiting++
	d.mu.Unlock()

	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	// The timer exists before the call starts, so a test that sees the call
	// hung can step a fake clock past it.
	timer := d.clock.NewTimer(timeout)
	defer timer.Stop()
	go func() {
		v, err := fn(ctx)
		done <- result{v, err}
	}()
	var expired error
	select {
	case res := <-done:
		d.ended(false, nil)
		return res.v, res.err
	case <-timer.C():
		expired = errTimeout(op, "no reply within %v; the call was abandoned and its object is retried once it returns", timeout)
		d.log.Error(expired, "HNS call timed out", "operation", op, "objects", tokens)
		if d.timedOut != nil {
			d.timedOut(op)
		}
	case <-ctx.Done(): // shutting down
		select {
		case res := <-done:
			d.ended(false, nil)
			return res.v, res.err
		default:
		}
		expired = fmt.Errorf("hns %s: abandoned: %w", op, ctx.Err())
	}
	d.ended(true, tokens)
	go func() {
		res := <-done
		d.log.Info("Abandoned HNS call returned", "operation", op, "objects", tokens, "err", res.err)
		d.returned(tokens)
	}()
	return zero, expired
}

// ended records that a caller stopped waiting; abandon registers the call
// as still running on tokens.
func (d *deadlines) ended(abandon bool, tokens []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.waiting--
	d.lastEnded = d.clock.Now()
	if !abandon {
		return
	}
	d.total++
	if d.abandoned == nil {
		d.abandoned = map[string]int{}
	}
	for _, t := range tokens {
		if t != "" {
			d.abandoned[t]++
		}
	}
}

// returned releases an abandoned call's objects.
func (d *deadlines) returned(tokens []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.total--
	for _, t := range tokens {
		if t == "" {
			continue
		}
		if d.abandoned[t]--; d.abandoned[t] <= 0 {
			delete(d.abandoned, t)
		}
	}
	d.returnedSince = true
	select {
	case d.returns <- struct{}{}:
	default: // one is pending: the Sync it asks for takes every return
	}
	if d.onReturn != nil {
		d.onReturn()
	}
}

// returnedPending reports whether a return waits for takeReturned (false
// on a nil d: a reconciler without a client).
func (d *deadlines) returnedPending() bool {
	if d == nil {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.returnedSince
}

// takeReturned reports whether an abandoned call returned since it last
// said so.
func (d *deadlines) takeReturned() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	r := d.returnedSince
	d.returnedSince = false
	return r
}
