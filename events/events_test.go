package events

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// recorded starts a real broadcaster on a fake clientset and returns a
// reporter plus a function that waits for n events in namespace ns.
func recorded(t *testing.T) (*Reporter, func(ns string, n int) []eventsv1.Event) {
	t.Helper()
	client := fake.NewClientset()
	b := NewBroadcaster(client)
	ctx, cancel := context.WithCancel(context.Background())
	if err := b.StartRecordingToSinkWithContext(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); b.Shutdown() })
	wait := func(ns string, n int) []eventsv1.Event {
		t.Helper()
		var got []eventsv1.Event
		err := waitFor(func() (bool, error) {
			list, err := client.EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
			if err != nil {
				return false, err
			}
			got = list.Items
			return len(got) >= n, nil
		})
		if err != nil {
			t.Fatalf("waiting for %d events in %q: %v (have %d)", n, ns, err, len(got))
		}
		return got
	}
	return NewReporter(b, "win-1"), wait
}

// waitFor polls until cond holds; the bound only stops a broken test from hanging.
func waitFor(cond func() (bool, error)) error {
	return wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 30*time.Second, true,
		func(context.Context) (bool, error) { return cond() })
}

var web = types.NamespacedName{Namespace: "shop", Name: "web"}

func TestServiceEventsReachTheAPI(t *testing.T) {
	r, wait := recorded(t)
	rejected := hnslb.NewError("CreateLoadBalancer", hnslb.CodePortAlreadyExists, "The specified port already exists.")
	r.LoadBalancerRejected(web, "http", "10.96.0.10:80/tcp", rejected)
	r.Recorder().Eventf(ServiceRef(web), nil, v1.EventTypeWarning, "BackendsTruncated", ActionSync, "node %s: %s", "win-1", "300 ready endpoints, 64 kept")

	want := map[string]string{
		ReasonLoadBalancerRejected: "The specified port already exists. (0x803b0013)",
		"BackendsTruncated":        "300 ready endpoints, 64 kept",
	}
	for _, ev := range wait("shop", len(want)) {
		note, ok := want[ev.Reason]
		if !ok {
			t.Errorf("unexpected event %q", ev.Reason)
			continue
		}
		delete(want, ev.Reason)
		if !strings.Contains(ev.Note, note) || !strings.HasPrefix(ev.Note, "node win-1: ") {
			t.Errorf("%s note = %q, want it to contain %q", ev.Reason, ev.Note, note)
		}
		if ev.Type != v1.EventTypeWarning || ev.Action != ActionSync || ev.ReportingController != ReportingController {
			t.Errorf("%s: type %q action %q controller %q", ev.Reason, ev.Type, ev.Action, ev.ReportingController)
		}
		if ev.Regarding.Kind != "Service" || ev.Regarding.Namespace != "shop" || ev.Regarding.Name != "web" {
			t.Errorf("%s regards %+v", ev.Reason, ev.Regarding)
		}
	}
	for reason := range want {
		t.Errorf("event %s never arrived", reason)
	}
}

func TestNodeEvents(t *testing.T) {
	r, wait := recorded(t)
	r.Starting()
	r.FeatureUnavailable("DSR", "needs HNS >= 10.2, have 9.1")
	r.ServerFailed(ReasonFailedToStartMetricServer, errors.New("listen tcp 127.0.0.1:10249: address already in use"))
	r.StateFileWriteFailed(errors.New("state file C:\\state.json: no space left on device"))
	r.ConfigFileRejected(`C:\config.conf`, errors.New("yaml: line 8: did not find expected ',' or '}'"))
	seen := map[string]eventsv1.Event{}
	for _, ev := range wait(metav1.NamespaceDefault, 5) {
		seen[ev.Reason] = ev
		if ev.Regarding.Kind != "Node" || ev.Regarding.Name != "win-1" {
			t.Errorf("%s regards %+v", ev.Reason, ev.Regarding)
		}
	}
	// kube-proxy's action on its start events (audit E03).
	if ev := seen[ReasonStarting]; ev.Type != v1.EventTypeNormal || ev.Action != "StartKubeProxy" {
		t.Errorf("birth cry = %+v", ev)
	}
	if ev := seen[ReasonHNSFeatureUnavailable]; !strings.Contains(ev.Note, "DSR requested but unavailable: needs HNS >= 10.2") {
		t.Errorf("feature event note = %q", ev.Note)
	}
	if ev := seen[ReasonFailedToStartMetricServer]; ev.Type != v1.EventTypeWarning || !strings.Contains(ev.Note, "address already in use") {
		t.Errorf("server event note = %q", ev.Note)
	}
	// It says what the node does meanwhile: nothing new is made in HNS
	// (reliability.md, F3), not that objects are made and owned in memory.
	if ev := seen[ReasonStateFileWriteFailed]; ev.Type != v1.EventTypeWarning || !strings.Contains(ev.Note, "no space left on device") ||
		!strings.Contains(ev.Note, "new load balancers and remote endpoints wait") {
		t.Errorf("state file event = %+v", ev)
	}
	// It says the node runs on with its old configuration, not that it stopped.
	if ev := seen[ReasonConfigFileRejected]; ev.Type != v1.EventTypeWarning || !strings.Contains(ev.Note, `C:\config.conf`) ||
		!strings.Contains(ev.Note, "runs on with the configuration it started with") || !strings.Contains(ev.Note, "did not find expected") {
		t.Errorf("config file event = %+v", ev)
	}
}

// TestNodeEventsCarryTheNodeNameAsUID: `kubectl describe node` finds a
// Node's events by involvedObject.uid: once with the Node's UID, once with
// its name (kubectl pkg/describe NodeDescriber). An event with no UID, as
// an upstream change has kube-proxy raise on its Node, matches neither query, so it never
// shows under the Node; hnsproxy's regard {Kind: Node, Name: <node>, UID:
// <node>}, as kube-proxy's and kubelet's long did.
func TestNodeEventsCarryTheNodeNameAsUID(t *testing.T) {
	r, wait := recorded(t)
	r.Starting()
	ev := wait(metav1.NamespaceDefault, 1)[0]
	if ev.Regarding.UID != types.UID("win-1") || ev.Regarding.Kind != "Node" || ev.Regarding.Name != "win-1" || ev.Regarding.Namespace != "" {
		t.Errorf("Starting regards %+v, want Kind Node, Name and UID win-1", ev.Regarding)
	}
}
