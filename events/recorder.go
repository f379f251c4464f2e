package events

import (
	"fmt"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	k8sevents "k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
)

// recorder is the recorder every event of hnsproxy goes through, the
// reporter's own and those of the code it hands Recorder() to: it puts the
// Service's UID on a Service reference without one (serviceuid.go) and
// cuts a note to what the API accepts (note.go).
type recorder struct {
	k8sevents.EventRecorder
	uids *atomic.Pointer[ServiceUIDs]
}

func (r recorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	full := fmt.Sprintf(note, args...)
	sent := boundNote(full)
	if len(sent) < len(full) {
		// The event says it was cut; the log keeps the whole of it.
		klog.InfoS("Event note cut to the length the API accepts", "reason", reason, "bytes", len(full), "note", full)
	}
	r.EventRecorder.Eventf(withUID(r.uids, regarding), related, eventtype, reason, action, "%s", sent)
}
