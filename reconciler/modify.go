package reconciler

import (
	"context"
	"fmt"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

// ModifyMode says when a load balancer update is an HNS modify (in place,
// same ID) rather than a delete and a create. kube-proxy has no such
// setting; hnsproxy's flag is --hns-modify-load-balancer.
type ModifyMode string

const (
	// ModifyAuto (also the empty mode) modifies where Features say HNS
	// can, until HNS shows it cannot: E_NOTIMPL from a modify, or a
	// modify HNS reported done that left the backends unchanged. From then
	// on, for the rest of the process, updates are delete + create.
	ModifyAuto ModifyMode = "auto"
	// ModifyEnabled modifies whatever the HNS version; a modify that fails
	// as above falls back to delete + create for that update only.
	ModifyEnabled ModifyMode = "enabled"
	// ModifyDisabled never modifies.
	ModifyDisabled ModifyMode = "disabled"
)

// ModifyModes are the valid modes, for flags and validation.
func ModifyModes() []string {
	return []string{string(ModifyAuto), string(ModifyEnabled), string(ModifyDisabled)}
}

// On reports whether updates start as modifies on HNS with features f.
func (m ModifyMode) On(f hnslb.Features) bool {
	switch m {
	case ModifyEnabled:
		return true
	case ModifyDisabled:
		return false
	default:
		return f.ModifyLoadBalancer
	}
}

// modifyOn reports whether updates may be HNS modifies.
func (r *Reconciler) modifyOn() bool {
	return !r.modifyTurnedOff && r.opts.Modify.On(r.opts.Features)
}

// modifiesInPlace reports whether e's update is an HNS modify: modify is
// on and only its backends change. Whether HNS applies a change of flags,
// ports, distribution or source VIP in a modify is not known, and winkernel
// modifies only when backends change, so any other change is a delete and
// a create (docs/reliability.md, "Modify that HNS cannot do").
func (r *Reconciler) modifiesInPlace(e *lbEntry) bool {
	return e.desired != nil && r.modifiesTo(e, BuildLB(e.desired, nil))
}

// modifiesTo is modifiesInPlace for the update of e to doc.
func (r *Reconciler) modifiesTo(e *lbEntry, doc *hnslb.LoadBalancer) bool {
	return r.modifyOn() && e.realizedID != "" && e.realized != nil && sameFrontendFields(e.realized, doc)
}

// modifyFailed records that HNS showed it cannot modify (why). In auto
// mode modify is off for the rest of the process; the first time is logged
// and reported (Options.ModifyTurnedOff), in any mode.
func (r *Reconciler) modifyFailed(why string, err error) {
	if r.opts.Modify == ModifyEnabled {
		if !r.modifyFailLogged {
			r.modifyFailLogged = true
			r.log.Info("HNS load balancer modify failed; --hns-modify-load-balancer=enabled keeps trying it, replacing (delete + create) each time it fails", "why", why, "err", err)
		}
		return
	}
	if r.modifyTurnedOff {
		return
	}
	r.modifyTurnedOff = true
	r.log.Info("Turning HNS load balancer modify off for the rest of this process; updates are delete + create from now on", "why", why, "err", err, "hnsVersion", r.opts.Features.Version.String())
	if r.opts.ModifyTurnedOff != nil {
		r.opts.ModifyTurnedOff()
	}
}

// modifyApplied reads a modified load balancer back where HNS is known to
// report a modify done without applying the backends
// (hnslb.ModifyMayIgnoreBackends), and reports whether HNS holds the
// backends of doc. Elsewhere it trusts HNS's answer. A failed read counts
// as applied: HNS said so, and the next drift repair checks again.
func (r *Reconciler) modifyApplied(ctx context.Context, id string, doc *hnslb.LoadBalancer) bool {
	if !hnslb.ModifyMayIgnoreBackends(r.opts.Features.Version) {
		return true
	}
	got, err := r.client.GetLoadBalancerByID(ctx, id)
	if err != nil {
		r.log.Error(err, "Reading a modified load balancer back failed", "id", id)
		return true
	}
	return sameIDSet(got.HostComputeEndpoints, doc.HostComputeEndpoints)
}

// modifyOutcome is how a modify ended when it did not fail.
type modifyOutcome int

const (
	modified modifyOutcome = iota // HNS holds the new document
	deleted                       // HNS cannot modify: the old one was deleted, create the new one
	vanished                      // the load balancer was gone already: create it anew
)

// modifyLB changes e's realized load balancer to doc in place. Unless it
// is modified, e's realized ID is cleared and the caller creates doc. An
// error is a failure to retry.
//
// Which code HNS answers when the load balancer or one of its backends is
// missing is not known (0x803b0002, 0x490 and 0x803b0007 are all seen;
// docs/simulator.md), so any of them is checked with a Get: if the load
// balancer is there (or HNS cannot say), a backend is gone and nothing is
// created beside it; only if HNS says it is gone is it created anew. Taking
// the code at its word would recreate a load balancer that still holds the
// frontend, and the create would then meet it as a "blocker".
func (r *Reconciler) modifyLB(run *syncRun, e *lbEntry, doc *hnslb.LoadBalancer) (modifyOutcome, error) {
	got, err := r.updateOnce(run, e, doc)
	switch {
	case err == nil && r.modifyApplied(run.ctx, e.realizedID, doc):
		r.setModified(e, doc, got)
		return modified, nil
	case err == nil:
		r.modifyFailed("HNS reported the modify done but kept the old backends (kubernetes/kubernetes#131466)", nil)
	case hnslb.IsNotImplemented(err):
		r.modifyFailed("HNS answered the modify: not implemented", err)
	case hnslb.IsMissingReference(err) && r.lbExists(run, e.realizedID):
		// A backend is gone, not the load balancer.
		r.forgetMissingBackends(run, e)
		return 0, err
	case hnslb.IsMissingReference(err):
		r.log.Info("Load balancer vanished behind hnsproxy's back; creating it anew", "key", e.key, "id", e.realizedID, "err", err)
		r.driftFound(KindLoadBalancer)
		r.clearRealized(e)
		return vanished, r.declareForCreate(e.key)
	default:
		return 0, err
	}
	if err := r.declareForCreate(e.key); err != nil {
		return 0, err
	}
	if err := r.deleteLB(run, e.realizedID); err != nil {
		return 0, err
	}
	r.clearRealized(e)
	return deleted, nil
}

// setModified records doc as e's realized load balancer after a modify
// HNS answered with got (its ID, where it answered one, or the one
// modified).
func (r *Reconciler) setModified(e *lbEntry, doc, got *hnslb.LoadBalancer) {
	id := e.realizedID
	if got != nil && got.ID != "" {
		id = got.ID
	}
	r.setRealized(e, id, doc, got)
}

// updateOnce is the modify of e's realized load balancer to doc: the one
// made ahead in this Sync (planLB) if it wrote the same document, else a
// call now. Its outcome is judged alike either way.
func (r *Reconciler) updateOnce(run *syncRun, e *lbEntry, doc *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	if ahead, ok := run.lbCreates[e.key]; ok && ahead.modified {
		delete(run.lbCreates, e.key)
		if ahead.doc == doc || sameLB(ahead.doc, doc) {
			return ahead.lb, ahead.err
		}
	}
	return r.client.UpdateLoadBalancer(run.ctx, e.realizedID, doc)
}

// declareForCreate declares the create a failed modify leads to, which
// declareCreates left out expecting a modify (see declareCreates).
func (r *Reconciler) declareForCreate(k intent.LBKey) error {
	if err := r.declareNow(k); err != nil {
		return fmt.Errorf("%w: %w", errStateUnwritable, err)
	}
	return nil
}
