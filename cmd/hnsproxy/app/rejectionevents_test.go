package app

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"

	hnsevents "github.com/hnsproxy/hnsproxy/events"
	"github.com/hnsproxy/hnsproxy/healthcheck"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/proxier"
	"github.com/hnsproxy/hnsproxy/reconciler"
)

// A foreign load balancer on a tenant's frontend is the proxier's
// ForeignLoadBalancerConflict (SyncResult.ForeignHeld), one per conflict.
// Its status error is no HNS rejection (while the holder stays, hnsproxy
// does not even ask HNS), so it raises no HNSLoadBalancerRejected as well:
// one condition, one Warning.
func TestForeignHeldFrontendIsNotAlsoAnHNSRejection(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_800_000_000, 0))
	health := healthcheck.NewProxyHealthServer(clk, time.Minute, nil)
	key := intent.LBKey{Family: intent.IPv4, VIP: "192.0.2.10", Protocol: hnslb.ProtocolTCP, Port: 80}
	lb := intent.LB{Key: key, Owner: "shop/tenant:http"}
	src := statuses{lbs: []reconciler.Status{{Key: key, Owner: lb.Owner, Desired: &lb, State: reconciler.StateError}}}
	rec := events.NewFakeRecorder(10)
	obs := newObserver(nil, health, nil, src, hnsevents.NewReporter(fakeBroadcaster{rec: rec}, "win-1"))
	held := &reconciler.ForeignFrontendError{Key: key, ID: "3f1c9a2e-foreign", Origin: intent.OriginExternalIP}
	for range 3 {
		obs.SyncDone(proxier.SyncStats{Start: clk.Now(), End: clk.Now(), Result: reconciler.SyncResult{
			Failed:      1,
			Errors:      []reconciler.ObjectError{{Kind: reconciler.KindLoadBalancer, Name: key.String(), Err: held}},
			ForeignHeld: []reconciler.ForeignFrontend{{Key: key, ID: held.ID}},
		}})
	}
	for len(rec.Events) > 0 {
		if ev := <-rec.Events; strings.Contains(ev, hnsevents.ReasonLoadBalancerRejected) {
			t.Errorf("a foreign holder raised %q besides the proxier's ForeignLoadBalancerConflict", ev)
		}
	}
}

// A rejected load balancer whose Service is deleted is no longer reported:
// the Service created again and refused the same way is a new condition,
// with a Warning of its own.
func TestRejectionOfARecreatedServiceIsReportedAgain(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_800_000_000, 0))
	health := healthcheck.NewProxyHealthServer(clk, time.Minute, nil)
	key := intent.LBKey{Family: intent.IPv4, VIP: "10.96.0.10", Protocol: hnslb.ProtocolTCP, Port: 80}
	lb := intent.LB{Key: key, Owner: "shop/web:http"}
	src := &statuses{lbs: []reconciler.Status{{Key: key, Owner: lb.Owner, Desired: &lb, State: reconciler.StateError}}}
	rec := events.NewFakeRecorder(10)
	obs := newObserver(nil, health, nil, src, hnsevents.NewReporter(fakeBroadcaster{rec: rec}, "win-1"))
	refused := reconciler.ObjectError{Kind: reconciler.KindLoadBalancer, Name: key.String(),
		Err: hnslb.NewError("CreateLoadBalancer", hnslb.CodeInvalidParameter, "The parameter is incorrect.")}
	sync := func(errs ...reconciler.ObjectError) {
		obs.SyncDone(proxier.SyncStats{Start: clk.Now(), End: clk.Now(), Result: reconciler.SyncResult{Failed: len(errs), Errors: errs}})
	}
	sync(refused)
	saved := src.lbs
	src.lbs = nil // the Service is deleted: its load balancer leaves the statuses
	sync()
	src.lbs = saved // created again, and refused again
	sync(refused)
	if len(rec.Events) != 2 {
		t.Errorf("%d HNSLoadBalancerRejected events, want one per Service life", len(rec.Events))
	}
}

// refusals is an observer over n+1 load balancers, shop/svc-<i>:http on
// 10.96.0.<i+1>, whose events land in rec.
type refusals struct {
	t   *testing.T
	clk *clocktesting.FakeClock
	src *statuses
	obs *observer
	rec *events.FakeRecorder
}

func newRefusals(t *testing.T, n int) *refusals {
	clk := clocktesting.NewFakeClock(time.Unix(1_800_000_000, 0))
	health := healthcheck.NewProxyHealthServer(clk, time.Minute, nil)
	src := &statuses{lbs: make([]reconciler.Status, n+1)}
	rec := events.NewFakeRecorder(10 * (n + 1))
	return &refusals{t: t, clk: clk, src: src, rec: rec,
		obs: newObserver(nil, health, nil, src, hnsevents.NewReporter(fakeBroadcaster{rec: rec}, "win-1"))}
}

// failing marks load balancers from..to-1 refused with code and returns
// their errors.
func (h *refusals) failing(code hnslb.ErrorCode, from, to int) []reconciler.ObjectError {
	var errs []reconciler.ObjectError
	for i := from; i < to; i++ {
		key := intent.LBKey{Family: intent.IPv4, VIP: fmt.Sprintf("10.96.0.%d", i+1), Protocol: hnslb.ProtocolTCP, Port: 80}
		lb := intent.LB{Key: key, Owner: fmt.Sprintf("shop/svc-%d:http", i)}
		h.src.lbs[i] = reconciler.Status{Key: key, Owner: lb.Owner, Desired: &lb, State: reconciler.StateError}
		errs = append(errs, reconciler.ObjectError{Kind: reconciler.KindLoadBalancer, Name: key.String(),
			Err: hnslb.NewError("CreateLoadBalancer", code, "Unspecified error")})
	}
	return errs
}

// programmed marks load balancers from..to-1 programmed.
func (h *refusals) programmed(from, to int) {
	for i := from; i < to; i++ {
		h.src.lbs[i].State = reconciler.StateDone
	}
}

func (h *refusals) sync(errs []reconciler.ObjectError) {
	h.obs.SyncDone(proxier.SyncStats{Start: h.clk.Now(), End: h.clk.Now(), Result: reconciler.SyncResult{Failed: len(errs), Errors: errs}})
}

// check drains the recorder and compares the events on Services and on
// the Node with want.
func (h *refusals) check(when string, wantServices, wantNode int) {
	h.t.Helper()
	onServices, onNode := 0, 0
	for len(h.rec.Events) > 0 {
		if ev := <-h.rec.Events; strings.Contains(ev, "load balancers with") {
			onNode++
		} else {
			onServices++
		}
	}
	if onServices != wantServices || onNode != wantNode {
		h.t.Errorf("%s: %d events on Services and %d on the Node, want %d and %d", when, onServices, onNode, wantServices, wantNode)
	}
}

// The events of one HNS error code are bounded while load balancers are
// refused with it: rejectionsRaisedPerCode on their Services, then one on
// the Node, then none, however many more. Another code has its own bound,
// and once no load balancer is refused with a code, a new refusal with it
// is raised on its Service again, and a new storm of it is bounded afresh
// (not silenced as the end of the last one).
func TestRejectionsOfOneCodeAreBoundedUntilTheyEnd(t *testing.T) {
	const n = 3 * rejectionsRaisedPerCode
	h := newRefusals(t, n)
	eFail := h.failing(codeUnspecified, 0, n)
	h.sync(eFail)
	h.check("HNS refuses every load balancer", rejectionsRaisedPerCode, 1)
	h.sync(eFail)
	h.check("refused again", 0, 0)
	h.sync(h.failing(hnslb.CodeInvalidParameter, n, n+1))
	h.check("another code meanwhile", 1, 0)
	h.programmed(0, n)
	h.sync(nil)
	h.sync(h.failing(codeUnspecified, 0, n))
	h.check("a new storm once none was refused with the code", rejectionsRaisedPerCode, 1)
	h.programmed(0, n)
	h.sync(nil)
	h.sync(h.failing(codeUnspecified, 0, 1))
	h.check("refused again after every load balancer of the code was programmed", 1, 0)
}

// One load balancer HNS keeps refusing with E_FAIL (its own problem, for
// weeks) is no storm: refusals with E_FAIL that come and go meanwhile, one
// at a time, are each raised on their Service. A bound that counted every
// refusal since the code last had none would go silent after ten of them,
// for as long as the one lasts, long after the Node's Warning expired
// (kube-apiserver --event-ttl, an hour by default).
func TestOneLastingRefusalDoesNotSilenceLaterOnes(t *testing.T) {
	const later = 2 * rejectionsRaisedPerCode
	h := newRefusals(t, later)
	h.sync(h.failing(codeUnspecified, 0, 1))
	h.check("the lasting refusal", 1, 0)
	for i := 1; i <= later; i++ {
		h.sync(h.failing(codeUnspecified, i, i+1))
		h.programmed(i, i+1)
		h.sync(nil)
		h.check(fmt.Sprintf("refusal %d beside the lasting one", i), 1, 0)
	}
}

// Once no more than rejectionsRaisedPerCode load balancers are refused
// with a code, those still refused that were raised nowhere are raised on
// their Services: a storm that leaves a few behind does not leave them
// unreported once the Node's Warning has expired.
func TestRefusalsLeftAfterAStormAreRaisedOnTheirServices(t *testing.T) {
	const n, left = 3 * rejectionsRaisedPerCode, rejectionsRaisedPerCode / 2
	h := newRefusals(t, n)
	h.sync(h.failing(codeUnspecified, 0, n))
	h.check("HNS refuses every load balancer", rejectionsRaisedPerCode, 1)
	h.programmed(0, n-left) // the last ones were raised nowhere
	h.sync(nil)
	h.check("a few left refused", left, 0)
	h.sync(nil)
	h.check("the few refused again", 0, 0)
}

// The bound counts load balancers, and one Service port has several (its
// cluster IP, node port, external and ingress IPs, each family's): the
// Node's Warning for twelve refused load balancers of four Service ports
// must not say more than ten Service ports are refused.
func TestNodeRejectionCountsLoadBalancersNotServicePorts(t *testing.T) {
	const n, perPort = 12, 3
	h := newRefusals(t, n)
	errs := h.failing(codeUnspecified, 0, n)
	for i := range n {
		h.src.lbs[i].Owner = fmt.Sprintf("shop/svc-%d:http", i/perPort)
	}
	h.sync(errs)
	var onNode []string
	for len(h.rec.Events) > 0 {
		if ev := <-h.rec.Events; !strings.Contains(ev, "port http (") {
			onNode = append(onNode, ev)
		}
	}
	if len(onNode) != 1 || !strings.Contains(onNode[0], fmt.Sprintf("more than %d load balancers with 0x80004005", rejectionsRaisedPerCode)) ||
		strings.Contains(onNode[0], "Service ports") {
		t.Errorf("Node events for %d refused load balancers of %d Service ports: %q, want one counting load balancers", n, n/perPort, onNode)
	}
}

// readCounted is a status source that counts reads of the whole status.
type readCounted struct {
	statuses
	reads int
}

func (s *readCounted) StatusSnapshot() *reconciler.StatusSnapshot {
	s.reads++
	return s.statuses.StatusSnapshot()
}

// An HNS outage fails every load balancer as unavailable, and the restart
// may drop the remote endpoints they use; neither is a rejection, so the
// observer does not read the whole status for them: the
// reconciler's first reader has it hand over every object's status from
// then on (at 10,000 Services on overlay some 5 MiB, held for the
// process's life). A refusal is read and reported as before.
func TestAnHNSRestartReadsNoStatus(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_800_000_000, 0))
	health := healthcheck.NewProxyHealthServer(clk, time.Minute, nil)
	key := intent.LBKey{Family: intent.IPv4, VIP: "10.96.0.10", Protocol: hnslb.ProtocolTCP, Port: 80}
	lb := intent.LB{Key: key, Owner: "shop/web:http"}
	src := &readCounted{statuses: statuses{lbs: []reconciler.Status{{Key: key, Owner: lb.Owner, Desired: &lb, State: reconciler.StateError}}}}
	rec := events.NewFakeRecorder(10)
	obs := newObserver(nil, health, nil, src, hnsevents.NewReporter(fakeBroadcaster{rec: rec}, "win-1"))
	sync := func(errs ...reconciler.ObjectError) {
		obs.SyncDone(proxier.SyncStats{Start: clk.Now(), End: clk.Now(), Result: reconciler.SyncResult{Failed: len(errs), Errors: errs}})
	}
	for _, code := range []hnslb.ErrorCode{hnslb.CodeRPCServerUnavailable, hnslb.CodeManagerStopped, hnslb.CodeTimeout} {
		sync(reconciler.ObjectError{Kind: reconciler.KindLoadBalancer, Name: key.String(), Err: hnslb.NewError("CreateLoadBalancer", code, "HNS is down")},
			reconciler.ObjectError{Kind: reconciler.KindRemoteEndpoint, Name: "10.244.2.7", Err: hnslb.NewError("CreateEndpoint", code, "HNS is down")})
	}
	if src.reads != 0 || len(rec.Events) != 0 {
		t.Fatalf("an HNS outage: %d reads of the whole status, %d events; want none", src.reads, len(rec.Events))
	}
	// HNS back without the remote endpoints it held: a load balancer's
	// create names one it dropped. The reconciler makes it again; no
	// refusal of the Service's either.
	for _, gone := range []*hnslb.Error{
		hnslb.NewError("CreateLoadBalancer", hnslb.CodeEndpointNotFound, "The endpoint was not found. backend endpoint ID"),
		hnslb.NewError("CreateLoadBalancer", hnslb.CodePortNotFound, "The switch-port was not found."),
		hnslb.NewError("UpdateLoadBalancer", hnslb.CodeNotFound, "Element not found."),
	} {
		sync(reconciler.ObjectError{Kind: reconciler.KindLoadBalancer, Name: key.String(), Err: gone})
	}
	if src.reads != 0 || len(rec.Events) != 0 {
		t.Fatalf("backends HNS dropped: %d reads of the whole status, %d events; want none", src.reads, len(rec.Events))
	}
	// A reference HNS does not take in the document need not pass.
	sync(reconciler.ObjectError{Kind: reconciler.KindLoadBalancer, Name: key.String(),
		Err: hnslb.NewError("CreateLoadBalancer", hnslb.CodeInvalidJSONReference, "The reference is invalid in the JSON document.")})
	if src.reads == 0 || len(rec.Events) != 1 {
		t.Errorf("a refusal: %d reads of the whole status, %d events; want it read and one event", src.reads, len(rec.Events))
	}
}

// A status still Gathering (the reconciler's first look after nobody read
// for a while met a Sync) holds no load balancer: taken for the status,
// the refusals reported would be forgotten as if their Services were
// deleted, and raised again at the next read. The observer reads again
// at the next Sync instead.
func TestAGatheringStatusForgetsNoRefusal(t *testing.T) {
	h := newRefusals(t, 0)
	refusals := h.failing(hnslb.CodeInvalidParameter, 0, 1)
	h.src.lbs[0].MissingBackends = []string{"10.244.3.31"}
	refusals = append(refusals, reconciler.ObjectError{Kind: reconciler.KindRemoteEndpoint, Name: "10.244.3.31",
		Err: hnslb.NewError("CreateEndpoint", hnslb.CodeInvalidParameter, "The parameter is incorrect.")})
	h.sync(refusals)
	h.check("a refused load balancer and a refused backend", 2, 0)
	h.src.gathering = true
	h.sync(refusals)
	h.src.gathering = false
	h.sync(refusals)
	h.check("the same refusals after a read of a status still Gathering", 0, 0)
}

// A load balancer HNS refused before and now refuses with another error
// (one cause fixed, another showing) is news: its Service gets another
// Warning, naming the new error.
func TestARefusalWithAnotherErrorIsReportedAgain(t *testing.T) {
	h := newRefusals(t, 1)
	h.sync(h.failing(hnslb.CodeInvalidParameter, 0, 1))
	h.sync(h.failing(hnslb.CodeInvalidParameter, 0, 1))
	h.check("refused twice with one error", 1, 0)
	h.sync(h.failing(hnslb.CodePortAlreadyExists, 0, 1))
	if n := len(h.rec.Events); n != 1 {
		t.Fatalf("%d events once refused with another error, want 1", n)
	}
	if ev := <-h.rec.Events; !strings.Contains(ev, "0x803b0013") {
		t.Errorf("the Warning for the new error says %q, want its code 0x803b0013", ev)
	}
}
