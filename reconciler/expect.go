package reconciler

import "maps"

// Expect sizes the reconciler's maps for about lbs load balancers and eps
// remote endpoints about to be handed over (a cold start's), so that they
// do not grow and rehash step by step while tens of thousands of objects
// arrive: at 10,000 Services that growth was a tenth of the cold start's
// CPU. It is only a hint; nothing else changes.
func (r *Reconciler) Expect(lbs, eps int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lbs = sized(r.lbs, lbs)
	r.dirtyLBs = sized(r.dirtyLBs, lbs)
	r.ownedLBs = sized(r.ownedLBs, lbs)
	r.baselines = sized(r.baselines, lbs)
	r.creatingLBs = sized(r.creatingLBs, lbs)
	r.eps = sized(r.eps, eps)
	r.dirtyEPs = sized(r.dirtyEPs, eps)
	r.ownedEPs = sized(r.ownedEPs, eps)
	r.creatingEPs = sized(r.creatingEPs, eps)
	r.refs = sized(r.refs, eps)
	c := &r.published.changed
	c.lbs = sized(c.lbs, lbs)
	c.eps = sized(c.eps, eps)
}

// sized is m, or a copy of it with room for n entries if it has far fewer.
func sized[K comparable, V any](m map[K]V, n int) map[K]V {
	if 2*len(m) >= n {
		return m
	}
	out := make(map[K]V, n)
	maps.Copy(out, m)
	return out
}
