package reconciler

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/klog/v2/textlogger"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// The state file's crash safety, step by step: a scripted run of Syncs is
// repeated, killed before each of its steps in turn (every HNS write and
// every state file operation), and a new reconciler starts on what the kill
// left. Two kills: the process (every completed write stays in the file)
// and the node losing power (the journal keeps only what an fsync made
// durable; a snapshot is fsynced before its rename, so it stays).

// errKilled is what a killed process's calls get: they never happen.
var errKilled = errors.New("killed")

// killSwitch counts steps and stops every one from the kill on.
type killSwitch struct {
	mu     sync.Mutex
	steps  int
	killAt int // the step before which the process dies; 0: never
}

// step reports whether the next step may happen (the process is alive).
func (k *killSwitch) step() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.dead() {
		return false
	}
	k.steps++
	if k.killAt > 0 && k.steps >= k.killAt {
		k.steps--
		k.killAt = -1
		return false
	}
	return true
}

func (k *killSwitch) alive() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return !k.dead()
}

func (k *killSwitch) dead() bool { return k.killAt < 0 }

func (k *killSwitch) count() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.steps
}

// killClient is HNS as a process that may be killed sees it: every write is
// a step; after the kill nothing reaches HNS.
type killClient struct {
	hnslb.Client
	k *killSwitch
}

func (c *killClient) CreateEndpoint(ctx context.Context, n string, ep *hnslb.Endpoint) (*hnslb.Endpoint, error) {
	if !c.k.step() {
		return nil, errKilled
	}
	return c.Client.CreateEndpoint(ctx, n, ep)
}

func (c *killClient) DeleteEndpoint(ctx context.Context, id string) error {
	if !c.k.step() {
		return errKilled
	}
	return c.Client.DeleteEndpoint(ctx, id)
}

func (c *killClient) CreateLoadBalancer(ctx context.Context, l *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	if !c.k.step() {
		return nil, errKilled
	}
	return c.Client.CreateLoadBalancer(ctx, l)
}

func (c *killClient) UpdateLoadBalancer(ctx context.Context, id string, l *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	if !c.k.step() {
		return nil, errKilled
	}
	return c.Client.UpdateLoadBalancer(ctx, id, l)
}

func (c *killClient) DeleteLoadBalancer(ctx context.Context, id string) error {
	if !c.k.step() {
		return errKilled
	}
	return c.Client.DeleteLoadBalancer(ctx, id)
}

// killFS is the state file system of a process that may be killed: each
// operation that changes a file is a step; it also keeps, per file, the
// length an fsync made durable.
type killFS struct {
	osFS
	k      *killSwitch
	mu     sync.Mutex
	synced map[string]int64
}

func (f *killFS) OpenFile(name string, flag int, perm fs.FileMode) (stateHandle, error) {
	writes := flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE) != 0
	if writes && !f.k.step() || !writes && !f.k.alive() {
		return nil, errKilled
	}
	h, err := f.osFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &killHandle{stateHandle: h, fs: f, name: name}, nil
}

func (f *killFS) MkdirAll(dir string) error {
	if !f.k.step() {
		return errKilled
	}
	return f.osFS.MkdirAll(dir)
}

func (f *killFS) Rename(from, to string) error {
	if !f.k.step() {
		return errKilled
	}
	return f.osFS.Rename(from, to)
}

func (f *killFS) Remove(name string) error {
	if !f.k.step() {
		return errKilled
	}
	f.mu.Lock()
	delete(f.synced, name)
	f.mu.Unlock()
	return f.osFS.Remove(name)
}

// powerLoss cuts the journal back to what an fsync made durable.
func (f *killFS) powerLoss(t *testing.T, journal string) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	info, err := os.Stat(journal)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if keep := f.synced[journal]; keep < info.Size() {
		if err := os.Truncate(journal, keep); err != nil {
			t.Fatal(err)
		}
	}
}

type killHandle struct {
	stateHandle
	fs   *killFS
	name string
}

func (h *killHandle) Read(p []byte) (int, error) {
	if !h.fs.k.alive() {
		return 0, errKilled
	}
	return h.stateHandle.Read(p)
}

func (h *killHandle) Write(p []byte) (int, error) {
	if !h.fs.k.step() {
		return 0, errKilled
	}
	return h.stateHandle.Write(p)
}

func (h *killHandle) Truncate(size int64) error {
	if !h.fs.k.step() {
		return errKilled
	}
	h.fs.mu.Lock()
	h.fs.synced[h.name] = min(h.fs.synced[h.name], size)
	h.fs.mu.Unlock()
	return h.stateHandle.Truncate(size)
}

func (h *killHandle) Chmod(mode fs.FileMode) error {
	if !h.fs.k.step() {
		return errKilled
	}
	return h.stateHandle.Chmod(mode)
}

func (h *killHandle) Sync() error {
	if !h.fs.k.step() {
		return errKilled
	}
	if err := h.stateHandle.Sync(); err != nil {
		return err
	}
	info, err := h.stateHandle.Stat()
	if err != nil {
		return err
	}
	h.fs.mu.Lock()
	h.fs.synced[h.name] = info.Size()
	h.fs.mu.Unlock()
	return nil
}

// crashRun is one run of the crash script.
type crashRun struct {
	e    *env
	ks   *killSwitch
	kfs  *killFS
	tail intent.LBKey // the tenant's frontend (external IP): never to be claimed from another
	// syncs are the step counts at each Sync's start and end.
	syncs [][2]int
}

// crashScript is the run a kill interrupts: a cold start, a Service whose
// backend moves to a new remote pod (a new endpoint, the old one deleted;
// without modify a new load balancer ID), a tenant's external IP Service
// changed, a Service deleted, and a periodic Sync with nothing to do.
func newCrashRun(t *testing.T, profile string, killAt int) *crashRun {
	e := newEnv(t, profile)
	e.foreign()
	e.local("10.244.1.11")
	e.local("10.244.1.12")
	ks := &killSwitch{killAt: killAt}
	c := &crashRun{e: e, ks: ks, kfs: &killFS{k: ks, synced: map[string]int64{}}}
	a := lb("10.96.0.10", 80, loc("10.244.1.11"), rem("10.244.2.20", "192.168.0.2"))
	b := externalLB("203.0.113.10", 443, loc("10.244.1.11"), rem("10.244.2.21", "192.168.0.2"))
	gone := lb("10.96.0.11", 53, rem("10.244.2.23", "192.168.0.3"))
	c.tail = b.Key
	opts := e.options()
	opts.Logger = textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(io.Discard))) // a dead process's errors
	r := New(&killClient{Client: e.hns, k: ks}, opts)
	r.store.fs = c.kfs
	upsert(r, a, b, gone)
	if err := r.Start(ctx); err != nil && ks.alive() {
		t.Fatal(err)
	}
	sync := func() {
		start := ks.count()
		r.Sync(ctx)
		c.syncs = append(c.syncs, [2]int{start, ks.count()})
	}
	sync()
	a.Backends = []intent.Backend{loc("10.244.1.11"), rem("10.244.2.22", "192.168.0.2")}
	upsert(r, a)
	sync()
	b.Backends = []intent.Backend{loc("10.244.1.12"), rem("10.244.2.21", "192.168.0.2")}
	upsert(r, b)
	remove(r, gone.Key)
	sync()
	sync()
	return c
}

// restart starts a new reconciler on what the kill left, with nothing
// desired (every Service deleted while hnsproxy was down), and converges.
func (c *crashRun) restart() {
	r := New(c.e.hns, c.e.options())
	if err := r.Start(ctx); err != nil {
		c.e.t.Fatal(err)
	}
	c.e.converge(r)
}

// leftovers are the load balancers and remote endpoints in HNS other than
// those of e.foreign() (one of each).
func (c *crashRun) leftovers() []string {
	var out []string
	for _, l := range c.e.snapshot().LoadBalancers {
		if k, _ := KeyOf(&l); k.VIP != "10.96.9.9" {
			out = append(out, "load balancer "+k.String())
		}
	}
	for _, ep := range c.e.snapshot().Endpoints {
		if ep.IsRemote() && ep.IP() != "10.244.9.9" {
			out = append(out, "remote endpoint "+ep.IP())
		}
	}
	return out
}

// mayHoldDeclaration reports whether a kill before step may leave the
// tenant frontend declared as being created: inside a Sync that creates on
// it (declaring marks the Sync's start), and after a power loss also inside
// the Sync after it, whose first state write is the fsync that makes the
// withdrawal durable. syncs are the step ranges of the run not killed;
// creates says which of its Syncs create on the frontend.
func mayHoldDeclaration(syncs [][2]int, creates []bool, step int, powerLoss bool) bool {
	for i, s := range syncs {
		if step > s[0] && step <= s[1] {
			return creates[i] || powerLoss && i > 0 && creates[i-1]
		}
	}
	return powerLoss && creates[len(creates)-1]
}

// TestKillAtEveryStepLeaksNothing: wherever the process dies, and whether
// the journal keeps its unsynced appends (a kill) or loses them (power
// loss), the restarted reconciler owns every object the killed one made:
// with every Service deleted meanwhile, it removes them all, and leaves the
// other agent's objects alone.
func TestKillAtEveryStepLeaksNothing(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2022, sim.ProfileWS2025} {
		steps := newCrashRun(t, profile, 0).ks.count()
		if steps < 20 {
			t.Fatalf("%s: the script took %d steps; it no longer exercises the state file", profile, steps)
		}
		for _, powerLoss := range []bool{false, true} {
			for kill := 1; kill <= steps+1; kill++ {
				c := newCrashRun(t, profile, kill)
				if powerLoss {
					c.kfs.powerLoss(t, journalPath(c.e.stateFile))
				}
				c.restart()
				if left := c.leftovers(); len(left) > 0 {
					t.Errorf("%s, killed before step %d of %d (power loss %v): leaked %v", profile, kill, steps, powerLoss, left)
				}
				if s := readState(t, c.e.stateFile); len(s.LoadBalancers)+len(s.RemoteEndpoints) != 0 {
					t.Errorf("%s, killed before step %d: the state file still owns %+v", profile, kill, s)
				}
			}
		}
	}
}

// TestKillNeverClaimsAForeignLoadBalancer: after the kill, hnsproxy's load
// balancer on a tenant's frontend vanishes and another agent makes one
// there. The restarted reconciler must leave that one alone, except where
// the state file still declares the frontend as being created: inside a
// Sync that creates on it, and after a power loss until the next Sync's
// first state write
// (docs/reliability.md, the state file's fsyncs). The test fails if a
// declaration outlives that window: a Sync that leaves it to the next one.
func TestKillNeverClaimsAForeignLoadBalancer(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2022, sim.ProfileWS2025} {
		whole := newCrashRun(t, profile, 0)
		steps := whole.ks.count()
		// The script creates on the tenant frontend in its first Sync, and
		// without modify again in its third (a new backend: a new ID).
		creates := []bool{true, false, profile != sim.ProfileWS2025, false}
		for _, powerLoss := range []bool{false, true} {
			for kill := 1; kill <= steps+1; kill++ {
				c := newCrashRun(t, profile, kill)
				if powerLoss {
					c.kfs.powerLoss(t, journalPath(c.e.stateFile))
				}
				if ours := c.e.hnsLB(c.tail); ours != nil {
					if err := c.e.hns.DeleteLoadBalancer(ctx, ours.ID); err != nil {
						t.Fatal(err)
					}
				}
				d := externalLB(c.tail.VIP, c.tail.Port)
				foreign := c.e.foreignOn(d, "10.244.1.99")
				c.restart()
				if c.e.hasLB(foreign) {
					continue
				}
				if !mayHoldDeclaration(whole.syncs, creates, kill, powerLoss) {
					t.Errorf("%s, killed before step %d (power loss %v): the restart took the tenant frontend's foreign load balancer (syncs at steps %v)",
						profile, kill, powerLoss, whole.syncs)
				}
			}
		}
	}
}

// TestSyncFsyncsTheStateFileAtMostOnce: a Sync that replaces a load
// balancer (a new ID without modify) and a remote endpoint makes one fsync:
// its declarations, which also make the previous Sync's records durable;
// its own records are written without one. A Sync that writes no state
// makes none, once the last one's records are durable.
func TestSyncFsyncsTheStateFileAtMostOnce(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	e.local("10.244.1.11")
	a := lb("10.96.0.10", 80, loc("10.244.1.11"), rem("10.244.2.20", "192.168.0.2"))
	r := e.started(a)
	fsyncs := 0
	faults := &faultFS{}
	faults.set(func(op, name string) error {
		if op == "sync" && strings.HasSuffix(name, ".journal") {
			fsyncs++
		}
		return nil
	})
	r.store.fs = faults
	for i, ip := range []string{"10.244.2.21", "10.244.2.22", "10.244.2.23"} {
		fsyncs = 0
		a.Backends = []intent.Backend{loc("10.244.1.11"), rem(ip, "192.168.0.2")}
		upsert(r, a)
		if res := r.Sync(ctx); res.Failed+res.Pending != 0 || res.Updated != 1 {
			t.Fatalf("change %d: %+v", i, res)
		}
		if fsyncs != 1 {
			t.Errorf("change %d: %d fsyncs of the journal, want 1", i, fsyncs)
		}
		if s := readState(t, e.stateFile); len(s.LoadBalancers) != 1 || e.hnsLB(a.Key) == nil || s.LoadBalancers[0] != e.hnsLB(a.Key).ID {
			t.Errorf("change %d: the state file right after the Sync owns %v, want the new load balancer", i, s.LoadBalancers)
		}
	}
	fsyncs = 0
	r.Sync(ctx)
	r.Sync(ctx)
	if fsyncs != 1 {
		t.Errorf("two Syncs with nothing to do after a change: %d fsyncs, want 1 (the change's records)", fsyncs)
	}
}

// declaredClient checks, at every create, that the state file on disk
// declares the key or IP being created (what a kill at that moment would
// leave to the restart), failing the test otherwise.
type declaredClient struct {
	hnslb.Client
	t         *testing.T
	stateFile string
}

func (c *declaredClient) CreateLoadBalancer(ctx context.Context, l *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	k, _ := KeyOf(l)
	if s := readState(c.t, c.stateFile); !slices.Contains(s.CreatingLoadBalancers, k) {
		c.t.Errorf("load balancer %s created while the state file declares only %v", k, s.CreatingLoadBalancers)
	}
	return c.Client.CreateLoadBalancer(ctx, l)
}

func (c *declaredClient) CreateEndpoint(ctx context.Context, n string, ep *hnslb.Endpoint) (*hnslb.Endpoint, error) {
	if s := readState(c.t, c.stateFile); ep.IsRemote() && !slices.Contains(s.CreatingRemoteEndpoints, ep.IP()) {
		c.t.Errorf("remote endpoint %s created while the state file declares only %v", ep.IP(), s.CreatingRemoteEndpoints)
	}
	return c.Client.CreateEndpoint(ctx, n, ep)
}

// TestALoadBalancerWaitingForANewEndpointIsDeclared: a load balancer that
// left out a remote backend whose endpoint could not be created is synced
// again in the Sync that creates the endpoint, though its own retry is not
// due. Without modify that is a new load balancer, so its key must be
// declared before it, like those of the Sync's own work.
func TestALoadBalancerWaitingForANewEndpointIsDeclared(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	e.local("10.244.1.11")
	a := lb("10.96.0.10", 80, loc("10.244.1.11"), rem("10.244.2.20", "192.168.0.2"))
	r := New(&declaredClient{Client: e.hns, t: t, stateFile: e.stateFile}, e.options())
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	upsert(r, a)
	e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpCreateEndpoint: 1}, Errors: []hnslb.ErrorCode{hnslb.CodeInvalidParameter}})
	r.Sync(ctx)
	e.hns.SetFaults(sim.Faults{})
	if got := e.hnsLB(a.Key); got == nil || len(got.HostComputeEndpoints) != 1 {
		t.Fatalf("after the failed endpoint create HNS holds %+v, want the load balancer with its local backend only", got)
	}
	r.mu.Lock()
	r.lbs[a.Key].st.nextRetry = e.clock.Now().Add(time.Hour) // its own retry is not due
	epRetry := r.eps["10.244.2.20"].st.nextRetry
	r.mu.Unlock()
	e.clock.SetTime(epRetry)
	if res := r.Sync(ctx); res.Created != 1 || res.Updated != 1 {
		t.Fatalf("the endpoint's retry: %+v, want it created and the load balancer replaced", res)
	}
	if got := e.hnsLB(a.Key); got == nil || len(got.HostComputeEndpoints) != 2 {
		t.Errorf("HNS holds %+v, want the load balancer with both backends", got)
	}
}

// TestAFailedFsyncOfTheOutcomeIsFollowedByASnapshot: when the fsync that
// should make the last Sync's outcome durable fails (the next Sync's
// declaration, or its fsync alone when it has nothing to declare), the
// kernel may have dropped those bytes; nothing is created until a snapshot
// of the whole state is written, which the next save does.
func TestAFailedFsyncOfTheOutcomeIsFollowedByASnapshot(t *testing.T) {
	for _, declares := range []bool{false, true} {
		e := newEnv(t, sim.ProfileWS2022)
		e.local("10.244.1.11")
		a := lb("10.96.0.10", 80, loc("10.244.1.11"), rem("10.244.2.20", "192.168.0.2"))
		r := e.started(a)
		faults := &faultFS{}
		r.store.fs = faults
		a.Backends = []intent.Backend{loc("10.244.1.11"), rem("10.244.2.21", "192.168.0.2")}
		upsert(r, a)
		if res := r.Sync(ctx); res.Failed+res.Pending != 0 { // its outcome: appended, not fsynced
			t.Fatalf("change: %+v", res)
		}
		faults.set(func(op, _ string) error { return failOn(op, syscall.EIO, "sync") })
		if declares {
			upsert(r, lb("10.96.0.11", 80, loc("10.244.1.11")))
		}
		if res := r.Sync(ctx); res.Created != 0 {
			t.Fatalf("declares %v: a Sync whose first fsync failed created %d objects", declares, res.Created)
		}
		faults.set(nil)
		e.converge(r)
		raw, err := os.ReadFile(e.stateFile)
		if err != nil {
			t.Fatal(err)
		}
		var snap stateFile
		if err := json.Unmarshal(raw, &snap); err != nil {
			t.Fatal(err)
		}
		if id := e.hnsLB(a.Key).ID; !slices.Contains(snap.LoadBalancers, id) {
			t.Errorf("declares %v: the snapshot holds %v, want the changed load balancer %s: after the failed fsync its outcome must reach a snapshot", declares, snap.LoadBalancers, id)
		}
		e.assertStateFileMatchesHNS()
	}
}
