package app

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"

	hnsevents "github.com/hnsproxy/hnsproxy/events"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/metrics"
	"github.com/hnsproxy/hnsproxy/proxier"
	"github.com/hnsproxy/hnsproxy/reconciler"
	"github.com/hnsproxy/hnsproxy/sim"
)

// TestObserverReportsRejectedRemoteEndpoints: HNS refuses a backend's
// remote endpoint as a document it will not take (each of
// hnslb.InvalidDocumentCodes: 0x803b001e "IP address is either invalid or
// not part of any configured subnet(s)", say), and the load balancer leaves
// the backend out. HNS made nothing and refuses the same document at every
// retry, so the Service gets one HNSEndpointRejected Warning naming the
// backend, the port and HNS's answer; before, only a log line and
// hnsproxy_objects{state="failed"} told. HNS unavailable or hung is "try
// later" (healthz and the outage log say it), and raises nothing.
func TestObserverReportsRejectedRemoteEndpoints(t *testing.T) {
	metrics.Register()
	for _, code := range hnslb.InvalidDocumentCodes() {
		t.Run(fmt.Sprintf("0x%x", uint32(code)), func(t *testing.T) {
			clk := clocktesting.NewFakeClock(time.Unix(1_800_000_000, 0))
			key := intent.LBKey{Family: intent.IPv4, VIP: "10.96.0.10", Protocol: hnslb.ProtocolTCP, Port: 80}
			lb := intent.LB{Key: key, Owner: "shop/web:http"}
			src := &statuses{lbs: []reconciler.Status{{Key: key, Owner: lb.Owner, Desired: &lb, State: reconciler.StatePending, MissingBackends: []string{"10.244.3.31"}}}}
			rec := events.NewFakeRecorder(10)
			obs := newObserver(nil, nil, nil, src, hnsevents.NewReporter(fakeBroadcaster{rec: rec}, "win-1"))
			sync := func(errs ...reconciler.ObjectError) {
				obs.SyncDone(proxier.SyncStats{Start: clk.Now(), End: clk.Now(), Result: reconciler.SyncResult{Failed: len(errs), Errors: errs}})
			}
			for _, later := range []hnslb.ErrorCode{hnslb.CodeTimeout, hnslb.CodeRPCServerUnavailable, hnslb.CodeManagerStopped} {
				sync(reconciler.ObjectError{Kind: reconciler.KindRemoteEndpoint, Name: "10.244.3.31", Err: hnslb.NewError("CreateEndpoint", later, "")})
			}
			if len(rec.Events) != 0 {
				t.Fatalf("%q for HNS unavailable or hung: try later, no event", <-rec.Events)
			}
			rejected := reconciler.ObjectError{Kind: reconciler.KindRemoteEndpoint, Name: "10.244.3.31",
				Err: hnslb.NewError("CreateEndpoint", code, "HNS's message")}
			for range 3 {
				sync(rejected)
			}
			if len(rec.Events) != 1 {
				t.Fatalf("%d events for a remote endpoint HNS rejects at every retry, want 1", len(rec.Events))
			}
			want := []string{hnsevents.ReasonEndpointRejected, "node win-1", "backend 10.244.3.31 of port http (10.96.0.10:80/tcp) is left out",
				fmt.Sprintf("HNS's message (0x%x)", uint32(code))}
			if ev := <-rec.Events; !containsAll(ev, want...) {
				t.Errorf("event = %q, want it to say %q", ev, want)
			}
		})
	}
}

// containsAll reports whether s holds each of subs.
func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// TestARemoteEndpointHNSRejectsInManyServicesIsNoEventStorm: HNS refuses
// every remote endpoint of the node with 0x803b001e (an address outside
// every subnet HNS knows of the network), and the pod on another node that
// backs each Service is left out of each load balancer. Like
// HNSEndpointAddressRefused, the rejections of one HNS code are a few
// Warnings on their Services, then one on the Node.
func TestARemoteEndpointHNSRejectsInManyServicesIsNoEventStorm(t *testing.T) {
	const services = 3 * hnsevents.MaxRaisedOneByOne
	onServices, onNode := remoteBackendInEveryService(t, services,
		sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpCreateEndpoint: 1}, Errors: []hnslb.ErrorCode{hnslb.CodeInvalidIP}},
		"InvalidIP", hnsevents.ReasonEndpointRejected)
	if len(onServices) != hnsevents.MaxRaisedOneByOne || len(onNode) != 1 {
		t.Fatalf("%d HNSEndpointRejected events on Services and %d on the Node for %d load balancers leaving out one rejected backend; want %d and 1",
			len(onServices), len(onNode), services, hnsevents.MaxRaisedOneByOne)
	}
	if want := "backends whose remote endpoints HNS rejects with 0x803b001e"; !strings.Contains(onNode[0].Note, want) {
		t.Errorf("node event %q does not say %q", onNode[0].Note, want)
	}
}
