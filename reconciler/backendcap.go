package reconciler

import (
	"errors"

	"github.com/hnsproxy/hnsproxy/hnslb"
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
	r.log.Info("HNS refused a load balancer with more backends than 64 (0x57) and accepted 64: this node's backend cap is now 64",
		"key", e.key, "backends", len(doc.HostComputeEndpoints), "err", refusal)
	return wrote, nil
}
