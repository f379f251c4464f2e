package app

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	hnsevents "github.com/hnsproxy/hnsproxy/events"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/metrics"
	"github.com/hnsproxy/hnsproxy/proxier"
	"github.com/hnsproxy/hnsproxy/reconciler"
	"github.com/hnsproxy/hnsproxy/sim"
)

// TestAnAddressRefusedForManyServicesIsNoEventStorm: HNS refuses the
// remote endpoint of one pod on another node that backs every Service of
// the node (its address reserved: 0x803b002f), so each load balancer
// leaves that backend out. One HNSEndpointAddressRefused per load balancer
// and backend would be an event per Service from every such node (HNS
// refusing every remote endpoint on an overlay node is the same storm
// times the pods). Like HNSLoadBalancerRejected, the refusals of one HNS
// error code are a few on their Services, then one on the Node.
func TestAnAddressRefusedForManyServicesIsNoEventStorm(t *testing.T) {
	const services = 300
	onServices, onNode := remoteBackendInEveryService(t, services, sim.Faults{ReservedAddresses: []netip.Addr{netip.MustParseAddr(remotePod)}},
		"AddrInvalidOrReserved", hnsevents.ReasonEndpointAddressRefused)
	if len(onServices) != hnsevents.MaxRaisedOneByOne || len(onNode) != 1 {
		t.Fatalf("%d HNSEndpointAddressRefused events on Services and %d on the Node for %d load balancers leaving out one refused backend; want %d and 1",
			len(onServices), len(onNode), services, hnsevents.MaxRaisedOneByOne)
	}
	t.Logf("node event: %s", onNode[0].Note)
}

// remotePod is the pod on another node, win-2, that backs every Service of
// remoteBackendInEveryService.
const remotePod = "10.244.2.7"

// remoteBackendInEveryService runs the daemon on win-1 over services
// Services (manyServices), each backed by its local pod and by remotePod,
// with HNS faults set once win-1 is wired; waits until every load balancer
// is programmed and HNS has refused remotePod's remote endpoint with result
// at least three times; then stops the daemon and returns its events of
// reason.
func remoteBackendInEveryService(t *testing.T, services int, faults sim.Faults, result, reason string) (onServices, onNode []eventsv1.Event) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hns := sim.New(sim.Options{Seed: 1})
	wireWinOne(t, hns)
	hns.SetFaults(faults)
	objs := manyServices(services)
	for _, o := range objs {
		if s, ok := o.(*discoveryv1.EndpointSlice); ok {
			s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{remotePod}, NodeName: ptr.To("win-2"),
				Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}})
		}
	}
	objs = append(objs, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-2"},
		Status: v1.NodeStatus{Addresses: []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.6"}}}})
	client := fake.NewClientset(objs...)
	cfg := parseConfig(t, "--network-name=cbr0", "--hostname-override=win-1", "--min-sync-period=0",
		"--healthz-bind-address=", "--metrics-bind-address=", "--state-file="+t.TempDir()+"/state.json")
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, client, hns) }()

	// Every load balancer programmed with its local backend, the refused
	// one left out, and its endpoint tried again.
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		select {
		case err := <-done:
			t.Fatalf("the daemon stopped: %v", err)
		default:
		}
		lbs, err := hns.ListLoadBalancers(ctx)
		return len(lbs) == services && hns.Counters().CountResult(sim.OpCreateEndpoint, result) >= 3, err
	})
	if err != nil {
		t.Fatalf("the load balancers were not programmed, nor the refused endpoint retried: %v", err)
	}
	return stopAndListBoundedEvents(t, cancel, done, client, reason)
}

// Once no more than events.MaxRaisedOneByOne backends are left out for
// refusals with one code, those raised nowhere are raised on their
// Services, once: an address refused in many Services that is left in a
// few does not leave them unreported once the Node's Warning has expired.
func TestAddressRefusalsLeftAfterAStormAreRaisedOnTheirServices(t *testing.T) {
	const n, left = 3 * hnsevents.MaxRaisedOneByOne, hnsevents.MaxRaisedOneByOne / 2
	metrics.Register()
	clk := clocktesting.NewFakeClock(time.Unix(1_800_000_000, 0))
	src := &statuses{}
	for i := range n {
		key := intent.LBKey{Family: intent.IPv4, VIP: fmt.Sprintf("10.96.0.%d", i+1), Protocol: hnslb.ProtocolTCP, Port: 80}
		lb := intent.LB{Key: key, Owner: fmt.Sprintf("shop/svc-%d:http", i)}
		src.lbs = append(src.lbs, reconciler.Status{Key: key, Owner: lb.Owner, Desired: &lb, State: reconciler.StatePending, MissingBackends: []string{"10.244.3.31"}})
	}
	rec := events.NewFakeRecorder(2 * n)
	obs := newObserver(nil, nil, nil, src, hnsevents.NewReporter(fakeBroadcaster{rec: rec}, "win-1"))
	reserved := reconciler.ObjectError{Kind: reconciler.KindRemoteEndpoint, Name: "10.244.3.31",
		Err: &reconciler.AddressRefusedError{IP: "10.244.3.31", Err: hnslb.NewError("CreateEndpoint", hnslb.CodeAddrInvalidOrReserved, "")}}
	sync := func(errs ...reconciler.ObjectError) {
		obs.SyncDone(proxier.SyncStats{Start: clk.Now(), End: clk.Now(), Result: reconciler.SyncResult{Failed: len(errs), Errors: errs}})
	}
	check := func(when string, wantServices, wantNode int) {
		t.Helper()
		onServices, onNode := 0, 0
		for len(rec.Events) > 0 {
			if ev := <-rec.Events; strings.Contains(ev, "backends whose remote endpoints HNS refuses with 0x803b002f") {
				onNode++
			} else {
				onServices++
			}
		}
		if onServices != wantServices || onNode != wantNode {
			t.Errorf("%s: %d events on Services and %d on the Node, want %d and %d", when, onServices, onNode, wantServices, wantNode)
		}
	}
	sync(reserved)
	check("one address refused in every load balancer", hnsevents.MaxRaisedOneByOne, 1)
	sync(reserved)
	check("refused again", 0, 0)
	for i := range n - left { // the last ones were raised nowhere
		src.lbs[i].MissingBackends, src.lbs[i].State = nil, reconciler.StateDone
	}
	sync()
	check("a few load balancers left without it", left, 0)
	sync(reserved)
	check("the few refused again", 0, 0)
}
