package sim

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// Options configure a simulated HNS.
type Options struct {
	// Profile is the Windows build to behave like; the zero value means ws2022.
	Profile Profile
	// Seed makes generated IDs, MACs and injected faults reproducible.
	Seed int64
	// Latency is added to every call (a sleep, no CPU).
	Latency time.Duration
	// Clock times restart windows; nil means the real clock.
	Clock clock.PassiveClock
}

// HNS is one node's simulated Host Networking Service. It implements
// hnslb.Client and is safe for concurrent use; calls are serialized like
// HNS's own object lock would serialize them.
type HNS struct {
	profile Profile
	clock   clock.PassiveClock

	mu       sync.Mutex
	latency  time.Duration
	state    state
	faultRng *rand.Rand // fault draws; IDs come from state.ids, so faults never shift IDs
	faults   Faults
	down     time.Time // calls fail as unavailable until then
	counters Counters
	hangs    hangs
	hanging  atomic.Bool // some operation hangs: calls look at hangs
}

var _ hnslb.Client = (*HNS)(nil)

// New returns an empty simulated HNS.
func New(opts Options) *HNS {
	if opts.Profile.Name == "" && opts.Profile.Version == (hnslb.Version{}) {
		opts.Profile = profiles[ProfileWS2022]
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	return &HNS{
		profile:  opts.Profile,
		clock:    opts.Clock,
		latency:  opts.Latency,
		state:    newState(uint64(opts.Seed)),
		faultRng: rand.New(rand.NewPCG(uint64(opts.Seed), 0xfa17)),
		hangs:    newHangs(),
	}
}

// Profile is the profile this HNS behaves like.
func (h *HNS) Profile() Profile { return h.profile }

// SetLatency changes the per-call latency.
func (h *HNS) SetLatency(d time.Duration) {
	h.mu.Lock()
	h.latency = d
	h.mu.Unlock()
}

// Counters returns a copy of the call counters.
func (h *HNS) Counters() Counters {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.counters.clone()
}

// ResetCounters zeroes the call counters.
func (h *HNS) ResetCounters() {
	h.mu.Lock()
	h.counters = Counters{}
	h.mu.Unlock()
}

// Snapshot is a deep copy of every object; it is not counted as calls.
func (h *HNS) Snapshot() *hnslb.Snapshot {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.state.snapshot(h.profile.Version)
}

// call runs one HNS call: latency first (outside the lock, like a round
// trip), then the restart window and injected faults, then fn under the
// lock. A failed gate means fn never runs, so faults change nothing, unless
// Faults.Committed says the write went through before the error.
// A cancelled context ends the call before it reaches HNS and is not counted.
// A hang (see hang.go) holds the call before the lock, or its reply after.
func (h *HNS) call(ctx context.Context, op Op, fn func() error) error {
	if err := h.wait(ctx); err != nil {
		return err
	}
	h.hold(op, false)
	defer h.hold(op, true) // deferred first, so it runs after the unlock
	h.mu.Lock()
	defer h.mu.Unlock()
	commit, err := h.gate(op)
	switch {
	case err == nil:
		err = fn()
	case commit:
		_ = fn() // applied if valid; the caller sees the injected error either way
	}
	h.counters.add(op, resultName(err))
	h.counters.HCNCalls += op.hcnCost(err)
	return err
}

// chargeList adds what hcn spends per object a get or list returns (open,
// query, close).
func (h *HNS) chargeList(objects int) { h.counters.HCNCalls += 3 * objects }

func (h *HNS) wait(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	h.mu.Lock()
	d := h.latency
	h.mu.Unlock()
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Version reports the profile's HNS version.
func (h *HNS) Version(ctx context.Context) (hnslb.Version, error) {
	var v hnslb.Version
	err := h.call(ctx, OpVersion, func() error {
		v = h.profile.Version
		return nil
	})
	return v, err
}
