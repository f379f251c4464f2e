package reconciler

import "time"

// A restart of HNS during which nothing called it is no outage this
// reconciler sees (outage.go), yet it may have dropped objects just the
// same. The service's instance (hnslb.Reader.ServiceInstance: the hns
// service's process on Windows) changes with each restart, so a Sync
// compares it with the one seen before, at most every
// instanceCheckInterval, and a change is reported as HNS's return from a
// restart (SyncResult.HNSReturned), for the caller to list HNS. It also
// judges the outages HNS's calls meet: one the same instance outlived is no
// restart. Where the instance cannot be told (an error: the service
// stopped, or no service control manager to ask, as under Wine), an outage
// that ends counts as a restart.

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
// restart in run's result: an instance that changed, or an outage that
// ended in this Sync where the instance cannot be compared (not told now,
// or never before). An outage the same instance outlived (HNS refused calls
// and kept running) is no restart.
func (r *Reconciler) checkInstance(run *syncRun) {
	if run.now.Before(r.instance.nextCheck) {
		return
	}
	r.instance.nextCheck = run.now.Add(instanceCheckInterval)
	now, err := r.client.ServiceInstance(run.ctx)
	told := err == nil && now != "" && r.instance.last != ""
	switch {
	case told && now != r.instance.last:
		run.res.HNSReturned = true
		r.log.Info("The HNS service restarted, and a restart may drop objects", "instance", r.instance.last, "now", now)
	case run.outageEnded && !told:
		run.res.HNSReturned = true
	}
	if err == nil && now != "" {
		r.instance.last = now
	}
}
