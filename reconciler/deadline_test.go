package reconciler

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"k8s.io/klog/v2/ktesting"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// hangWatch records timed-out operations and abandoned calls' returns.
type hangWatch struct {
	mu       sync.Mutex
	timedOut []string
	returned chan struct{}
}

// withHangWatch makes e's reconcilers report to a new hangWatch.
func (e *env) withHangWatch(maxAbandoned int) *hangWatch {
	w := &hangWatch{returned: make(chan struct{}, 16)}
	e.tweak = func(o *Options) {
		o.MaxAbandonedCalls = maxAbandoned
		o.CallTimedOut = func(op string) {
			w.mu.Lock()
			w.timedOut = append(w.timedOut, op)
			w.mu.Unlock()
		}
	}
	return w
}

func (w *hangWatch) ops() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.timedOut)
}

// watch hooks w into r's deadlines.
func (w *hangWatch) watch(r *Reconciler) *Reconciler {
	r.client.onReturn = func() { w.returned <- struct{}{} }
	return r
}

// pastHangs runs call while `hung` of its HNS calls hang: each time one
// more is held, the fake clock passes the call deadline, so it abandons
// that call and goes on.
func pastHangs[T any](e *env, hung int, call func() T) T {
	e.t.Helper()
	done := make(chan T, 1)
	held := e.hns.Held()
	go func() { done <- call() }()
	for i := 1; i <= hung; i++ {
		if err := e.hns.WaitHeld(ctx, held+i); err != nil {
			e.t.Fatal(err)
		}
		e.clock.Step(DefaultCallTimeout)
	}
	return <-done
}

// syncPastHangs is pastHangs for one Sync.
func (e *env) syncPastHangs(r *Reconciler, hung int) SyncResult {
	return pastHangs(e, hung, func() SyncResult { return r.Sync(ctx) })
}

// readNetwork is Network's error.
func readNetwork(r *Reconciler) func() error {
	return func() error {
		_, err := r.Network(ctx)
		return err
	}
}

// F7: a hung HNS call times out, is reported, and the rest of the node's
// programming goes on; the object waits for the abandoned call, which is
// never issued twice, and is finished once it returns.
func TestHungCallTimesOutAndTheRestGoesOn(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	w := e.withHangWatch(0)
	e.local("10.244.1.10")
	e.local("10.244.1.11")
	gone := lb("10.96.0.10", 80, loc("10.244.1.10"))
	r := w.watch(e.started(gone))

	e.hns.SetFaults(sim.Faults{Hang: []sim.Op{sim.OpDeleteLoadBalancer}})
	added := lb("10.96.0.20", 80, loc("10.244.1.11"))
	remove(r, gone.Key)
	upsert(r, added)
	res := e.syncPastHangs(r, 1)
	if res.Created != 1 || res.Failed != 1 {
		t.Fatalf("sync with a hung delete: %+v", res)
	}
	if got := w.ops(); !slices.Equal(got, []string{"delete_load_balancer"}) {
		t.Errorf("timed-out operations %v, want [delete_load_balancer]", got)
	}
	if e.hnsLB(added.Key) == nil {
		t.Error("the load balancer added beside the hung delete was not created")
	}
	if err := res.Errors[0].Err; !hnslb.IsUnavailable(err) || res.Errors[0].Name != gone.Key.String() {
		t.Errorf("error %v for %s, want a timeout for %s", err, res.Errors[0].Name, gone.Key)
	}

	// While the abandoned delete runs, its object waits: no second call.
	e.clock.Step(DefaultRetryMax)
	if res := r.Sync(ctx); res.Failed != 0 || e.hns.Held() != 1 {
		t.Fatalf("sync while the call is abandoned: %+v, %d calls held", res, e.hns.Held())
	}
	if st := statusOf(r, gone.Key); !strings.Contains(st.LastError, "abandoned") {
		t.Errorf("status while waiting: %+v", st)
	}

	e.hns.SetFaults(sim.Faults{})
	<-w.returned
	e.converge(r)
	e.assertRealized([]intent.LB{added})
	if n := len(r.Statuses()); n != 1 {
		t.Errorf("%d statuses, want 1", n)
	}
}

// hungCreate is a started reconciler, watched, that was just handed one
// load balancer while faults hang its create.
func hungCreate(t *testing.T, faults sim.Faults) (*env, *hangWatch, *Reconciler, intent.LB) {
	e := newEnv(t, sim.ProfileWS2022)
	w := e.withHangWatch(0)
	e.local("10.244.1.10")
	r := w.watch(e.started())
	e.hns.SetFaults(faults)
	want := lb("10.96.0.10", 80, loc("10.244.1.10"))
	upsert(r, want)
	return e, w, r, want
}

// A create that HNS applied but whose reply hung past the deadline is
// adopted once the call returns: never duplicated, never leaked, and owned.
func TestLateCreateIsAdoptedNotDuplicated(t *testing.T) {
	e, w, r, want := hungCreate(t, sim.Faults{HangReply: []sim.Op{sim.OpCreateLoadBalancer}})
	if res := e.syncPastHangs(r, 1); res.Failed != 1 {
		t.Fatalf("sync with a hung create: %+v", res)
	}
	held := e.hnsLB(want.Key)
	if held == nil {
		t.Fatal("HangReply: HNS did not apply the create")
	}
	e.hns.SetFaults(sim.Faults{})
	<-w.returned
	e.converge(r)
	e.assertRealized([]intent.LB{want})
	if st := statusOf(r, want.Key); st.RealizedID != held.ID {
		t.Errorf("status %+v, want the late create's %s adopted", st, held.ID)
	}
	saved, err := loadState(e.stateFile)
	if err != nil || !slices.Contains(saved.LoadBalancers, held.ID) {
		t.Errorf("state file %+v (%v) does not own %s", saved, err, held.ID)
	}
}

// Abandoned calls are bounded: past MaxAbandonedCalls a call fails at once
// without reaching HNS, so a wedged HNS costs a Sync a few deadlines, not
// one per object. Here two single creates hang (one Sync each); then a
// Sync's batch of two creates fails without a call.
func TestAbandonedCallsAreBounded(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	w := e.withHangWatch(2)
	var want []intent.LB
	for i, ip := range []string{"10.244.1.10", "10.244.1.11", "10.244.1.12", "10.244.1.13"} {
		e.local(ip)
		want = append(want, lb("10.96.0.1"+string(rune('0'+i)), 80, loc(ip)))
	}
	r := w.watch(e.started())
	e.hns.SetFaults(sim.Faults{Hang: []sim.Op{sim.OpCreateLoadBalancer}})
	for i := range 2 {
		upsert(r, want[:i+1]...)
		if res := e.syncPastHangs(r, 1); res.Failed != 1 {
			t.Fatalf("sync %d with a hung create: %+v", i, res)
		}
	}
	upsert(r, want...)
	e.clock.Step(DefaultRetryMax)
	res := r.Sync(ctx)
	// The first two wait for their abandoned calls; the other two fail.
	if res.Failed != 2 || res.Created != 0 || e.hns.Held() != 2 || len(w.ops()) != 2 {
		t.Fatalf("sync against a wedged HNS: %+v, %d calls held, timed out %v", res, e.hns.Held(), w.ops())
	}
	for _, oe := range res.Errors {
		if !hnslb.IsUnavailable(oe.Err) {
			t.Errorf("%s: %v, want a timeout (unavailable)", oe.Name, oe.Err)
		}
	}
	e.hns.SetFaults(sim.Faults{})
	<-w.returned
	<-w.returned
	e.converge(r)
	e.assertRealized(want)
}

// Liveness reads HNSActivity: a Sync stuck in a hung call is waiting on HNS
// (not dead), and the call's abandonment counts as the last call ending.
func TestHNSActivityShowsAHungCall(t *testing.T) {
	e, w, r, _ := hungCreate(t, sim.Faults{Hang: []sim.Op{sim.OpCreateLoadBalancer}})
	done := make(chan SyncResult, 1)
	go func() { done <- r.Sync(ctx) }()
	if err := e.hns.WaitHeld(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if waiting, _ := r.HNSActivity(); !waiting {
		t.Error("HNSActivity during a hung call: not waiting")
	}
	e.clock.Step(DefaultCallTimeout)
	<-done
	if waiting, last := r.HNSActivity(); waiting || !last.Equal(e.clock.Now()) {
		t.Errorf("HNSActivity after the call was abandoned = %v, %v; want false, %v", waiting, last, e.clock.Now())
	}
	e.hns.SetFaults(sim.Faults{})
	<-w.returned
}

// A create abandoned at its deadline that HNS applied, for a load balancer
// whose desired document changed meanwhile, is claimed as ours and brought
// to the new document: never taken for a foreign blocker.
func TestLateCreateOfAnOlderDocumentIsClaimed(t *testing.T) {
	e, w, r, want := hungCreate(t, sim.Faults{HangReply: []sim.Op{sim.OpCreateLoadBalancer}})
	if res := e.syncPastHangs(r, 1); res.Failed != 1 {
		t.Fatalf("sync with a hung create: %+v", res)
	}
	if e.hnsLB(want.Key) == nil {
		t.Fatal("HangReply: HNS did not apply the create")
	}
	e.local("10.244.1.11")
	want.Backends = append(want.Backends, loc("10.244.1.11"))
	upsert(r, want)
	e.hns.SetFaults(sim.Faults{})
	<-w.returned
	e.hns.ResetCounters()
	e.converge(r)
	e.assertRealized([]intent.LB{want})
	c := e.counters()
	if c.Count(sim.OpCreateLoadBalancer) != 1 || c.Count(sim.OpDeleteLoadBalancer) != 1 {
		t.Errorf("after the late create returned: %v; want it replaced once (delete and create, no modify on ws2022)", c.Calls)
	}
	if c.CountResult(sim.OpCreateLoadBalancer, "PortAlreadyExists") != 0 {
		t.Errorf("the late create's load balancer was met as a blocker: %v", c.Calls)
	}
	if st := statusOf(r, want.Key); st.State != StateDone {
		t.Errorf("status %+v", st)
	}
}

// The overlay's remote subnets are read through Network, which has a call
// deadline too: a hung read cannot stop the sync loop.
func TestNetworkReadHasADeadline(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	w := e.withHangWatch(0)
	r := w.watch(e.started())
	e.hns.SetFaults(sim.Faults{Hang: []sim.Op{sim.OpGetNetwork}})
	if err := pastHangs(e, 1, readNetwork(r)); !hnslb.IsUnavailable(err) {
		t.Errorf("hung network read = %v, want a timeout", err)
	}
	if got := w.ops(); !slices.Equal(got, []string{"get_network"}) {
		t.Errorf("timed-out operations %v", got)
	}
	e.hns.SetFaults(sim.Faults{})
	<-w.returned
	if n, err := r.Network(ctx); err != nil || n.ID != e.netID {
		t.Errorf("Network = %v, %v", n, err)
	}
}

// While a call hangs, a listing gets the call deadline, not the listing's
// longer one: a Sync that needs a listing is not held for minutes by an HNS
// that already hangs.
func TestListingsGetTheCallDeadlineWhileACallHangs(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	w := e.withHangWatch(0)
	r := w.watch(e.started())
	e.hns.SetFaults(sim.Faults{Hang: []sim.Op{sim.AnyOp}})
	pastHangs(e, 1, readNetwork(r))
	// One step of the call deadline, far less than DefaultListTimeout.
	if err := pastHangs(e, 1, func() error { return r.Repair(ctx) }); !hnslb.IsUnavailable(err) {
		t.Errorf("repair while a call hangs = %v, want its listing timed out", err)
	}
	e.hns.SetFaults(sim.Faults{})
	<-w.returned
	<-w.returned
}

// A Sync's endpoint creates go to HNS in one batch (one hand-over, not one
// per call), each call still with its deadline: a hung create is abandoned
// at its deadline, the creates after it are not made, and every one is
// retried; the load balancer then gets all its backends.
func TestBatchedEndpointCreatesKeepTheCallDeadline(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	w := e.withHangWatch(0)
	e.local("10.244.1.10")
	r := w.watch(e.started())
	want := lb("10.96.0.10", 80, loc("10.244.1.10"),
		rem("10.244.2.20", "192.168.0.2"), rem("10.244.2.21", "192.168.0.2"), rem("10.244.2.22", "192.168.0.2"))
	e.hns.SetFaults(sim.Faults{Hang: []sim.Op{sim.OpCreateEndpoint}})
	upsert(r, want)
	res := e.syncPastHangs(r, 1)
	if got := w.ops(); !slices.Equal(got, []string{"create_endpoint"}) {
		t.Errorf("timed-out operations %v, want one create_endpoint", got)
	}
	// The simulator counts a held call when it returns.
	if n := e.counters().Count(sim.OpCreateEndpoint); n != 0 || e.hns.Held() != 1 {
		t.Errorf("%d endpoint creates returned, %d held; want the hung one only, made", n, e.hns.Held())
	}
	var endpointErrs int
	for _, oe := range res.Errors {
		if oe.Kind == KindRemoteEndpoint {
			endpointErrs++
			if !hnslb.IsUnavailable(oe.Err) {
				t.Errorf("%s: %v, want a timeout (unavailable), retried", oe.Name, oe.Err)
			}
		}
	}
	if endpointErrs != 3 {
		t.Errorf("sync with a hung endpoint create: %+v; want 3 endpoint errors", res)
	}

	e.hns.SetFaults(sim.Faults{})
	<-w.returned
	e.converge(r)
	e.assertRealized([]intent.LB{want})
}

// refuseFrontend fails the first create of a load balancer on vip with a
// missing-reference error (HNS's answer when a backend endpoint is gone).
type refuseFrontend struct {
	hnslb.Client
	vip     string
	refused bool
}

func (c *refuseFrontend) CreateLoadBalancer(ctx context.Context, lb *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	if !c.refused && slices.Contains(lb.FrontendVIPs, c.vip) {
		c.refused = true
		return nil, hnslb.NewError("create_load_balancer", hnslb.CodePortNotFound, "the switch-port was not found")
	}
	return c.Client.CreateLoadBalancer(ctx, lb)
}

// A Sync's load balancer creates are made ahead in one batch; one whose
// turn wants another document (an earlier create's missing reference made
// a local backend unknown since) is deleted and made again, and one whose
// turn wants none is deleted: nothing made ahead stays unowned on a
// frontend, and everything converges after.
func TestLoadBalancersMadeAheadFollowTheirTurn(t *testing.T) {
	e, r, res, lbs := startWithTurnsMadeAhead(t, lb, nil)
	refused, changed, emptied := lbs[0], lbs[1], lbs[2]
	if res.Failed != 1 {
		t.Fatalf("first sync: %+v, want the refused create failed", res)
	}
	for _, got := range e.snapshot().LoadBalancers {
		if _, ours := r.ownedLBs[got.ID]; !ours {
			t.Errorf("load balancer %s on %v left in HNS unowned", got.ID, got.FrontendVIPs)
		}
	}
	if got := e.hnsLB(emptied.Key); got != nil {
		t.Errorf("%s: the load balancer made ahead stayed, with no backend known now", emptied.Key)
	}
	if got := e.backendIPs(e.hnsLB(changed.Key)); !slices.Equal(got, []string{"10.244.1.11"}) {
		t.Errorf("%s holds backends %v, want only the one still known", changed.Key, got)
	}
	e.converge(r)
	e.assertRealized([]intent.LB{refused, changed, emptied})
}

// startWithTurnsMadeAhead starts a reconciler on three load balancers
// made ahead in one batch: the first create is refused for a missing
// reference, which makes a local backend unknown, so the second's turn
// wants another document and the third's none. The second and third are
// on frontends newLB makes (the first is on a cluster IP); wrap, if set,
// wraps the client under the refusal.
func startWithTurnsMadeAhead(t *testing.T, newLB func(string, uint16, ...intent.Backend) intent.LB, wrap func(hnslb.Client) hnslb.Client) (*env, *Reconciler, SyncResult, []intent.LB) {
	e, c, lbs := turnsMadeAhead(t, newLB, wrap)
	r, res := e.start(c, lbs...)
	return e, r, res, lbs
}

// turnsMadeAhead is startWithTurnsMadeAhead's node, client and load
// balancers, before the reconciler starts.
func turnsMadeAhead(t *testing.T, newLB func(string, uint16, ...intent.Backend) intent.LB, wrap func(hnslb.Client) hnslb.Client) (*env, hnslb.Client, []intent.LB) {
	e := newEnv(t, sim.ProfileWS2025)
	e.local("10.244.1.10")
	e.local("10.244.1.11")
	lbs := []intent.LB{lb("10.96.0.1", 80, loc("10.244.1.10")),
		newLB("10.96.0.2", 80, loc("10.244.1.10"), loc("10.244.1.11")), newLB("10.96.0.3", 80, loc("10.244.1.10"))}
	var c hnslb.Client = e.hns
	if wrap != nil {
		c = wrap(c)
	}
	return e, &refuseFrontend{Client: c, vip: "10.96.0.1"}, lbs
}

// At shutdown a batch stops: the running call is abandoned (its object
// busy until it returns), the calls after it are not made, and the results
// before it are kept.
func TestBatchStopsAtShutdown(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2025)
	d := newDeadlines(e.hns, e.options(), ktesting.NewLogger(t, ktesting.DefaultConfig))
	returned := make(chan struct{})
	d.onReturn = func() { close(returned) }
	started, release := make(chan struct{}), make(chan struct{})
	var madeAfter atomic.Bool // the call after the hung one must stay unmade
	calls := []func(context.Context) (int, error){
		func(context.Context) (int, error) { return 1, nil },
		func(context.Context) (int, error) { close(started); <-release; return 2, nil },
		func(context.Context) (int, error) { madeAfter.Store(true); return 3, nil },
	}
	stopping, stop := context.WithCancel(ctx)
	go func() { <-started; stop() }()
	out, errs := guardBatch(d, stopping, func(int) string { return "create_test" }, calls, []string{"ep a", "ep b", "ep c"})
	if out[0] != 1 || errs[0] != nil {
		t.Errorf("the call before the hung one: %v, %v; want its result kept", out[0], errs[0])
	}
	if !errors.Is(errs[1], context.Canceled) || errs[2] == nil {
		t.Errorf("errors %v; want the running call abandoned at shutdown and the next not made", errs)
	}
	if !d.busy("ep b") || d.busy("ep c") {
		t.Error("the abandoned call's object is not busy, or the unmade call's is")
	}
	close(release)
	<-returned
	if d.busy("ep b") {
		t.Error("the abandoned call returned, but its object stays busy")
	}
	if madeAfter.Load() {
		t.Error("the call after the abandoned one was made")
	}
}

// A Sync's deletes of unwanted remote endpoints go out in one batch under
// the call deadline: a hung one is abandoned, the rest of its batch is not
// called and is retried, the hung one's endpoint waits for it to return,
// and everything converges with nothing left behind.
func TestBatchedEndpointDeletesKeepTheCallDeadline(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	w := e.withHangWatch(0)
	e.local("10.244.1.10")
	big := lb("10.96.0.10", 80, loc("10.244.1.10"),
		rem("10.244.2.20", "192.168.0.2"), rem("10.244.2.21", "192.168.0.2"), rem("10.244.2.22", "192.168.0.2"))
	r := w.watch(e.started(big))
	small := lb("10.96.0.10", 80, loc("10.244.1.10"))
	e.hns.SetFaults(sim.Faults{Hang: []sim.Op{sim.OpDeleteEndpoint}})
	upsert(r, small)
	e.syncPastHangs(r, 1)
	if got := w.ops(); !slices.Equal(got, []string{"delete_endpoint"}) {
		t.Errorf("timed-out operations %v, want one delete_endpoint", got)
	}
	if n := e.counters().Count(sim.OpDeleteEndpoint); n != 0 || e.hns.Held() != 1 {
		t.Errorf("%d endpoint deletes returned, %d held; want the hung one only, the rest of its batch not called", n, e.hns.Held())
	}
	if got := len(e.snapshot().Endpoints); got != 1+3 {
		t.Errorf("HNS holds %d endpoints after the hung batch, want the local one and the 3 remote", got)
	}

	e.hns.SetFaults(sim.Faults{})
	<-w.returned
	e.converge(r)
	e.assertRealized([]intent.LB{small})
	st, err := loadState(e.stateFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.RemoteEndpoints) != 0 {
		t.Errorf("the state file still owns remote endpoints %v", st.RemoteEndpoints)
	}
}

// A batch stopped at shutdown between two calls (none running) answers
// every call it did not make with an error: a nil result with no error
// read as "created nothing, and succeeded", and a load balancer's create
// dereferenced it (a panic in CI, proxier tests, 2026-11-28). One call
// cancels the context; whether the caller then sees it during a later
// call or between two is a race, so each position is run many times.
func TestBatchStoppedBetweenCallsFailsTheCallsNotMade(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2025)
	d := newDeadlines(e.hns, e.options(), ktesting.NewLogger(t, ktesting.DefaultConfig))
	const n = 8
	for round := range 500 {
		stopping, stop := context.WithCancel(ctx)
		var made [n]atomic.Bool
		calls := make([]func(context.Context) (int, error), n)
		for i := range calls {
			calls[i] = func(context.Context) (int, error) {
				made[i].Store(true)
				if i == round%(n-1) {
					stop() // the caller sees it after this call, or during a later one
				}
				return i + 1, nil
			}
		}
		tokens := make([]string, n)
		for i := range tokens {
			tokens[i] = fmt.Sprintf("ep %d-%d", round, i)
		}
		out, errs := guardBatch(d, stopping, func(int) string { return "create_test" }, calls, tokens)
		stop()
		for i := range n {
			if !made[i].Load() && (errs[i] == nil || out[i] != 0) {
				t.Fatalf("round %d: call %d was not made, yet it answered %v, %v", round, i, out[i], errs[i])
			}
			if errs[i] == nil && out[i] != i+1 {
				t.Fatalf("round %d: call %d answered %v with no error, want its result %d", round, i, out[i], i+1)
			}
		}
	}
}
