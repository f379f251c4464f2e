package app

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"

	hnsevents "github.com/hnsproxy/hnsproxy/events"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/proxier"
	"github.com/hnsproxy/hnsproxy/reconciler"
)

// refusedThroughTheAPI is an observer whose events go through client-go's
// events.k8s.io broadcaster to a fake API, as the daemon's do, over the
// load balancers of lbs, each refused with its error in one Sync.
func refusedThroughTheAPI(t *testing.T, lbs []reconciler.Status, errs []reconciler.ObjectError) *fake.Clientset {
	t.Helper()
	client := fake.NewClientset()
	b := hnsevents.NewBroadcaster(client)
	ctx, cancel := context.WithCancel(context.Background())
	if err := b.StartRecordingToSinkWithContext(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); b.Shutdown() })
	clk := clocktesting.NewFakeClock(time.Unix(1_800_000_000, 0))
	obs := newObserver(nil, nil, nil, &statuses{lbs: lbs}, hnsevents.NewReporter(b, "win-1"))
	obs.SyncDone(proxier.SyncStats{Start: clk.Now(), End: clk.Now(), Result: reconciler.SyncResult{Failed: len(errs), Errors: errs}})
	return client
}

// noted waits until the notes of the events in namespace ns say each of
// want, and fails the test with the notes the API has if they never do.
func noted(t *testing.T, client *fake.Clientset, ns string, want ...string) {
	t.Helper()
	var notes []string
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 5*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := client.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		notes = notes[:0]
		for _, ev := range list.Items {
			notes = append(notes, ev.Note)
		}
		all := strings.Join(notes, "\n")
		for _, w := range want {
			if !strings.Contains(all, w) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Errorf("the events in %q never said each of %q; the API has %d: %q", ns, want, len(notes), notes)
	}
}

// TestEachRefusalOfOneServiceInOneSyncReachesTheAPI: client-go's
// events.k8s.io broadcaster keys a series on the object, type, reason and
// action, not the note, so a second HNSLoadBalancerRejected of one Service
// within minutes only counts up the first, whose note the API keeps. HNS
// refusing two of a Service's load balancers with two errors must not
// leave the second error unsaid.
func TestEachRefusalOfOneServiceInOneSyncReachesTheAPI(t *testing.T) {
	var lbs []reconciler.Status
	var errs []reconciler.ObjectError
	for i, c := range []struct {
		port string
		code hnslb.ErrorCode
		msg  string
	}{
		{"http", hnslb.CodeInvalidParameter, "invalid number of destinations"},
		{"https", hnslb.CodeInvalidPolicy, "The policy is invalid"},
	} {
		key := intent.LBKey{Family: intent.IPv4, VIP: "10.96.0.10", Protocol: hnslb.ProtocolTCP, Port: uint16(80 + i)}
		lb := intent.LB{Key: key, Owner: "shop/web:" + c.port}
		lbs = append(lbs, reconciler.Status{Key: key, Owner: lb.Owner, Desired: &lb, State: reconciler.StateError})
		errs = append(errs, reconciler.ObjectError{Kind: reconciler.KindLoadBalancer, Name: key.String(),
			Err: hnslb.NewError("CreateLoadBalancer", c.code, "%s", c.msg)})
	}
	client := refusedThroughTheAPI(t, lbs, errs)
	noted(t, client, "shop", "invalid number of destinations", "The policy is invalid")
}

// TestTheNodeWarningOfEachCodeReachesTheAPI: load balancers refused with
// two codes, each past the bound, make two HNSLoadBalancerRejected
// Warnings on the Node, one per code (a code HNS gives every object must
// not silence another's); the broadcaster would fold the second into the
// first's series, and the operator would read of one code only.
func TestTheNodeWarningOfEachCodeReachesTheAPI(t *testing.T) {
	var lbs []reconciler.Status
	var errs []reconciler.ObjectError
	const n = rejectionsRaisedPerCode + 1
	for i := range 2 * n {
		code := hnslb.CodeInvalidParameter
		if i >= n {
			code = hnslb.CodeInvalidPolicy
		}
		key := intent.LBKey{Family: intent.IPv4, VIP: fmt.Sprintf("10.96.0.%d", i+1), Protocol: hnslb.ProtocolTCP, Port: 80}
		lb := intent.LB{Key: key, Owner: fmt.Sprintf("shop/svc-%d:http", i)}
		lbs = append(lbs, reconciler.Status{Key: key, Owner: lb.Owner, Desired: &lb, State: reconciler.StateError})
		errs = append(errs, reconciler.ObjectError{Kind: reconciler.KindLoadBalancer, Name: key.String(),
			Err: hnslb.NewError("CreateLoadBalancer", code, "refused")})
	}
	client := refusedThroughTheAPI(t, lbs, errs)
	noted(t, client, metav1.NamespaceDefault,
		fmt.Sprintf("more than %d load balancers with 0x57", rejectionsRaisedPerCode),
		fmt.Sprintf("more than %d load balancers with 0x803b000d", rejectionsRaisedPerCode))
}
