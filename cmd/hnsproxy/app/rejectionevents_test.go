package app

import (
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
