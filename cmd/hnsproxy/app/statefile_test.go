package app

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/client-go/tools/events"
	"k8s.io/component-base/metrics/testutil"

	hnsevents "github.com/hnsproxy/hnsproxy/events"
	"github.com/hnsproxy/hnsproxy/metrics"
)

// TestStateWriteFailuresAreCountedAndRaisedOncePerStreak: every failure
// counts; only the first of a streak becomes a Node event.
func TestStateWriteFailuresAreCountedAndRaisedOncePerStreak(t *testing.T) {
	metrics.Register()
	rec := events.NewFakeRecorder(10)
	report := stateWriteFailed(hnsevents.NewReporter(fakeBroadcaster{rec: rec}, "win-1"))
	before := must(testutil.GetCounterMetricValue(metrics.StateFileWriteFailuresTotal))
	full := errors.New("no space left on device")
	for _, streakStart := range []bool{true, false, false, true} {
		report(full, streakStart)
	}
	if got := must(testutil.GetCounterMetricValue(metrics.StateFileWriteFailuresTotal)) - before; got != 4 {
		t.Errorf("counted %v failures, want 4", got)
	}
	close(rec.Events)
	var raised []string
	for ev := range rec.Events {
		raised = append(raised, ev)
	}
	if len(raised) != 2 || !strings.Contains(raised[0], hnsevents.ReasonStateFileWriteFailed) || !strings.Contains(raised[0], "no space left") {
		t.Errorf("events %q, want two StateFileWriteFailed warnings", raised)
	}
	stateWriteFailed(nil)(full, true) // no reporter: counted only
}
