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

// The events of one HNS error code are bounded while load balancers are
// refused with it: rejectionsRaisedPerCode on their Services, then one on
// the Node, then none, however many more. Another code has its own bound,
// and once no load balancer is refused with a code, a new refusal with it
// is raised on its Service again.
func TestRejectionsOfOneCodeAreBoundedUntilTheyEnd(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_800_000_000, 0))
	health := healthcheck.NewProxyHealthServer(clk, time.Minute, nil)
	const n = 3 * rejectionsRaisedPerCode
	src := &statuses{}
	failing := func(code hnslb.ErrorCode, from, to int) []reconciler.ObjectError {
		var errs []reconciler.ObjectError
		for i := from; i < to; i++ {
			key := intent.LBKey{Family: intent.IPv4, VIP: fmt.Sprintf("10.96.0.%d", i+1), Protocol: hnslb.ProtocolTCP, Port: 80}
			lb := intent.LB{Key: key, Owner: fmt.Sprintf("shop/svc-%d:http", i)}
			src.lbs[i] = reconciler.Status{Key: key, Owner: lb.Owner, Desired: &lb, State: reconciler.StateError}
			errs = append(errs, reconciler.ObjectError{Kind: reconciler.KindLoadBalancer, Name: key.String(),
				Err: hnslb.NewError("CreateLoadBalancer", code, "Unspecified error")})
		}
		return errs
	}
	src.lbs = make([]reconciler.Status, n+1)
	rec := events.NewFakeRecorder(10 * n)
	obs := newObserver(nil, health, nil, src, hnsevents.NewReporter(fakeBroadcaster{rec: rec}, "win-1"))
	sync := func(errs []reconciler.ObjectError) {
		obs.SyncDone(proxier.SyncStats{Start: clk.Now(), End: clk.Now(), Result: reconciler.SyncResult{Failed: len(errs), Errors: errs}})
	}
	drain := func() (onServices, onNode int) {
		for len(rec.Events) > 0 {
			if ev := <-rec.Events; strings.Contains(ev, "Service ports with") {
				onNode++
			} else {
				onServices++
			}
		}
		return onServices, onNode
	}
	check := func(when string, wantServices, wantNode int) {
		t.Helper()
		if s, nd := drain(); s != wantServices || nd != wantNode {
			t.Errorf("%s: %d events on Services and %d on the Node, want %d and %d", when, s, nd, wantServices, wantNode)
		}
	}

	eFail := failing(codeUnspecified, 0, n)
	sync(eFail)
	check("HNS refuses every load balancer", rejectionsRaisedPerCode, 1)
	sync(eFail)
	check("refused again", 0, 0)
	sync(failing(hnslb.CodeInvalidParameter, n, n+1))
	check("another code meanwhile", 1, 0)
	for i := range n {
		src.lbs[i].State = reconciler.StateDone
	}
	sync(nil)
	sync(failing(codeUnspecified, 0, 1))
	check("refused again after every load balancer of the code was programmed", 1, 0)
}
