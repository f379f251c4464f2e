package app

import (
	"github.com/hnsproxy/hnsproxy/events"
	"github.com/hnsproxy/hnsproxy/metrics"
)

// stateWriteFailed is the reconciler's StateWriteFailed: every failed state
// file write is counted, and the first of a streak raises a Warning on the
// Node, so a full disk is seen before a restart turns it into leaked HNS
// objects.
func stateWriteFailed(rep *events.Reporter) func(err error, streakStart bool) {
	return func(err error, streakStart bool) {
		metrics.StateFileWriteFailuresTotal.Inc()
		if streakStart && rep != nil {
			rep.StateFileWriteFailed(err)
		}
	}
}
