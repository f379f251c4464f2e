package reconciler

import "time"

// A restart of HNS during which nothing called it is no outage this
// reconciler sees (outage.go), yet it may have dropped objects just the
// same. The service's instance (hnslb.Reader.ServiceInstance: the hns
// service's process on Windows) changes with each restart, so a Sync
// compares it with the one seen before, at most every
// instanceCheckInterval, and a change is reported as HNS's return from a
// restart (SyncResult.HNSReturned), for the caller to list HNS. An instance
// that cannot be told (an error: the service stopped, or no service
// control manager to ask) changes nothing: calls meet that HNS as an outage.

// instanceCheckInterval is how often a Sync asks for the instance: a
// restart nothing called HNS during is seen by the first Sync this long
// after it, and the proxier syncs at least every --sync-period.
const instanceCheckInterval = 15 * time.Second

// instanceWatch is the last HNS instance seen and when to ask again.
type instanceWatch struct {
	last      string
	nextCheck time.Time
}

// checkInstance asks for HNS's instance when a check is due and reports a
// change in run's result, unless an outage's end already reported this
// restart in the same Sync.
func (r *Reconciler) checkInstance(run *syncRun) {
	if run.now.Before(r.instance.nextCheck) {
		return
	}
	r.instance.nextCheck = run.now.Add(instanceCheckInterval)
	now, err := r.client.ServiceInstance(run.ctx)
	if err != nil || now == "" {
		return
	}
	if r.instance.last != "" && now != r.instance.last && !run.res.HNSReturned {
		run.res.HNSReturned = true
		r.log.Info("The HNS service restarted, and a restart may drop objects", "instance", r.instance.last, "now", now)
	}
	r.instance.last = now
}
