package app

import (
	"github.com/hnsproxy/hnsproxy/events"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/reconciler"
)

// rejectionsRaisedPerCode bounds the HNSLoadBalancerRejected events on
// Services for one HNS error code while more load balancers than it are
// refused with it (events.Bound). HNS that refuses every write (broken,
// not the Services) refuses every load balancer, at least one per Service
// port: one event each would be 10,000 events or more from a node of 10,000
// Services, from every
// such node, written through the client hnsproxy shares with its informers
// (5 QPS by default), and kube-proxy raises no event for a load balancer
// HNS refuses. Past the bound one Warning on the Node stands for the rest.
const rejectionsRaisedPerCode = events.MaxRaisedOneByOne

// rejections is what the observer reported of the load balancers HNS
// refuses: the error of each, so one HNS keeps refusing is one event, not
// one per retry; and per HNS error code, where its refusals are raised.
type rejections struct {
	reported map[string]rejection // by load balancer key
	bounds   boundsByCode
}

// rejection is the error of one refused load balancer, and its code.
type rejection struct {
	err  error
	code string
}

func newRejections() rejections {
	return rejections{reported: map[string]rejection{}, bounds: boundsByCode{}}
}

// reportRejections raises HNSLoadBalancerRejected on the owning Service for
// each load balancer HNS refused (not for HNS being unreachable, nor for a
// call the stop cut short, nor for a backend HNS no longer has, which the
// reconciler makes again, nor for a foreign load balancer on the frontend:
// the proxier raises ForeignLoadBalancerConflict for that), once per
// distinct error; while more than rejectionsRaisedPerCode load balancers
// are refused with one HNS error code, for that many of them, then one on
// the Node, the rest once few are refused with it (events.Bound). It reads
// the whole status only while HNS refuses some load balancer or one is
// reported: neither the common Sync nor an HNS outage (every call refused
// as unavailable) nor the recovery from a restart that dropped remote
// endpoints pays for it, nor has the reconciler hand over every
// object's status (its reader does that, until none has read for a while).
// A status still Gathering is read again at the next Sync.
func (o *observer) reportRejections(r reconciler.SyncResult) {
	rj := &o.rejected
	var refused []reconciler.ObjectError
	for _, e := range r.Errors {
		// A backend HNS no longer has (IsReferenceGone) the reconciler
		// makes again before the retry (reconciler/vanishedep.go).
		if e.Kind == reconciler.KindLoadBalancer && !hnslb.IsUnavailable(e.Err) && !stoppedMidSync(e.Err) && !foreignHeld(e.Err) && !hnslb.IsReferenceGone(e.Err) {
			refused = append(refused, e)
		}
	}
	if len(refused) == 0 && len(rj.reported) == 0 {
		return
	}
	snap := o.statuses.StatusSnapshot()
	if snap.Gathering { // no statuses yet: taking it for none would forget what was reported
		return
	}
	owners := map[string]string{}
	for _, st := range snap.LoadBalancers {
		key := st.Key.String()
		owners[key] = st.Owner
		if st.State != reconciler.StateError {
			delete(rj.reported, key)
		}
	}
	for key := range rj.reported {
		if _, tracked := owners[key]; !tracked { // its Service was deleted
			delete(rj.reported, key)
		}
	}
	var due []string // refused anew, or with another error; then owed
	fresh := map[string]bool{}
	for _, e := range refused {
		if was, ok := rj.reported[e.Name]; ok && was.err.Error() == e.Err.Error() {
			continue
		}
		if _, _, ok := splitOwner(owners[e.Name]); !ok {
			continue
		}
		rj.reported[e.Name] = rejection{err: e.Err, code: errorCode(e.Err)}
		due = append(due, e.Name)
		fresh[e.Name] = true
	}

	codeOf := make(map[string]string, len(rj.reported))
	for key, rej := range rj.reported {
		codeOf[key] = rej.code
	}
	due = append(due, rj.bounds.round(codeOf, fresh)...)
	// One event per Service (and one on the Node) for this Sync's
	// refusals: the broadcaster would fold a second into the first's
	// series, its note unsaid (events.Batch).
	ev, flush := o.events.Batch()
	defer flush()
	for _, key := range due {
		rej := rj.reported[key]
		svc, port, _ := splitOwner(owners[key])
		switch rj.bounds.next(rej.code, key) {
		case events.OnObject:
			ev.LoadBalancerRejected(svc, port, key, rej.err)
		case events.OnNode:
			ev.LoadBalancersRejected(rej.code, rejectionsRaisedPerCode, svc, port, key, rej.err)
		}
	}
}
