package app

import (
	"time"

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

// stateFileSynced is the reconciler's StateFileSynced: each fsync's duration
// goes to hnsproxy_state_file_sync_duration_seconds.
func stateFileSynced(took time.Duration) {
	metrics.StateFileSyncDuration.Observe(took.Seconds())
}
