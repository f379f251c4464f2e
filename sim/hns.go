package sim

import (
	"context"
	"io"
	"iter"
	"math/rand/v2"
	"slices"
	"strconv"
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
	// Latency is what one hcn RPC takes (a sleep, no CPU); a call waits it
	// once per RPC it costs through hcn (see Counters.HCNCalls).
	Latency time.Duration
	// Clock times restart windows; nil means the real clock.
	Clock clock.PassiveClock
	// Echo is how answers differ from what is stored (echo.go); SetEcho
	// changes it later.
	Echo Echo
	// Variants choose the codes where real HNS is not known (errvariants.go).
	Variants ErrorVariants
	// ModifyBackendsOnly makes a modify that HNS can do apply the backends
	// alone and keep the flags, ports, distribution, source and frontend
	// VIPs as they were, still answering success. Whether real HNS applies
	// those in a modify is not known: winkernel modifies only to change
	// backends, and no public capture shows another field modified.
	ModifyBackendsOnly bool
	// WriteLog, if set, gets a line for every change to a load balancer
	// or endpoint and for every write call's answer (writelog.go).
	WriteLog io.Writer
}

// HNS is one node's simulated Host Networking Service. It implements
// hnslb.Client and is safe for concurrent use; calls are serialized like
// HNS's own object lock would serialize them.
type HNS struct {
	profile Profile
	// features and modify are the profile's, worked out once: a load
	// balancer's create or update reads them, and working them out formats
	// the backend cap's reason.
	features hnslb.Features
	modify   modifyMode
	// modifyBackendsOnly is Options.ModifyBackendsOnly.
	modifyBackendsOnly bool
	variants           ErrorVariants
	clock              clock.PassiveClock

	mu       sync.Mutex
	latency  time.Duration
	state    state
	faultRng *rand.Rand // fault draws; IDs come from state.ids, so faults never shift IDs
	faults   Faults
	// leftOutRuns counts, by lower-case ID, the listings in a row that
	// left each object out, while Faults.LeftOutInARow bounds them.
	leftOutRuns map[string]int
	down        time.Time // calls fail as unavailable until then
	restarts    uint64    // restarts simulated so far: ServiceInstance
	counters    Counters
	hangs       hangs
	hanging     atomic.Bool // some operation hangs: calls look at hangs
	echo        Echo        // how answers differ from what is stored (echo.go)
	// echoTurns counts Echo.Reorder's answers, each rotated one place more.
	echoTurns int
	// sleep waits out simulated latency; tests replace it to see what is charged.
	sleep func(ctx context.Context, d time.Duration) error
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
	st := newState(uint64(opts.Seed))
	st.log = writeLog{opts.WriteLog}
	return &HNS{
		profile:            opts.Profile,
		features:           opts.Profile.Features(),
		modify:             opts.Profile.modify(),
		modifyBackendsOnly: opts.ModifyBackendsOnly,
		variants:           opts.Variants.withDefaults(),
		clock:              opts.Clock,
		latency:            opts.Latency,
		echo:               opts.Echo,
		state:              st,
		faultRng:           rand.New(rand.NewPCG(uint64(opts.Seed), 0xfa17)),
		leftOutRuns:        map[string]int{},
		hangs:              newHangs(),
		sleep:              sleepCtx,
	}
}

// Profile is the profile this HNS behaves like.
func (h *HNS) Profile() Profile { return h.profile }

// SetLatency changes the latency of one hcn RPC.
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

// Inspect calls fn with every endpoint and load balancer as stored, in no
// order, under HNS's lock; it is not counted as calls. fn must neither keep
// nor change them. It is Snapshot without the copies, for a check that
// reads every object (hack/scale's, after each phase: a deep copy of 30,000
// objects was garbage the next phase's changes paid to sweep and collect).
func (h *HNS) Inspect(fn func(endpoints iter.Seq[*hnslb.Endpoint], loadBalancers iter.Seq[*hnslb.LoadBalancer])) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fn(h.state.endpoints.all(), h.state.loadBalancers.all())
}

// Snapshot is a deep copy of every object; it is not counted as calls.
func (h *HNS) Snapshot() *hnslb.Snapshot {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.state.snapshot(h.profile.Version)
	s.OSBuild, s.OSBugs = h.profile.OSBuild, slices.Clone(h.profile.Bugs)
	return s
}

// LoadBalancersOn returns copies of the load balancers on frontend vip,
// uncounted and unfaulted like Snapshot, without copying everything else:
// a tool following one Service holds the lock a moment, not a dump's.
func (h *HNS) LoadBalancersOn(vip string) []hnslb.LoadBalancer {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []hnslb.LoadBalancer
	h.state.loadBalancers.each(func(lb *hnslb.LoadBalancer) {
		if slices.Contains(lb.FrontendVIPs, vip) {
			out = append(out, *copyLoadBalancer(lb))
		}
	})
	return out
}

// call runs one HNS call: the latency of its first hcn RPC first (outside
// the lock, like a round trip), then the restart window and injected
// faults, then fn under the lock, then the latency of the call's remaining
// hcn RPCs (a list's open, query and close per object; a create's query and
// close), again outside the lock, as hcn makes them one at a time while
// other callers' RPCs interleave. A failed gate means fn never runs, so
// faults change nothing, unless Faults.Committed says the write went
// through before the error. A cancelled context ends the call before it
// reaches HNS and is not counted; one that ends during the remaining RPCs
// finds the call counted and, for a write, applied (a deadline that fired
// while hcn was still querying the new object). A hang (see hang.go) holds
// the call before the lock, or its reply after.
func (h *HNS) call(ctx context.Context, op Op, fn func() error) error {
	latency, err := h.waitFirstRPC(ctx)
	if err != nil {
		return err
	}
	h.hold(op, false)
	rpcs, err := h.serve(op, fn)
	h.hold(op, true) // the reply, after HNS applied the call
	if rest := time.Duration(rpcs-1) * latency; rest > 0 {
		if serr := h.sleep(ctx, rest); serr != nil && err == nil {
			err = serr
		}
	}
	return err
}

// serve runs fn under the lock behind the restart window and faults, counts
// the call and returns how many hcn RPCs it cost.
func (h *HNS) serve(op Op, fn func() error) (rpcs int, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	before := h.counters.HCNCalls
	commit, err := h.gate(op)
	switch {
	case err == nil:
		err = fn()
	case commit:
		_ = fn() // applied if valid; the caller sees the injected error either way
	}
	if h.state.log.w != nil && op.isWrite() { // no formatting without a log
		h.state.log.printf("%s answered %s (applied anyway: %v)", op, resultName(err), err != nil && commit)
	}
	h.counters.add(op, resultName(err))
	h.counters.HCNCalls += op.hcnCost(err)
	return h.counters.HCNCalls - before, err
}

// chargeList adds what hcn spends per object a get or list returns (open,
// query, close).
func (h *HNS) chargeList(objects int) { h.counters.HCNCalls += 3 * objects }

// waitFirstRPC waits out the first RPC's latency and returns the per-RPC
// latency in force for the call.
func (h *HNS) waitFirstRPC(ctx context.Context) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	h.mu.Lock()
	d := h.latency
	h.mu.Unlock()
	if d <= 0 {
		return 0, nil
	}
	return d, h.sleep(ctx, d)
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
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

// ServiceInstance is the number of restarts simulated so far: on Windows
// the hns service's process ID, read from the service control manager, not
// an HNS call, so it is not counted and no injected fault reaches it.
// During a restart's window it is unavailable, as a stopped service has
// no process.
func (h *HNS) ServiceInstance(ctx context.Context) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.clock.Now().Before(h.down) { // the service is not running
		return "", &hnslb.Error{Op: "ServiceInstance", Code: hnslb.CodeRPCServerUnavailable, Message: "HNS is restarting"}
	}
	return strconv.FormatUint(h.restarts, 10), nil
}

// OSBuild reports the profile's Windows build. On Windows it is a registry
// read, not an HNS call: it is not counted and no fault or restart reaches it.
func (h *HNS) OSBuild(ctx context.Context) (hnslb.OSBuild, error) {
	if err := ctx.Err(); err != nil {
		return hnslb.OSBuild{}, err
	}
	return h.profile.OSBuild, nil
}
