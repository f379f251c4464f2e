package reconciler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// succeed marks an object converged and resets its backoff.
func (r *Reconciler) succeed(ref objectRef, st *objStatus) {
	r.limiter.Forget(ref)
	*st = objStatus{state: StateDone}
	r.unschedule(ref)
}

// settle is succeed, unless backends had to be left out: then the object
// stays pending and is retried with backoff.
func (r *Reconciler) settle(run *syncRun, ref objectRef, st *objStatus, missing []string) {
	if len(missing) == 0 {
		r.succeed(ref, st)
		return
	}
	r.wait(run, ref, st, fmt.Errorf("backends left out, no HNS endpoint known for %v", missing))
}

// settleWritten is settle after HNS took the object's write. A write is
// progress, not a failure: a load balancer written again as its left-out
// backends' endpoints come (each wakes it, syncEP) starts its backoff over,
// or each such write doubled it and a real failure after four waited 32 s.
func (r *Reconciler) settleWritten(run *syncRun, ref objectRef, st *objStatus, missing []string) {
	r.limiter.Forget(ref)
	r.settle(run, ref, st, missing)
}

// wait keeps an object pending, to be retried with backoff (not a failure).
// One waiting for a listing is marked by the listing's answer
// (answerLookups), so its backoff does not grow: counted as a failure, each
// wait before a retry of a create that lost its reply doubled the backoff
// once more (1, 4, 16 s). Its retry then is only a fallback, should no
// listing answer.
func (r *Reconciler) wait(run *syncRun, ref objectRef, st *objStatus, why error) {
	st.state, st.lastErr = StatePending, why
	if isAwaiting(why) {
		st.nextRetry = run.now.Add(r.opts.RetryMax)
		r.keepForRetry(ref)
		return
	}
	r.schedule(run, ref, st)
}

// awaitingAbandoned keeps an object waiting while a call on it that passed
// its deadline still runs (see deadline.go): a new write could be overtaken
// by the late one, and a lost create is found only once it returns.
func (r *Reconciler) awaitingAbandoned(run *syncRun, ref objectRef, st *objStatus, tokens ...string) bool {
	if !r.client.busy(tokens...) {
		return false
	}
	r.wait(run, ref, st, errAbandonedCallRunning)
	return true
}

// eachRetrying calls fn for every object that waits for a retry, with the
// tokens of the calls that may keep it busy.
func (r *Reconciler) eachRetrying(fn func(ref objectRef, st *objStatus, tokens ...string)) {
	for k := range r.retryLBs {
		e := r.lbs[k]
		fn(objectRef{lb: k}, &e.st, lbToken(k), idToken(e.realizedID))
	}
	for ip := range r.retryEPs {
		ep := r.eps[ip]
		fn(objectRef{ip: ip}, &ep.st, epToken(ip), idToken(ep.id))
	}
	for _, stale := range []map[string]*staleObj{r.staleLBs, r.staleEPs} {
		for id, s := range stale {
			fn(objectRef{id: id}, &s.st, idToken(id))
		}
	}
}

// fail records a failed attempt and schedules the retry with backoff.
func (r *Reconciler) fail(run *syncRun, ref objectRef, st *objStatus, kind ObjectKind, name string, err error) {
	again := st.state == StateError && st.errString() == err.Error()
	st.state, st.lastErr = StateError, err
	r.schedule(run, ref, st)
	r.noteFailure(run.now, err)
	run.res.Failed++
	run.res.Errors = append(run.res.Errors, ObjectError{Kind: kind, Name: name, Err: err})
	r.logFailure(kind, name, err, st.nextRetry, again)
}

// logFailure logs a failed attempt. An object HNS refuses for hours is
// retried that long: at the default verbosity its refusal is one error
// line when it starts or its error changes, the same error again only at
// --v=4 (its event, /debug/hns and hnsproxy_objects{state="failed"} say
// it meanwhile). HNS down or hung, and a call the stop cut short, are
// logged once for all objects (outage.go, deadline.go, the stop), each
// object's only at --v=2.
func (r *Reconciler) logFailure(kind ObjectKind, name string, err error, retryAt time.Time, again bool) {
	switch {
	case again:
		r.log.V(4).Info("HNS operation failed again; will retry", "kind", kind, "object", name, "err", err, "retryAt", retryAt)
	case hnslb.IsUnavailable(err) || errors.Is(err, context.Canceled):
		r.log.V(2).Info("HNS operation failed; will retry", "kind", kind, "object", name, "err", err, "retryAt", retryAt)
	default:
		r.log.Error(err, "HNS operation failed; will retry", "kind", kind, "object", name, "retryAt", retryAt)
	}
}

func (r *Reconciler) schedule(run *syncRun, ref objectRef, st *objStatus) {
	st.attempts++
	st.nextRetry = run.now.Add(r.limiter.When(ref))
	r.keepForRetry(ref)
}

// keepForRetry has the Sync at an object's nextRetry take it.
func (r *Reconciler) keepForRetry(ref objectRef) {
	switch {
	case ref.ip != "":
		r.retryEPs[ref.ip] = struct{}{}
	case ref.id == "":
		r.retryLBs[ref.lb] = struct{}{}
	}
}

func (r *Reconciler) unschedule(ref objectRef) {
	switch {
	case ref.ip != "":
		delete(r.retryEPs, ref.ip)
	case ref.id == "":
		delete(r.retryLBs, ref.lb)
	}
}

// restartBackoff starts an object's backoff over when what is desired of
// it changed: the failures counted so far were the old object's. The
// change marks it dirty, so the next Sync tries it whatever its retry;
// should HNS refuse the new one, it is retried after RetryBase, not after
// the old one's backoff (up to RetryMax), as cilium/statedb's reconciler
// clears a changed object's retries. An object changed at every Sync is
// still tried once per Sync, and in between at its backoff.
func (r *Reconciler) restartBackoff(ref objectRef, st *objStatus) {
	r.limiter.Forget(ref)
	st.attempts = 0
}

// dropStale forgets id as an object to delete, and its backoff: deleted,
// gone, or taken up again. The rate limiter counts an object's failures
// until it is told to forget them, so a stale object whose deletes failed
// would otherwise leave its count behind for the life of the process (and
// start from it, should the ID turn stale again).
func (r *Reconciler) dropStale(stale map[string]*staleObj, id string) {
	if _, ok := stale[id]; !ok {
		return
	}
	r.limiter.Forget(objectRef{id: id})
	delete(stale, id)
}

// done marks an object converged without an HNS call (adopted).
func (r *Reconciler) done(st *objStatus) { *st = objStatus{state: StateDone} }
