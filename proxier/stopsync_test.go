package proxier

import (
	"context"
	"testing"

	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"

	"github.com/hnsproxy/hnsproxy/internal/klogtest"
	"github.com/hnsproxy/hnsproxy/reconciler"
)

// stoppingReconciler's Sync fails its objects; with stop set, the stop
// arrives during the Sync, as the calls it did not make fail.
type stoppingReconciler struct {
	repairCounter
	stop context.CancelFunc
}

func (r *stoppingReconciler) Sync(context.Context) reconciler.SyncResult {
	if r.stop != nil {
		r.stop()
	}
	return reconciler.SyncResult{Failed: 2}
}

// logLines keeps what a logger wrote.
type logLines struct{ klogtest.Buffer }

func (l *logLines) context(ctx context.Context) context.Context {
	return klog.NewContext(ctx, textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(l), textlogger.Verbosity(2))))
}

func (l *logLines) has(s string) bool { return l.Count(s) > 0 }

// A Sync the stop ended half way failed only the calls the stop kept from
// HNS: it does not say the sync was incomplete and will be retried, which
// a stop logged at every rolling update. Without the stop, it does.
func TestSyncEndedByTheStopIsNotIncomplete(t *testing.T) {
	for _, stopped := range []bool{false, true} {
		var log logLines
		ctx, cancel := context.WithCancel(log.context(context.Background()))
		rec := &stoppingReconciler{}
		if stopped {
			rec.stop = cancel
		}
		p := idleProxier(t, Options{Reconciler: rec})
		p.Sync(ctx)
		cancel()
		if got := log.has("HNS sync incomplete"); got == stopped {
			t.Errorf("stopped during the Sync %v: logged \"HNS sync incomplete\" %v, want %v", stopped, got, !stopped)
		}
		if got := log.has("Stopped during a sync"); got != stopped {
			t.Errorf("stopped during the Sync %v: logged the stop %v", stopped, got)
		}
	}
}
