package reconciler

import (
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// The probe: what a runbook deletes behind hnsproxy's back on a node where
// nothing changes (Get-HnsPolicyList | Remove-HnsPolicyList, Get-HnsEndpoint
// | Remove-HnsEndpoint, Remove-HnsNetwork) only a listing tells in full,
// and the drift repair lists every --drift-repair-period (5 minutes by
// default). kube-proxy reads its network at each sync and makes nothing
// else again while its Service does not change. So a Sync reads one load
// balancer and one endpoint of hnsproxy's by ID every networkProbeInterval:
// two documents of bounded size whatever the cluster's size. An endpoint
// not found makes the network suspect (network.go), whose endpoints go with
// it; either not found, with the network in place, is reported
// (SyncResult.ObjectsGone) for the caller to list HNS at once, as after an
// HNS restart. A deletion of objects the probe does not read waits for the
// drift repair as before; a runbook that deletes them all meets the probe,
// which reports it once: nothing more until a listing has found the
// object it reported gone (reportedGoneUnjudged).

// networkProbeInterval is how often a Sync probes: the proxier syncs at
// least every --sync-period, 30 s by default, and kube-proxy reads the
// network at each of its syncs.
const networkProbeInterval = 30 * time.Second

// probe reads one realized load balancer and one realized endpoint of
// hnsproxy's by ID once networkProbeInterval has passed since the last
// probe, notes an endpoint not found as a suspicion of the network, and
// records in run whether either was not found. A node with neither (no
// Service with a backend) probes nothing, one with only pods' endpoints
// (l2bridge, no remote backend) reads a load balancer alone, and one whose
// HNS is down or has a call hanging reads nothing. Callers hold r.mu.
func (r *Reconciler) probe(run *syncRun) {
	// While HNS is down or a call hangs, its reads would be refused or hang
	// too; the outage's end and a hang's return have their own handling.
	if run.now.Before(r.probeAt) || r.outage.open || r.client.hanging() {
		return
	}
	lbID, epID := r.anyRealizedLoadBalancer(), r.anyRealizedEndpoint()
	if lbID == "" && epID == "" {
		return
	}
	r.probeAt = run.now.Add(networkProbeInterval)
	var gone []string
	if lbID != "" {
		if _, err := r.client.GetLoadBalancerByID(run.ctx, lbID); hnslb.IsNotFound(err) {
			gone = append(gone, lbID)
		}
	}
	// A read abandoned at its deadline: the next would hang too, holding
	// the Sync for another deadline.
	if epID != "" && !r.client.hanging() {
		_, err := r.client.GetEndpointByID(run.ctx, epID)
		r.client.suspect.noteCreate(err)
		if hnslb.IsNotFound(err) {
			gone = append(gone, epID)
		}
	}
	if len(gone) == 0 || r.reportedGoneUnjudged() {
		return
	}
	run.probeFoundGone, r.probeGone = true, gone[0]
}

// reportedGoneUnjudged reports whether the ID the probe last reported gone
// is still owned: no listing has found it gone since. Either the listing
// the report asked for has not ended (minutes on a large node, while the
// probes meet the same deletion's other objects gone), or it found the
// object there: an HNS whose read by ID and listing disagree. A report
// then would list all of HNS once more, or at every probe. A listing
// that finds it gone disowns it (repairOwned), and so does a delete of
// hnsproxy's.
func (r *Reconciler) reportedGoneUnjudged() bool {
	return r.probeGone != "" && (has(r.ownedLBs, r.probeGone) || has(r.ownedEPs, r.probeGone))
}

// reportProbe reports what the probe found gone, unless the network is
// what went (the caller restarts then); after checkSuspectedNetwork.
func (r *Reconciler) reportProbe(run *syncRun) {
	if !run.probeFoundGone || run.res.NetworkChanged != nil {
		return
	}
	run.res.ObjectsGone = true
	r.log.V(2).Info("The probe found an object of hnsproxy's gone from HNS, deleted behind its back", "id", r.probeGone)
}

// anyRealizedLoadBalancer is the ID of one wanted load balancer HNS holds
// as hnsproxy's, or "". One whose last write failed is left out: that
// write may have been applied all the same (a delete whose reply was
// lost), and its retry meets whatever HNS holds.
func (r *Reconciler) anyRealizedLoadBalancer() string {
	for _, e := range r.lbs {
		if e.desired != nil && e.realizedID != "" && e.st.state != StateError {
			return e.realizedID
		}
	}
	return ""
}

// anyRealizedEndpoint is the ID of one wanted endpoint HNS has made, or "";
// as for load balancers, not one whose last write failed.
func (r *Reconciler) anyRealizedEndpoint() string {
	for _, ep := range r.eps {
		if ep.wanted && ep.id != "" && ep.st.state != StateError {
			return ep.id
		}
	}
	return ""
}
