package reconciler

import (
	"slices"
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
// drift repair as before; a runbook that deletes them all meets the probe.

// networkProbeInterval is how often a Sync probes: the proxier syncs at
// least every --sync-period, 30 s by default, and kube-proxy reads the
// network at each of its syncs.
const networkProbeInterval = 30 * time.Second

// probe reads one realized load balancer and one realized endpoint of
// hnsproxy's by ID once networkProbeInterval has passed since the last
// probe, notes an endpoint not found as a suspicion of the network, and
// records in run whether either was not found. A node with neither (no
// Service, or only pods' endpoints on l2bridge) probes nothing, nor does
// one whose HNS is down or has a call hanging. Callers hold r.mu.
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
	if epID != "" {
		_, err := r.client.GetEndpointByID(run.ctx, epID)
		r.client.suspect.noteCreate(err)
		if hnslb.IsNotFound(err) {
			gone = append(gone, epID)
		}
	}
	// An ID found gone again after the listing it asked for kept it is an
	// HNS whose read by ID and listing disagree: reported once, or every
	// probe would list all of HNS.
	run.probeFoundGone = len(gone) > 0 && !slices.Contains(gone, r.probeGone)
	if len(gone) > 0 {
		r.probeGone = gone[0]
	}
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
// as hnsproxy's, or "".
func (r *Reconciler) anyRealizedLoadBalancer() string {
	for _, e := range r.lbs {
		if e.desired != nil && e.realizedID != "" {
			return e.realizedID
		}
	}
	return ""
}

// anyRealizedEndpoint is the ID of one wanted endpoint HNS has made, or "".
func (r *Reconciler) anyRealizedEndpoint() string {
	for _, ep := range r.eps {
		if ep.wanted && ep.id != "" {
			return ep.id
		}
	}
	return ""
}
