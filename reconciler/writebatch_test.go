package reconciler

import (
	"bytes"
	"context"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// callerOfWrites records the goroutine each HNS write runs on (one
// goroutine is one hand-over: a batch), and fails the endpoint creates of
// the IPs in failIPs.
type callerOfWrites struct {
	hnslb.Client
	mu         sync.Mutex
	goroutines map[uint64]int
	failIPs    map[string]bool
	emptyIDs   int  // load balancer creates that named an empty endpoint ID
	failLBDels bool // load balancer deletes fail
	updateErr  error
}

func (c *callerOfWrites) note() {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	// "goroutine 123 [running]:..."
	id, _ := strconv.ParseUint(string(bytes.Fields(buf)[1]), 10, 64)
	c.mu.Lock()
	c.goroutines[id]++
	c.mu.Unlock()
}

func (c *callerOfWrites) batches() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.goroutines)
}

func (c *callerOfWrites) reset() {
	c.mu.Lock()
	c.goroutines = map[uint64]int{}
	c.mu.Unlock()
}

func (c *callerOfWrites) CreateEndpoint(ctx context.Context, networkID string, e *hnslb.Endpoint) (*hnslb.Endpoint, error) {
	c.note()
	if c.failIPs[e.IP()] {
		return nil, hnslb.NewError("create_endpoint", hnslb.CodeRPCServerUnavailable, "injected for %s", e.IP())
	}
	return c.Client.CreateEndpoint(ctx, networkID, e)
}

func (c *callerOfWrites) CreateLoadBalancer(ctx context.Context, lb *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	c.note()
	for _, id := range lb.HostComputeEndpoints {
		if id == "" {
			c.mu.Lock()
			c.emptyIDs++
			c.mu.Unlock()
		}
	}
	return c.Client.CreateLoadBalancer(ctx, lb)
}

func (c *callerOfWrites) UpdateLoadBalancer(ctx context.Context, id string, lb *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	c.note()
	if c.updateErr != nil {
		return nil, c.updateErr
	}
	return c.Client.UpdateLoadBalancer(ctx, id, lb)
}

func (c *callerOfWrites) DeleteLoadBalancer(ctx context.Context, id string) error {
	c.note()
	if c.failLBDels {
		return hnslb.NewError("delete_load_balancer", hnslb.CodeRPCServerUnavailable, "injected for %s", id)
	}
	return c.Client.DeleteLoadBalancer(ctx, id)
}

func (c *callerOfWrites) DeleteEndpoint(ctx context.Context, id string) error {
	c.note()
	return c.Client.DeleteEndpoint(ctx, id)
}

// scaledUp is a ws2022 node with one load balancer of two remote backends
// realized, and the same with four more.
func scaledUp(t *testing.T) (*env, *callerOfWrites, *Reconciler, intent.LB) {
	return scaledUpOn(t, sim.ProfileWS2022, nil)
}

func scaledUpOn(t *testing.T, profile string, tweak func(*Options)) (*env, *callerOfWrites, *Reconciler, intent.LB) {
	e := newEnv(t, profile)
	e.tweak = tweak
	c := &callerOfWrites{Client: e.hns, goroutines: map[uint64]int{}, failIPs: map[string]bool{}}
	small := lb("10.96.0.10", 80, rem("10.244.2.10", "192.168.0.2"), rem("10.244.2.11", "192.168.0.2"))
	r, res := e.start(c, small)
	if res.Failed+res.Pending != 0 {
		t.Fatalf("first sync: %+v", res)
	}
	big := lb("10.96.0.10", 80, append(small.Backends[:2:2],
		rem("10.244.3.10", "192.168.0.3"), rem("10.244.3.11", "192.168.0.3"),
		rem("10.244.4.10", "192.168.0.4"), rem("10.244.4.11", "192.168.0.4"))...)
	e.hns.ResetCounters()
	c.reset()
	return e, c, r, big
}

// A scale step where HNS cannot modify (four new remote endpoints, the load
// balancer deleted and created with them) is one batch: every write on one
// goroutine, so one hand-over to the deadline's goroutine, and the
// minimal writes.
func TestScaleStepIsOneBatch(t *testing.T) {
	e, c, r, big := scaledUp(t)
	upsert(r, big)
	res := r.Sync(ctx)
	if res.Failed+res.Pending != 0 || res.Created != 4 || res.Updated != 1 {
		t.Fatalf("sync: %+v, want 4 endpoints created and 1 load balancer updated", res)
	}
	if n := c.batches(); n != 1 {
		t.Errorf("the writes ran on %d goroutines, want 1 (one batch)", n)
	}
	if w := e.counters().Writes(); w != 6 {
		t.Errorf("%d HNS writes, want 6 (4 endpoint creates, a delete and a create)", w)
	}
	e.assertRealized([]intent.LB{big})
	st, err := loadState(e.stateFile)
	if err != nil {
		t.Fatal(err)
	}
	if id := e.hnsLB(big.Key).ID; !contains(st.LoadBalancers, id) {
		t.Errorf("the state file does not own the new load balancer %s", id)
	}
	if len(st.RemoteEndpoints) != 6 {
		t.Errorf("the state file owns %d remote endpoints, want 6", len(st.RemoteEndpoints))
	}
}

// When an endpoint create of the batch fails, the load balancer that names
// it is not written in the batch: its turn writes it without that backend,
// as two batches did, and the next Sync adds the backend once its
// endpoint exists.
func TestFailedEndpointCreateLeavesTheLoadBalancerToItsTurn(t *testing.T) {
	e, c, r, big := scaledUp(t)
	c.failIPs["10.244.4.11"] = true
	upsert(r, big)
	res := r.Sync(ctx)
	if res.Failed != 1 || res.Created != 3 || res.Updated != 1 {
		t.Fatalf("sync: %+v, want 1 failed endpoint, 3 created, 1 load balancer updated", res)
	}
	got := e.hnsLB(big.Key)
	if got == nil || len(got.HostComputeEndpoints) != 5 {
		t.Fatalf("HNS holds %+v, want the load balancer with the 5 backends whose endpoints exist", got)
	}
	if c.emptyIDs != 0 {
		t.Errorf("%d load balancer creates named an empty endpoint ID", c.emptyIDs)
	}
	// 3 endpoints, the old load balancer's delete and the new one's create:
	// nothing made in the batch and undone in the turn.
	if w := e.counters().Writes(); w != 5 {
		t.Errorf("%d HNS writes, want 5", w)
	}
	c.failIPs = map[string]bool{}
	e.converge(r)
	e.assertRealized([]intent.LB{big})
}

// An endpoint create of the batch that hangs past the call deadline stops
// the batch before the load balancer's writes: none is made in it, the
// load balancer keeps its realized backends, and once the hung call
// returns every backend is added.
func TestHungEndpointCreateLeavesTheLoadBalancerToItsTurn(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	w := e.withHangWatch(0)
	small := lb("10.96.0.10", 80, rem("10.244.2.10", "192.168.0.2"))
	r := w.watch(e.started(small))
	old := e.hnsLB(small.Key).ID
	big := lb("10.96.0.10", 80, rem("10.244.2.10", "192.168.0.2"), rem("10.244.3.10", "192.168.0.3"), rem("10.244.3.11", "192.168.0.3"))
	e.hns.SetFaults(sim.Faults{Hang: []sim.Op{sim.OpCreateEndpoint}})
	upsert(r, big)
	res := e.syncPastHangs(r, 1)
	if res.Failed == 0 {
		t.Fatalf("sync with a hung endpoint create: %+v, want it failed", res)
	}
	if got := e.hnsLB(small.Key); got == nil || got.ID != old {
		t.Fatalf("HNS holds %+v, want the realized load balancer %s left alone", got, old)
	}
	if c := e.counters(); c.Count(sim.OpDeleteLoadBalancer)+c.Count(sim.OpCreateLoadBalancer) != 0 {
		t.Errorf("%d load balancer deletes and %d creates beside the hung endpoint create, want none",
			c.Count(sim.OpDeleteLoadBalancer), c.Count(sim.OpCreateLoadBalancer))
	}
	e.hns.SetFaults(sim.Faults{})
	<-w.returned
	e.converge(r)
	e.assertRealized([]intent.LB{big})
}

func contains(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// A load balancer that gains a backend whose remote endpoint is replaced
// in the same Sync (its provider address moved) and one whose endpoint is
// created is not written in the batch: written there without the first,
// its turn would write it again with it. Here the endpoint moves under
// another load balancer that already uses it.
func TestReplacedEndpointKeepsTheLoadBalancerOutOfTheBatch(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	const moving, kept, added = "10.244.2.20", "10.244.2.21", "10.244.3.30"
	users := lb("10.96.0.10", 80, rem(moving, "192.168.0.2"))
	gains := lb("10.96.0.11", 80, rem(kept, "192.168.0.2"))
	r := e.started(users, gains)
	users = lb("10.96.0.10", 80, rem(moving, "192.168.0.9"))
	gains = lb("10.96.0.11", 80, rem(moving, "192.168.0.9"), rem(kept, "192.168.0.2"), rem(added, "192.168.0.3"))
	upsert(r, users, gains)
	if res := r.Sync(ctx); res.Failed+res.Pending != 0 {
		t.Fatalf("sync: %+v", res)
	}
	e.assertRealized([]intent.LB{users, gains})
	// The endpoint replaced (a delete, a create), the one added (a create),
	// each load balancer deleted and created once (4). Written in the
	// batch, the one gaining both would be written twice: 9.
	if w := e.counters().Writes(); w != 7 {
		t.Errorf("%d HNS writes (%v), want 7", w, e.counters())
	}
}

// A load balancer whose missing backend a spare stands in for, the spare's
// endpoint created in the same Sync, is not written in the batch either:
// there the spare does not resolve yet, in its turn it does.
func TestSpareCreatedInTheSyncKeepsTheLoadBalancerOutOfTheBatch(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	const kept, added, spare = "10.244.2.21", "10.244.3.30", "10.244.4.40"
	r := e.started(lb("10.96.0.10", 80, rem(kept, "192.168.0.2")))
	d := lb("10.96.0.10", 80, loc("10.244.1.10"), rem(kept, "192.168.0.2"), rem(added, "192.168.0.3")) // .10 has no endpoint
	d.Spares = []intent.Backend{rem(spare, "192.168.0.4")}
	handOver(r, []intent.LB{d}, []intent.RemoteEndpoint{intent.EndpointOf(d.Spares[0])})
	if res := r.Sync(ctx); res.Failed != 0 {
		t.Fatalf("sync: %+v", res)
	}
	if got := e.backendIPs(e.hnsLB(d.Key)); !slices.Equal(got, []string{kept, added, spare}) {
		t.Fatalf("backends %v, want %s, %s and the spare %s", got, kept, added, spare)
	}
	// Two endpoints created, the load balancer deleted and created once.
	if w := e.counters().Writes(); w != 4 {
		t.Errorf("%d HNS writes (%v), want 4", w, e.counters())
	}
}

// A pod replaced where HNS cannot modify (its new pod's endpoint created,
// the load balancer deleted and created with it, the old pod's endpoint
// deleted) and the scale-down after it are one batch each, with the
// minimal writes, and the state file disowns what was deleted.
func TestPodReplacedAndScaleDownAreOneBatchEach(t *testing.T) {
	e, c, r, big := scaledUp(t)
	upsert(r, big)
	if res := r.Sync(ctx); res.Failed+res.Pending != 0 {
		t.Fatalf("scale-up: %+v", res)
	}
	replaced := lb("10.96.0.10", 80, append(slices.Clone(big.Backends[:5]), rem("10.244.5.10", "192.168.0.5"))...)
	for _, step := range []struct {
		name   string
		want   intent.LB
		writes int
	}{
		{"pod replaced", replaced, 4},                                      // an endpoint created, a delete and a create, an endpoint deleted
		{"scaled down", lb("10.96.0.10", 80, replaced.Backends[:2]...), 6}, // a delete and a create, 4 endpoints deleted
	} {
		e.hns.ResetCounters()
		c.reset()
		upsert(r, step.want)
		if res := r.Sync(ctx); res.Failed+res.Pending != 0 {
			t.Fatalf("%s: %+v", step.name, res)
		}
		if n := c.batches(); n != 1 {
			t.Errorf("%s: the writes ran on %d goroutines, want 1 (one batch)", step.name, n)
		}
		if w := e.counters().Writes(); w != step.writes {
			t.Errorf("%s: %d HNS writes, want %d", step.name, w, step.writes)
		}
		e.assertRealized([]intent.LB{step.want})
		e.assertStateFileMatchesHNS()
	}
}

// An endpoint freed by a load balancer's replacement is not deleted in the
// batch when that load balancer's delete fails: it stays while the old load
// balancer, still realized, uses it, and goes once the update is made.
func TestFreedEndpointWaitsForItsLoadBalancersDelete(t *testing.T) {
	e, c, r, big := scaledUp(t)
	upsert(r, big)
	if res := r.Sync(ctx); res.Failed+res.Pending != 0 {
		t.Fatalf("scale-up: %+v", res)
	}
	small := lb("10.96.0.10", 80, big.Backends[:2]...)
	e.hns.ResetCounters()
	c.failLBDels = true
	upsert(r, small)
	if res := r.Sync(ctx); res.Failed == 0 {
		t.Fatalf("sync with the load balancer's delete failing: %+v, want it failed", res)
	}
	if n := e.counters().Count(sim.OpDeleteEndpoint); n != 0 {
		t.Errorf("%d endpoints deleted while the load balancer using them stays, want none", n)
	}
	if got := e.hnsLB(big.Key); got == nil || len(got.HostComputeEndpoints) != 6 {
		t.Fatalf("HNS holds %+v, want the old load balancer and its 6 backends", got)
	}
	c.failLBDels = false
	e.converge(r)
	e.assertRealized([]intent.LB{small})
}

// freedDeletes frees an unwanted endpoint only when the batch replaces
// every realized load balancer that uses it, and waits for each of those
// deletes.
func TestFreedDeletesNeedEveryUserReplaced(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	const shared = "10.244.2.20"
	a := lb("10.96.0.10", 80, rem(shared, "192.168.0.2"), rem("10.244.2.21", "192.168.0.2"))
	b := lb("10.96.0.11", 80, rem(shared, "192.168.0.2"), rem("10.244.2.22", "192.168.0.2"))
	r := e.started(a, b)
	upsert(r, lb("10.96.0.10", 80, a.Backends[1]), lb("10.96.0.11", 80, b.Backends[1]))
	run := &syncRun{}
	r.setIPs(run, []string{shared})
	idA, idB := e.hnsLB(a.Key).ID, e.hnsLB(b.Key).ID
	if _, dels := r.freedDeletes(run, []pendingLB{{lbWrite: lbWrite{replaces: idA}}}); len(dels) != 0 {
		t.Errorf("with one of its two users replaced: %+v, want the endpoint kept", dels)
	}
	ips, dels := r.freedDeletes(run, []pendingLB{{lbWrite: lbWrite{replaces: idB}}, {lbWrite: lbWrite{replaces: idA}}})
	if len(dels) != 1 || ips[0] != shared || !slices.Equal(slices.Sorted(slices.Values(dels[0].after)), []int{0, 1}) {
		t.Errorf("with both users replaced: %q %+v, want %s after writes 0 and 1", ips, dels, shared)
	}
}

// Where HNS can modify, a scale step is one batch too: the scale-up's four
// endpoint creates and the load balancer's modify in place, the
// scale-down's modify and the deletes of the four endpoints it frees,
// each on one goroutine with the minimal writes. On 15.4, whose modifies
// are read back (kubernetes/kubernetes#131466), the modify stays in its
// turn: the endpoint writes' batch, then the modify, and, as the read-back
// finds the old backends, a delete and a create, each a call of its own.
func TestScaleStepIsOneBatchWhereHNSModifies(t *testing.T) {
	for _, c := range []struct {
		profile string
		batches int
		writes  int // modifies and endpoint writes per step
	}{{sim.ProfileWS2025, 1, 5}, {sim.ProfileWS2025Mod4, 4, 5}} {
		e, calls, r, big := scaledUpOn(t, c.profile, func(o *Options) { o.Modify = ModifyEnabled })
		small := lb(big.Key.VIP, big.Key.Port, big.Backends[:2]...)
		id := e.hnsLB(big.Key).ID
		for _, step := range []intent.LB{big, small} {
			calls.reset()
			e.hns.ResetCounters()
			upsert(r, step)
			if res := r.Sync(ctx); res.Failed+res.Pending != 0 || res.Updated != 1 {
				t.Fatalf("%s: sync to %d backends: %+v", c.profile, len(step.Backends), res)
			}
			if n := calls.batches(); n != c.batches {
				t.Errorf("%s: a step to %d backends ran its writes on %d goroutines, want %d", c.profile, len(step.Backends), n, c.batches)
			}
			if w := e.counters().Count(sim.OpUpdateLoadBalancer) + e.counters().Count(sim.OpCreateEndpoint) + e.counters().Count(sim.OpDeleteEndpoint); w != c.writes {
				t.Errorf("%s: %d modifies and endpoint writes, want %d: %v", c.profile, w, c.writes, e.counters().Calls)
			}
			e.assertRealized([]intent.LB{step})
		}
		if c.profile == sim.ProfileWS2025 && e.hnsLB(big.Key).ID != id {
			t.Errorf("the load balancer was replaced, not modified")
		}
		e.assertStateFileMatchesHNS()
	}
}

// A modify made ahead that HNS refuses is judged in the load balancer's
// turn as one made there: not implemented turns modify off and replaces
// the load balancer; a missing reference whose load balancer is gone
// creates it anew. Nothing is left half done.
func TestModifyMadeAheadFailsIntoItsTurn(t *testing.T) {
	t.Run("not implemented", func(t *testing.T) {
		e, calls, r, big := scaledUpOn(t, sim.ProfileWS2025, nil)
		calls.updateErr = hnslb.NewError("modify_load_balancer", hnslb.CodeNotImplemented, "injected")
		upsert(r, big)
		if res := r.Sync(ctx); res.Failed+res.Pending != 0 || res.Updated != 1 {
			t.Fatalf("sync: %+v", res)
		}
		if c := e.counters(); c.Count(sim.OpDeleteLoadBalancer) != 1 || c.Count(sim.OpCreateLoadBalancer) != 1 {
			t.Errorf("want the refused modify followed by a delete and a create: %v", c.Calls)
		}
		if !r.modifyTurnedOff {
			t.Error("modify not turned off after HNS answered not implemented")
		}
		e.assertRealized([]intent.LB{big})
		e.assertStateFileMatchesHNS()
	})
	t.Run("vanished", func(t *testing.T) {
		e, _, r, big := scaledUpOn(t, sim.ProfileWS2025, nil)
		if err := e.hns.DeleteLoadBalancerOutOfBand(e.hnsLB(big.Key).ID); err != nil {
			t.Fatal(err)
		}
		upsert(r, big)
		e.converge(r)
		e.assertRealized([]intent.LB{big})
		e.assertStateFileMatchesHNS()
	})
}

// A modify made ahead that its turn did not take (the load balancer's
// backends changed since) is what HNS holds: it is recorded as realized,
// never deleted as an unused create would be, and synced again.
func TestUntakenModifyIsRealizedNotDeleted(t *testing.T) {
	e, _, r, big := scaledUpOn(t, sim.ProfileWS2025, nil)
	small := lb(big.Key.VIP, big.Key.Port, big.Backends[:1]...)
	id := e.hnsLB(big.Key).ID
	doc := BuildLB(&small, []string{e.hnsLB(big.Key).HostComputeEndpoints[0]})
	got, err := e.hns.UpdateLoadBalancer(ctx, id, doc)
	if err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	run := &syncRun{ctx: ctx, lbCreates: map[intent.LBKey]createdLB{big.Key: {doc: doc, lb: got, modified: true}}}
	e.hns.ResetCounters()
	r.dropUnusedCreates(run)
	realized := r.lbs[big.Key].realized
	r.mu.Unlock()
	if c := e.counters(); c.Writes() != 0 {
		t.Errorf("dropping an untaken modify wrote to HNS: %v", c.Calls)
	}
	if realized != doc {
		t.Errorf("realized %+v, want the document the modify wrote", realized)
	}
	if e.hnsLB(big.Key) == nil || e.hnsLB(big.Key).ID != id {
		t.Fatal("the modified load balancer is gone")
	}
	upsert(r, big)
	e.converge(r)
	e.assertRealized([]intent.LB{big})
}
