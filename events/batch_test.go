package events

import (
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	k8sevents "k8s.io/client-go/tools/events"
)

// TestABatchSaysEachNoteOfOneSeriesKeyInOneEvent: the broadcaster keys a
// series on object, type, reason and action, not the note, so the events
// of one key a round raises go out as one that says each note; other keys
// (another Service, another reason, the Node) keep their own events, and
// nothing goes out before the flush.
func TestABatchSaysEachNoteOfOneSeriesKeyInOneEvent(t *testing.T) {
	r, wait := recorded(t)
	ev, flush := r.Batch()
	other := types.NamespacedName{Namespace: "shop", Name: "cart"}
	ev.LoadBalancerRejected(web, "http", "10.96.0.10:80/tcp", errors.New("first refusal"))
	ev.EndpointAddressRefused(web, "http", "10.96.0.10:80/tcp", "10.244.2.7", errors.New("held"))
	ev.LoadBalancerRejected(other, "http", "10.96.0.11:80/tcp", errors.New("the cart's refusal"))
	ev.LoadBalancerRejected(web, "https", "10.96.0.10:443/tcp", errors.New("second refusal"))
	ev.LoadBalancersRejected("0x57", MaxRaisedOneByOne, web, "http", "10.96.0.10:80/tcp", errors.New("code one"))
	ev.LoadBalancersRejected("0x803b000d", MaxRaisedOneByOne, web, "https", "10.96.0.10:443/tcp", errors.New("code two"))
	r.Starting() // not batched: goes out at once
	if got := wait(metav1.NamespaceDefault, 1); len(got) != 1 || got[0].Reason != ReasonStarting {
		t.Fatalf("before the flush the Node has %d events, want only %s", len(got), ReasonStarting)
	}
	if got := wait("shop", 0); len(got) != 0 {
		t.Fatalf("%d events on Services before the flush", len(got))
	}
	flush()

	want := map[string][]string{
		"web/" + ReasonLoadBalancerRejected:   {"port http (10.96.0.10:80/tcp): first refusal", "port https (10.96.0.10:443/tcp): second refusal"},
		"web/" + ReasonEndpointAddressRefused: {"backend 10.244.2.7"},
		"cart/" + ReasonLoadBalancerRejected:  {"the cart's refusal"},
	}
	for _, e := range wait("shop", len(want)) {
		k := e.Regarding.Name + "/" + e.Reason
		notes, ok := want[k]
		if !ok {
			t.Errorf("unexpected or second event %s: %q", k, e.Note)
			continue
		}
		delete(want, k)
		for _, n := range notes {
			if !strings.Contains(e.Note, n) {
				t.Errorf("%s: note %q does not say %q", k, e.Note, n)
			}
		}
	}
	for k := range want {
		t.Errorf("event %s never arrived", k)
	}
	node := wait(metav1.NamespaceDefault, 2)
	for _, e := range node {
		if e.Reason == ReasonLoadBalancerRejected &&
			(!strings.Contains(e.Note, "with 0x57") || !strings.Contains(e.Note, "with 0x803b000d")) {
			t.Errorf("the Node's warning says %q, want both codes", e.Note)
		}
	}
	if len(node) != 2 {
		t.Errorf("%d events on the Node, want Starting and one warning", len(node))
	}
}

// TestABatchKeysOnActionAndRelatedToo: events differing only in action or
// related object are other series keys, kept apart (audit E11, E16).
func TestABatchKeysOnActionAndRelatedToo(t *testing.T) {
	rec := k8sevents.NewFakeRecorder(10)
	batched, flush := NewBatch(rec)
	node := NodeRef("win-1")
	batched.Eventf(ServiceRef(web), nil, v1.EventTypeWarning, ReasonLoadBalancerRejected, ActionSync, "synced")
	batched.Eventf(ServiceRef(web), nil, v1.EventTypeWarning, ReasonLoadBalancerRejected, ActionCheck, "checked")
	batched.Eventf(ServiceRef(web), node, v1.EventTypeWarning, ReasonLoadBalancerRejected, ActionSync, "related to the node")
	flush()
	if n := len(rec.Events); n != 3 {
		t.Errorf("three series keys raised %d events, want 3", n)
	}
}
