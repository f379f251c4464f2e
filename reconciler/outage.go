package reconciler

import (
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// While HNS is down (restarting: every call answers RPC server unavailable
// or manager stopped) every failing object fails for the same reason, and
// its own exponential backoff (1 s, 2 s, 4 s, 8 s, ...) would keep it
// waiting for up to as long again after HNS is back: a 10 s restart left a
// change unprogrammed for 5 s more. So the first such failure opens an
// outage, and while it lasts a Sync probes HNS with one cheap read (the
// network) every outageProbeInterval. The first probe HNS answers ends the
// outage; if a probe was refused before it (HNS was down, not one object
// refused), every object that waited through the outage is retried in that
// same Sync. A refusal HNS's own probe does not see (an object refused while
// HNS answers) keeps its backoff, so it is not retried every interval. Failing objects keep their own backoff meanwhile, so an
// outage costs one call per probe, not one per object.
//
// A timeout is not an outage: a hung HNS would hang the probe too, and
// each abandoned call counts against MaxAbandonedCalls. What met a hang is
// retried when an abandoned call returns (hangreturn.go).
//
// A restart may also have dropped objects HNS held before it: public
// reports show it keeping load balancers and losing endpoints
// (docs/simulator.md, "Restart"). Nothing but a listing finds those, so
// the Sync that ends a seen outage says so (SyncResult.HNSReturned) and
// the caller lists HNS (Repair) then, not at its next period: where the
// service's instance tells (instance.go), only if it changed, so that
// calls HNS refused while it kept running cost no listing.

// outageProbeInterval is how often HNS is probed while it is down (a
// probe needs a Sync, so the proxier's min-sync-period may space them
// more): about how long after HNS returns the objects it refused are
// retried.
const outageProbeInterval = 250 * time.Millisecond

// outage is an open HNS outage; the zero value is none. confirmed: a
// probe was refused too.
type outage struct {
	open, confirmed bool
	probeAt         time.Time
}

// refusedByDownHNS reports an error of HNS being down, rather than slow.
func refusedByDownHNS(err error) bool {
	code, _ := hnslb.CodeOf(err)
	return hnslb.IsUnavailable(err) && code != hnslb.CodeTimeout
}

// noteFailure opens an outage when err says HNS is down.
func (r *Reconciler) noteFailure(now time.Time, err error) {
	if r.outage.open || !refusedByDownHNS(err) {
		return
	}
	r.outage = outage{open: true, probeAt: now.Add(outageProbeInterval)}
	r.log.Info("HNS is unavailable; probing it until it answers, then retrying what it refused", "err", err, "probeEvery", outageProbeInterval)
}

// probeOutage, when a probe is due, asks HNS for the network; once HNS
// answers (with the network or any error other than being down) the
// outage ends and, if HNS was seen down, every object waiting for a retry
// is due now.
func (r *Reconciler) probeOutage(run *syncRun) {
	if !r.outage.open || run.now.Before(r.outage.probeAt) {
		return
	}
	if _, err := r.client.GetNetworkByID(run.ctx, r.opts.NetworkID); refusedByDownHNS(err) {
		r.outage.probeAt, r.outage.confirmed = run.now.Add(outageProbeInterval), true
		return
	}
	confirmed := r.outage.confirmed
	r.outage = outage{}
	if !confirmed {
		return
	}
	// Whether HNS restarted is the service instance's to say, in this
	// Sync (checkInstance), not a second time later.
	run.outageEnded = true
	r.instance.nextCheck = time.Time{}
	// Whatever waited through the outage is tried again now: what HNS
	// refused, and what waited on it (an endpoint's delete on a load
	// balancer's update). Only the refused lose their backoff; an object
	// failing for its own reason gets one try and keeps its schedule.
	retried := 0
	r.eachRetrying(func(ref objectRef, st *objStatus, _ ...string) {
		if !st.nextRetry.After(run.now) {
			return
		}
		st.nextRetry = run.now
		retried++
		if refusedByDownHNS(st.lastErr) {
			r.limiter.Forget(ref)
		}
	})
	r.log.Info("HNS answers again; retrying what it refused", "objects", retried)
}
