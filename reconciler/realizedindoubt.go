package reconciler

import "github.com/hnsproxy/hnsproxy/hnslb"

// A write on a realized load balancer (a modify, the delete before a
// create where HNS cannot modify, or the delete of a Service deleted) that
// fails without saying whether HNS applied it (abandoned at its deadline
// and applied when it ran on, or answered unavailable after HNS applied
// it) leaves realized in doubt: HNS may hold the write's document, or
// nothing. The load balancer is retried, but should the Service go back to
// the realized document first (a pod not ready, then ready again, or the
// Service made again, while HNS hung), the turn took that document for
// what HNS holds and wrote nothing: the Service kept the modify's
// backends, or had no load balancer on the node, until the next drift
// repair. So a load balancer whose realized document is in doubt is
// written again, whatever realized shows
// (TestALateWriteIsNotTakenForTheRealizedLoadBalancer).

// writeUnknown puts e's realized load balancer in doubt after err, a
// failed write on it, unless err says nothing was applied; setRealized and
// clearRealized, which learn what HNS holds, end it.
func (r *Reconciler) writeUnknown(e *lbEntry, err error) {
	if e.realizedID != "" && !definitive(err) {
		e.realizedInDoubt = true
	}
}

// realizedAs reports whether HNS surely holds doc as e's realized load
// balancer, so that its turn need write nothing.
func realizedAs(e *lbEntry, doc *hnslb.LoadBalancer) bool {
	return e.realizedID != "" && !e.realizedInDoubt && sameLB(e.realized, doc)
}
