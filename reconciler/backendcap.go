package reconciler

import (
	"errors"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

// Learning the backend cap. The default cap comes from the OS build, but a
// build nobody published may still enforce 64 destinations per load
// balancer, and then HNS refuses every larger one with 0x57 ("invalid
// number of destinations", kubernetes/kubernetes#98680) and a retry of the
// same document fails forever. So when HNS answers a create with exactly
// ERROR_INVALID_PARAMETER and the document has more than 64 backends, the
// reconciler tries once more with the first 64: if HNS takes it, the cap is
// 64 on this node, the load balancer serves meanwhile, and SyncResult
// reports the learned cap for the proxier to feed into the desired state
// (which picks its usual stable subset). If 64 fail too, the cap was not
// the reason and the first error stands.

// capRefusal reports whether err, answering doc's create, may be the
// 64-destination cap: 0x57 exactly, more than 64 backends, and learning on
// (Options.LearnBackendCap: --max-backends-per-lb unset).
func (r *Reconciler) capRefusal(err error, doc *hnslb.LoadBalancer) bool {
	var he *hnslb.Error
	return r.opts.LearnBackendCap && r.learnedCap == 0 && errors.As(err, &he) && he.Code == hnslb.CodeInvalidParameter &&
		len(doc.HostComputeEndpoints) > hnslb.MaxBackendsLegacy
}

// createAtLegacyCap retries e's create with the first 64 of doc's backends
// after HNS refused doc with refusal; on success the node's cap is learned.
func (r *Reconciler) createAtLegacyCap(run *syncRun, e *lbEntry, doc *hnslb.LoadBalancer, refusal error) (bool, error) {
	trimmed := *doc
	trimmed.HostComputeEndpoints = doc.HostComputeEndpoints[:hnslb.MaxBackendsLegacy:hnslb.MaxBackendsLegacy]
	wrote, err := r.createLB(run, e, &trimmed, "")
	if err != nil {
		r.log.Info("HNS refused a load balancer with more than 64 backends, and 64 too: not the backend cap", "key", e.key,
			"backends", len(doc.HostComputeEndpoints), "err", refusal, "errAt64", err)
		return false, refusal
	}
	r.learnedCap = hnslb.MaxBackendsLegacy
	r.snapshotDue = true // the state file keeps it (below)
	r.log.Info("HNS refused a load balancer with more backends than 64 (0x57) and accepted 64: this node's backend cap is now 64",
		"key", e.key, "backends", len(doc.HostComputeEndpoints), "err", refusal)
	return wrote, nil
}

// Keeping the learned cap. A restart that forgot it would want every
// backend again, find the adopted load balancer holding 64, and replace it
// (delete and create on HNS without modify: the frontend cut), be refused,
// learn the cap, and replace it once more with the desired subset. So the
// state file keeps the cap with the build it was learned on, and Start
// restores it for that build only: a cumulative update changes the build
// (its UBR) or HNS's version, and the next create over 64 then asks HNS
// again, which is how an update that lifts the cap is found; with the
// build unknown an update cannot be told, so nothing is restored. With learning
// off (--max-backends-per-lb) the record is not read, and the next snapshot
// drops it.

// learnedCapRecord is the learned cap as the state file keeps it.
type learnedCapRecord struct {
	Cap   int    `json:"cap"`
	Build string `json:"build"`
}

// capBuildOf names the build a learned cap holds for: the OS build and
// HNS's version (an unknown OS build still changes with HNS's version).
func capBuildOf(osBuild hnslb.OSBuild, v hnslb.Version) string {
	return osBuild.String() + " HNS " + v.String()
}

// learnedCapRecord is what the next snapshot keeps of the learned cap.
func (r *Reconciler) learnedCapRecord() *learnedCapRecord {
	if r.learnedCap == 0 {
		return nil
	}
	return &learnedCapRecord{Cap: r.learnedCap, Build: capBuildOf(r.opts.OSBuild, r.opts.Features.Version)}
}

// keptBackendCap is the cap rec keeps for a start on osBuild with features
// and learning on or off (0: none), and why a record lower than the
// build's cap is dropped ("" when kept or when there is nothing to keep).
func keptBackendCap(rec *learnedCapRecord, learn bool, osBuild hnslb.OSBuild, features hnslb.Features) (kept int, dropped string) {
	switch {
	case rec == nil || !learn || rec.Cap <= 0 || rec.Cap >= features.MaxBackends:
		return 0, ""
	case !osBuild.Known():
		// HNS's version alone spans many cumulative updates: one that
		// lifted the cap would go unseen.
		return 0, "The kept backend cap is dropped: the OS build is unknown, so an update that lifted the cap could not be told; the next load balancer of more backends asks HNS again"
	case rec.Build != capBuildOf(osBuild, features.Version):
		return 0, "The backend cap learned on another build is dropped: the next load balancer of more backends asks HNS again"
	}
	return rec.Cap, ""
}

// restoreLearnedCap takes back, at Start, the cap the state file kept if
// it was learned on this build, known, and is lower than the build's.
func (r *Reconciler) restoreLearnedCap(rec *learnedCapRecord) {
	kept, dropped := keptBackendCap(rec, r.opts.LearnBackendCap, r.opts.OSBuild, r.opts.Features)
	if dropped != "" {
		r.log.Info(dropped, "learnedCap", rec.Cap, "learnedOn", rec.Build, "build", capBuildOf(r.opts.OSBuild, r.opts.Features.Version))
	}
	if kept == 0 {
		return
	}
	r.learnedCap = kept
	r.log.Info("Backend cap per load balancer kept from the state file: HNS refused more on this build", "maxBackends", kept, "build", rec.Build)
}

// LearnedBackendCap is the backend cap HNS was found to enforce (0: none),
// learned since Start or kept from the state file by it.
func (r *Reconciler) LearnedBackendCap() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.learnedCap
}

// overLearnedCap: lb has more backends than the cap Start kept, so it was
// computed before the cap was known and will be handed again at the cap
// (the proxier lowers its cap from LearnedBackendCap after Start). Its
// listed load balancers wait for that hand-over instead of being judged
// against this one, which would replace the subset HNS holds.
func (r *Reconciler) overLearnedCap(lb *intent.LB) bool {
	return r.learnedCap > 0 && len(lb.Backends) > r.learnedCap
}
