package events

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8sevents "k8s.io/client-go/tools/events"
)

// client-go's events.k8s.io broadcaster keys an event's series on its
// object, related object, type, reason and action, not on its note: a
// second event of one key within minutes (six after the last, twelve at
// most) only counts up the first, whose note the API keeps. Events raised
// one by one for several load balancers of one Service (HNS refusing two
// of its ports), or on the Node for several HNS error codes, would tell
// the first and hide the rest. A batch gathers the events one round raises
// (one Sync's refusals) and raises those of one key as one event that says
// each note, as the proxier raises a Service's mapping problems of one
// reason.

// Batch returns a reporter whose events wait for flush, which raises the
// events of one object, related object, type, reason and action as one,
// their notes joined in the order raised.
func (r *Reporter) Batch() (batched *Reporter, flush func()) {
	rec, flush := NewBatch(r.rec)
	return &Reporter{rec: rec, nodeName: r.nodeName}, flush
}

// NewBatch is Batch for a recorder: the proxier raises the conditions one
// Sync leaves on a Service's load balancers (a foreign load balancer on
// each of its external IPs) through one.
func NewBatch(rec k8sevents.EventRecorder) (batched k8sevents.EventRecorder, flush func()) {
	b := &batch{rec: rec}
	return b, b.flush
}

// batch is a recorder that holds events until flush.
type batch struct {
	rec     k8sevents.EventRecorder
	pending []*pendingEvent
}

// pendingEvent is the events of one series key a batch holds.
type pendingEvent struct {
	regarding, related        runtime.Object
	eventtype, reason, action string
	notes                     []string
}

func (b *batch) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	text := fmt.Sprintf(note, args...)
	for _, p := range b.pending {
		if p.eventtype == eventtype && p.reason == reason && p.action == action &&
			sameObject(p.regarding, regarding) && sameObject(p.related, related) {
			p.notes = append(p.notes, text)
			return
		}
	}
	b.pending = append(b.pending, &pendingEvent{regarding: regarding, related: related,
		eventtype: eventtype, reason: reason, action: action, notes: []string{text}})
}

// flush raises what the batch holds; a batch is flushed once.
func (b *batch) flush() {
	for _, p := range b.pending {
		b.rec.Eventf(p.regarding, p.related, p.eventtype, p.reason, p.action, "%s", strings.Join(p.notes, ". Also: "))
	}
	b.pending = nil
}

// sameObject reports whether two events' objects give them one series key:
// references alike field by field (the reporter makes a new one for each
// event), anything else only as the same object.
func sameObject(a, b runtime.Object) bool {
	ra, okA := a.(*v1.ObjectReference)
	rb, okB := b.(*v1.ObjectReference)
	if okA && okB {
		return *ra == *rb
	}
	return a == b
}
