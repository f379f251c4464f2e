package app

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	hnsevents "github.com/hnsproxy/hnsproxy/events"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
)

// codeUnspecified is E_FAIL, what HNS answers for a failure it does not name.
const codeUnspecified hnslb.ErrorCode = 0x80004005

// manyServices are the Node win-1 and n ClusterIP Services shop/svc-<i>,
// each with one ready endpoint, the pod 10.244.1.5 on win-1 (wireWinOne).
func manyServices(n int) []runtime.Object {
	objs := []runtime.Object{&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "win-1"},
		Status: v1.NodeStatus{Addresses: []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.5"}}}}}
	for i := range n {
		name, ip := fmt.Sprintf("svc-%d", i), fmt.Sprintf("10.96.%d.%d", 1+i/250, 1+i%250)
		objs = append(objs,
			&v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name},
				Spec: v1.ServiceSpec{Type: v1.ServiceTypeClusterIP, ClusterIP: ip, ClusterIPs: []string{ip},
					IPFamilies: []v1.IPFamily{v1.IPv4Protocol},
					Ports:      []v1.ServicePort{{Name: "http", Protocol: v1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(8080)}}}},
			&discoveryv1.EndpointSlice{
				ObjectMeta:  metav1.ObjectMeta{Namespace: "shop", Name: name + "-1", Labels: map[string]string{discoveryv1.LabelServiceName: name}},
				AddressType: discoveryv1.AddressTypeIPv4,
				Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Protocol: ptr.To(v1.ProtocolTCP), Port: ptr.To[int32](8080)}},
				Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.244.1.5"}, NodeName: ptr.To("win-1"),
					Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
			})
	}
	return objs
}

// TestHNSRefusingEveryWriteIsNoEventStorm: HNS refuses every load balancer
// create of a node with many Services (the same error for each: HNS is
// broken, not the Services). One HNSLoadBalancerRejected per load
// balancer would be an event per Service from every such node, written
// through the client hnsproxy shares with its informers (kube-proxy's
// clientConnection, 5 QPS by default): 10,000 Services are over half an
// hour of event writes. client-go's events.k8s.io broadcaster has no spam
// filter to stop them (its series only fold the same event of one object),
// and kube-proxy raises no event for a load balancer HNS refuses. So the
// events of one HNS error stay a few, however many load balancers it
// refuses and however often they are retried: a few on their Services,
// then one on the Node that says the rest are not raised one by one.
// Once HNS takes writes again, every load balancer is programmed.
func TestHNSRefusingEveryWriteIsNoEventStorm(t *testing.T) {
	const services = 600
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hns := sim.New(sim.Options{Seed: 1})
	wireWinOne(t, hns)
	hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpCreateLoadBalancer: 1}, Errors: []hnslb.ErrorCode{codeUnspecified}})
	client := fake.NewClientset(manyServices(services)...)
	cfg := parseConfig(t, "--network-name=cbr0", "--hostname-override=win-1", "--min-sync-period=0",
		"--healthz-bind-address=", "--metrics-bind-address=", "--state-file="+t.TempDir()+"/state.json")
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, client, hns) }()

	// Every load balancer refused, and retried.
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		select {
		case err := <-done:
			t.Fatalf("the daemon stopped: %v", err)
		default:
		}
		return hns.Counters().CountResult(sim.OpCreateLoadBalancer, "0x80004005") >= 2*services, nil
	})
	if err != nil {
		t.Fatalf("HNS was not asked for every load balancer twice: %v (%d refusals)", err, hns.Counters().CountResult(sim.OpCreateLoadBalancer, "0x80004005"))
	}
	// HNS takes writes again: every load balancer is programmed at its
	// next retry, and no more events come of it.
	hns.SetFaults(sim.Faults{})
	err = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		lbs, err := hns.ListLoadBalancers(ctx)
		return len(lbs) == services, err
	})
	if err != nil {
		t.Fatalf("the load balancers were not all programmed once HNS took writes again: %v", err)
	}
	onServices, onNode := stopAndListBoundedEvents(t, cancel, done, client, hnsevents.ReasonLoadBalancerRejected)
	if len(onServices) != rejectionsRaisedPerCode || len(onNode) != 1 {
		t.Fatalf("%d HNSLoadBalancerRejected events on Services and %d on the Node for %d load balancers HNS refused alike; want %d and 1",
			len(onServices), len(onNode), services, rejectionsRaisedPerCode)
	}
	t.Logf("node event: %s", onNode[0].Note)
}

// stopAndListBoundedEvents waits, with the daemon running, until the
// events of reason it raised, on Services and on the Node, are as many as
// one bound raises, or more; then stops it (cancel, then its done) and
// lists them again. The caller waited on HNS's state, which the events
// follow: they are raised after a Sync ends, from a status snapshot that
// may still be gathering, so stopping first lost them under load (-race:
// 0 events of 10 and 1). What it raises meanwhile must keep to the bound.
func stopAndListBoundedEvents(t *testing.T, cancel context.CancelFunc, done <-chan error, client *fake.Clientset, reason string) (onServices, onNode []eventsv1.Event) {
	t.Helper()
	list := func() (onServices, onNode []eventsv1.Event) {
		evs, err := client.EventsV1().Events("").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs.Items {
			switch {
			case ev.Reason == reason && ev.Regarding.Kind == "Service":
				onServices = append(onServices, ev)
			case ev.Reason == reason:
				onNode = append(onNode, ev)
			}
		}
		return onServices, onNode
	}
	_ = wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		select {
		case err := <-done:
			t.Fatalf("the daemon stopped: %v", err)
		default:
		}
		onServices, onNode = list()
		return len(onServices) >= hnsevents.MaxRaisedOneByOne && len(onNode) == 1 || len(onServices) > hnsevents.MaxRaisedOneByOne, nil
	})
	cancel()
	if err := <-done; err != nil && err != context.Canceled {
		t.Fatalf("the daemon returned %v", err)
	}
	return list()
}
