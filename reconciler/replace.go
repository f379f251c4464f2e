package reconciler

import (
	"fmt"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

// removeEP deletes a realized remote endpoint that must be replaced (its
// provider address or MAC changed: on overlay, a remote subnet route that
// appeared or moved). HNS holds one endpoint per address on a network, so
// the new one can only be created once the old one is gone. The load
// balancers using it are first rewritten without it, through their own
// sync (endpointID counts an endpoint whose realized spec differs as
// missing), so they keep serving their other backends; they wait for the
// address (r.waiting), and the new endpoint's creation rewrites them with
// it in the same Sync. Writes for n load balancers: with modify, 2n + 2
// and each keeps its HNS ID; without, 4n + 2, each rewrite being HNS's
// delete and create as for any update there. A load balancer with no
// other backend is deleted and created again (2 writes).
func (r *Reconciler) removeEP(run *syncRun, ep *remoteEP) error {
	for _, k := range r.refs[ep.id].sortedKeys() {
		// The Sync's work from here, though maybe not handed to it: a
		// listing under way must not judge what it writes (noteSync), and
		// its status changes (noteSynced). declareCreates declared it.
		run.lbs[k] = struct{}{}
		if e := r.lbs[k]; e.desired != nil {
			r.syncLB(run, e)
		} else {
			r.syncRemovedLB(run, e)
		}
	}
	if n := len(r.refs[ep.id]); n > 0 {
		return fmt.Errorf("not replaced yet: %d load balancers could not be rewritten without it", n)
	}
	err := r.client.DeleteEndpoint(run.ctx, ep.id)
	if err != nil && !hnslb.IsNotFound(err) {
		return err
	}
	r.afterDelete(recordRemoteEndpoint, ep.id, err)
	ep.id, ep.realizedSpec = "", intent.RemoteEndpoint{}
	r.resolveGen++
	run.res.Deleted++
	return nil
}

// sortedKeys are the frontend keys of u's load balancers, in order.
func (u lbUsers) sortedKeys() []intent.LBKey {
	keys := make([]intent.LBKey, 0, len(u))
	for _, e := range u {
		keys = append(keys, e.key)
	}
	intent.SortLBKeys(keys)
	return keys
}
