package reconciler

import (
	"errors"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// When an abandoned call returns. A call abandoned at its deadline keeps
// its objects busy until it returns (deadline.go). Every object that met
// the hang keeps its own exponential backoff meanwhile, and each visit
// while it waits lengthens it: its own call abandoned, a call not made
// because HNS held others, a wait for a busy object. After the fault
// soak's 15 s hang an object's retry could be 16 s and more away, with HNS
// answering all along. A return shows HNS answering again,
// so the Sync after it retries each of those objects now, its backoff
// forgotten, and the caller is told to run that Sync (CallsReturned). An
// object another abandoned call still holds keeps waiting: it is due
// again when that call returns.

var errAbandonedCallRunning = errors.New("waiting for an abandoned HNS call on it to return")

// metHang reports a failure or wait that HNS's hang caused, rather than
// the object.
func metHang(err error) bool {
	code, _ := hnslb.CodeOf(err)
	return code == hnslb.CodeTimeout || errors.Is(err, errAbandonedCallRunning)
}

// CallsReturned receives after an HNS call abandoned at its deadline
// returned; the next Sync retries what waited on the hang (nil before a
// client is set: never).
func (r *Reconciler) CallsReturned() <-chan struct{} {
	if r.client == nil {
		return nil
	}
	return r.client.returns
}

// retryAfterHang makes due now, with its backoff forgotten, every object
// waiting because of the hang once an abandoned call returned and none
// still holds it.
func (r *Reconciler) retryAfterHang(run *syncRun) {
	if !r.client.takeReturned() {
		return
	}
	retried := 0
	r.eachRetrying(func(ref objectRef, st *objStatus, tokens ...string) {
		if !st.nextRetry.After(run.now) || !metHang(st.lastErr) || r.client.busy(tokens...) {
			return
		}
		st.nextRetry = run.now
		r.limiter.Forget(ref)
		retried++
	})
	if retried > 0 {
		r.log.Info("An abandoned HNS call returned; retrying now what waited on the hang", "objects", retried)
	}
}
