package proxier

import "k8s.io/klog/v2"

// failureStreak logs a failure that repeats for as long as its cause lasts
// (HNS down, or a call hanging, for hours): an error when the streak starts
// or its error changes, the same error again only at --v=4. A retry every
// 30 s is otherwise a line every 30 s that says nothing new. Owned by the
// sync loop (p.mu).
type failureStreak struct{ last string }

// failed logs err: as first when new, else at --v=4 as again.
func (f *failureStreak) failed(logger klog.Logger, first, again string, err error, keysAndValues ...any) {
	if err.Error() == f.last {
		logger.V(4).Info(again, append([]any{"err", err}, keysAndValues...)...)
		return
	}
	f.last = err.Error()
	logger.Error(err, first, keysAndValues...)
}

// ended ends the streak: the next failure is logged anew.
func (f *failureStreak) ended() { f.last = "" }
