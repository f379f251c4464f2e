package reconciler

import (
	"cmp"
	"errors"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

// deletedEP is the outcome of one endpoint delete made ahead: the ID it
// deleted and HNS's answer.
type deletedEP struct {
	id  string
	err error
}

// createdEP is the outcome of one endpoint create: the ID HNS gave it.
type createdEP struct {
	id  string
	err error
}

// reply is the create's reply as far as its turn reads it (the ID).
func (c createdEP) reply() *hnslb.Endpoint {
	if c.err != nil {
		return nil
	}
	return &hnslb.Endpoint{ID: c.id}
}

// createdLB is the outcome of one load balancer create, its document, and
// the backends resolved for it (ids, missing) as of resolveGen gen.
type createdLB struct {
	doc, lb      *hnslb.LoadBalancer
	err          error
	ids, missing []string
	gen          uint64
	// replaced: the load balancer it replaces was deleted ahead with it;
	// deleteErr: that delete failed, and the create was not made.
	replaced  bool
	deleteErr error
	// modified: where HNS can modify, the write made ahead was the modify
	// of the realized load balancer in place, lb and err its reply (the
	// turn takes them in modifyLB, updateOnce).
	modified bool
}

// createAheadChunk is how many load balancers a Sync makes ahead at once:
// enough that a batch's deadline goroutine and bookkeeping are paid once
// per hundreds of calls, few enough that its documents and answers weigh
// little.
const createAheadChunk = 512

// createEndpointsAhead makes, in one batch, the creates syncWantedEP would
// make one by one: those of wanted endpoints HNS does not hold yet, none
// with an abandoned call on it. On a cold start those are every remote
// endpoint; a batch of one is left to syncWantedEP, unless load balancers
// that use it join the batch (createEndpointsThenLoadBalancers).
func (r *Reconciler) createEndpointsAhead(run *syncRun, ips []string) {
	if run.noCreates {
		return
	}
	planned := make([]string, 0, len(ips))
	specs := make([]intent.RemoteEndpoint, 0, len(ips))
	for _, ip := range ips {
		if ep := r.eps[ip]; ep != nil && ep.desired() && ep.id == "" && !r.client.busy(epToken(ip)) && r.lookups.eps[ip] == nil {
			planned = append(planned, ip)
			specs = append(specs, ep.spec)
		}
	}
	if len(planned) == 0 {
		return
	}
	if r.createEndpointsThenLoadBalancers(run, planned, specs) {
		return
	}
	if len(planned) < 2 {
		return
	}
	res := r.client.WriteBatch(run.ctx, r.opts.NetworkID, specs, nil, nil)
	r.endpointsMadeAhead(run, planned, res)
}

// endpointsMadeAhead records the endpoint creates made ahead for their
// turns (syncWantedEP).
func (r *Reconciler) endpointsMadeAhead(run *syncRun, planned []string, res writeBatchResult) {
	run.epCreates = make(map[string]createdEP, len(planned))
	for i, ip := range planned {
		run.epCreates[ip] = createdEP{res.epIDs[i], res.epErrs[i]}
	}
	r.learnNames(res.epNames)
}

// createEndpointsThenLoadBalancers makes the endpoint creates of planned
// and, in the same batch, the load balancer writes that their turns will
// make with those endpoints, and the endpoint deletes those free
// (writeAhead): a Sync of one chunk of load balancers or fewer (a change,
// not a cold start). It returns false, having made nothing, if there is
// no such write.
func (r *Reconciler) createEndpointsThenLoadBalancers(run *syncRun, planned []string, specs []intent.RemoteEndpoint) bool {
	if len(run.lbs) > createAheadChunk {
		return false
	}
	created := make(map[string]int, len(planned))
	for i, ip := range planned {
		created[ip] = i
	}
	var keys []intent.LBKey
	var made []createdLB
	var writes []pendingLB
	for _, k := range run.lbKeys() {
		if w, c, ok := r.planLB(run, k, created); ok && len(w.fills) > 0 {
			keys, made, writes = append(keys, k), append(made, c), append(writes, w)
		}
	}
	if len(writes) == 0 {
		return false
	}
	deleteIPs, deletes := r.freedDeletes(run, writes)
	r.writeAhead(run, planned, specs, keys, made, writes, deleteIPs, deletes)
	return true
}

// writeAhead makes one batch (WriteBatch): the endpoint creates of planned
// (specs), the load balancer writes of keys (made: what their turns take),
// and the deletes of the unwanted endpoints at deleteIPs those writes free
// (freedDeletes); and records each outcome for its object's turn.
func (r *Reconciler) writeAhead(run *syncRun, planned []string, specs []intent.RemoteEndpoint, keys []intent.LBKey, made []createdLB, writes []pendingLB, deleteIPs []string, deletes []freedDelete) {
	res := r.client.WriteBatch(run.ctx, r.opts.NetworkID, specs, writes, deletes)
	if len(planned) > 0 {
		r.endpointsMadeAhead(run, planned, res)
	}
	for i, k := range keys {
		if res.lbDocs[i] == nil {
			// An endpoint it uses was not created (errEndpointNotMade), or
			// not tried (the batch stopped before it): nothing was made,
			// and its turn makes it as it would after two batches.
			continue
		}
		made[i].doc, made[i].lb, made[i].err = res.lbDocs[i], res.lbs[i], res.lbErrs[i]
		made[i].ids = res.lbDocs[i].HostComputeEndpoints
		r.madeAhead(run, k, made[i], writes[i].replaces, res.lbDeleteErrs[i])
	}
	for i, ip := range deleteIPs {
		if errors.Is(res.epDeleteErrs[i], errStillUsed) {
			continue // its turn waits for the load balancer, as before
		}
		if run.epDeletes == nil {
			run.epDeletes = map[string]deletedEP{}
		}
		run.epDeletes[ip] = deletedEP{deletes[i].id, res.epDeleteErrs[i]}
	}
}

// freedDeletes are the deletes a batch of writes can make after them: of
// the Sync's unwanted endpoints with a known ID (none with an abandoned call
// on it, none deleted ahead already) whose every user, a realized load
// balancer, the batch deletes (a replacement where HNS cannot modify) or
// modifies; each waits for those writes. An endpoint no load balancer uses
// goes too.
func (r *Reconciler) freedDeletes(run *syncRun, writes []pendingLB) (ips []string, deletes []freedDelete) {
	var replacing map[string]int // a replaced or modified load balancer's ID → its write
	for j, w := range writes {
		if old := cmp.Or(w.replaces, w.modifies); old != "" {
			if replacing == nil {
				replacing = make(map[string]int, len(writes))
			}
			replacing[old] = j
		}
	}
	for _, ip := range run.unwanted {
		ep := r.eps[ip]
		if ep == nil || ep.desired() || ep.id == "" || madeDelete(run, ip) || r.client.busy(epToken(ip), idToken(ep.id)) {
			continue
		}
		users := r.refs[ep.id]
		after := make([]int, 0, len(users))
		for _, u := range users {
			j, ok := replacing[u.realizedID]
			if !ok {
				break
			}
			after = append(after, j)
		}
		if len(after) < len(users) {
			continue
		}
		ips, deletes = append(ips, ip), append(deletes, freedDelete{id: ep.id, after: after})
	}
	return ips, deletes
}

// deleteEndpointsAhead makes, in one batch, the deletes syncUnwantedEP
// would make one by one: those of unwanted endpoints with a known ID that
// no realized load balancer uses, none with an abandoned call on it. A
// Service scaled down or deleted at thousands of nodes drops dozens at
// once; a batch of one is left to syncUnwantedEP.
func (r *Reconciler) deleteEndpointsAhead(run *syncRun, ips []string) {
	var planned []string
	var deletes []freedDelete
	for _, ip := range ips {
		ep := r.eps[ip]
		if ep == nil || ep.desired() || ep.id == "" || len(r.refs[ep.id]) > 0 || madeDelete(run, ip) || r.client.busy(epToken(ip), idToken(ep.id)) {
			continue
		}
		planned = append(planned, ip)
		deletes = append(deletes, freedDelete{id: ep.id})
	}
	if len(planned) < 2 {
		return
	}
	errs := r.client.WriteBatch(run.ctx, r.opts.NetworkID, nil, nil, deletes).epDeleteErrs
	if run.epDeletes == nil {
		run.epDeletes = make(map[string]deletedEP, len(planned))
	}
	for i, ip := range planned {
		run.epDeletes[ip] = deletedEP{deletes[i].id, errs[i]}
	}
}

// deleteEndpointOnce is the delete of endpoint id at ip: the one made ahead
// in this Sync if it deleted that ID, else a call now.
func (r *Reconciler) deleteEndpointOnce(run *syncRun, ip, id string) error {
	if d, ok := run.epDeletes[ip]; ok && d.id == id {
		delete(run.epDeletes, ip)
		return d.err
	}
	return r.client.DeleteEndpoint(run.ctx, id)
}

// createLoadBalancersAhead makes, in one batch, the creates syncLB would
// make one by one for new load balancers (none realized, none uncertain, no
// foreign holder known, a backend resolved, no abandoned call on it), and,
// where HNS cannot modify, the deletes and creates of the updates (each
// create after its delete), then the deletes of the endpoints those free
// (writeAhead). On a cold start those are every load balancer; a batch of
// one call is left to syncLB.
func (r *Reconciler) createLoadBalancersAhead(run *syncRun, keys []intent.LBKey) {
	if run.noCreates {
		return
	}
	planned := make([]intent.LBKey, 0, len(keys))
	made := make([]createdLB, 0, len(keys))
	writes := make([]pendingLB, 0, len(keys))
	calls := 0
	for _, k := range keys {
		w, c, ok := r.planLB(run, k, nil)
		if !ok {
			continue
		}
		planned, made, writes = append(planned, k), append(made, c), append(writes, w)
		calls += w.calls()
	}
	if calls == 0 {
		return
	}
	deleteIPs, deletes := r.freedDeletes(run, writes)
	if calls+len(deletes) < 2 {
		return // a batch of one call: its turn makes it
	}
	r.writeAhead(run, nil, nil, planned, made, writes, deleteIPs, deletes)
}

// madeDelete reports whether the endpoint at ip was deleted ahead in this
// Sync.
func madeDelete(run *syncRun, ip string) bool {
	_, ok := run.epDeletes[ip]
	return ok
}

// planLB is the write a load balancer's turn would make that a batch can
// make ahead (see createLoadBalancersAhead), resolved after the batch's
// endpoint creates of created (nil: none; resolveAfter), with what its
// turn takes from it; ok is false if there is none.
func (r *Reconciler) planLB(run *syncRun, k intent.LBKey, created map[string]int) (w pendingLB, c createdLB, ok bool) {
	e := r.lbs[k]
	modifies := e != nil && r.modifiesInPlace(e)
	if e == nil || e.desired == nil || e.uncertain != nil || r.foreignHeld[k] != "" ||
		has(run.unchecked, k) || r.lookups.lbs[k] != nil || r.client.busy(lbToken(k), idToken(e.realizedID)) ||
		// Where HNS may report a modify done without applying it, the
		// turn reads each one back (modifyApplied).
		modifies && hnslb.ModifyMayIgnoreBackends(r.opts.Features.Version) {
		return w, c, false
	}
	if _, done := run.lbCreates[k]; done {
		return w, c, false
	}
	ids, missing, fills, ok := r.resolveAfter(e.desired, created)
	if !ok || len(ids) == 0 {
		return w, c, false
	}
	doc := BuildLB(e.desired, ids)
	if len(fills) == 0 && realizedAs(e, doc) {
		return w, c, false
	}
	c = createdLB{doc: doc, ids: ids, missing: missing, gen: r.resolveGen, modified: modifies}
	if modifies {
		return pendingLB{lbWrite: lbWrite{doc: doc}, modifies: e.realizedID, fills: fills}, c, true
	}
	return pendingLB{lbWrite: lbWrite{doc: doc, replaces: e.realizedID}, fills: fills}, c, true
}

// calls is how many HNS calls w makes: its create or modify, and a delete
// first if it replaces one.
func (w pendingLB) calls() int {
	if w.replaces != "" {
		return 2
	}
	return 1
}

// madeAhead records a load balancer write made ahead for its turn: the
// create's outcome in c, and where it replaced one, whether that delete
// went through (what HNS now holds is recorded at once; the turn counts
// it).
func (r *Reconciler) madeAhead(run *syncRun, k intent.LBKey, c createdLB, replaces string, deleteErr error) {
	if replaces != "" {
		if deleteErr == nil || hnslb.IsNotFound(deleteErr) {
			r.afterDelete(recordLoadBalancer, replaces, deleteErr)
			r.clearRealized(r.lbs[k])
			c.replaced = true
		} else {
			c.deleteErr = deleteErr
		}
	}
	if run.lbCreates == nil {
		run.lbCreates = map[intent.LBKey]createdLB{}
	}
	run.lbCreates[k] = c
}

// createOnce is the create of doc for e: the one made ahead in this Sync
// if it made the same document, else a call now. A different document (an
// earlier load balancer's failure made a local backend unknown since) has
// the one made ahead deleted first; where the create made ahead lost its
// reply, it may be in HNS, so it becomes e's uncertain create for the next
// Sync to find (resolveUncertainLB), and nothing is created now.
func (r *Reconciler) createOnce(run *syncRun, e *lbEntry, doc *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	ahead, ok := run.lbCreates[e.key]
	if !ok {
		return r.client.CreateLoadBalancer(run.ctx, doc)
	}
	delete(run.lbCreates, e.key)
	if ahead.doc == doc || sameLB(ahead.doc, doc) {
		return ahead.lb, ahead.err
	}
	if ahead.err != nil && !definitive(ahead.err) {
		e.uncertain = ahead.doc
		return nil, ahead.err
	}
	if ahead.err == nil {
		r.own(recordLoadBalancer, ahead.lb.ID) // ours: its delete is confirmed as any
		if err := r.deleteLB(run, ahead.lb.ID); err != nil {
			r.keepToDelete(ahead.lb.ID)
			return nil, err // not definitive: the key's next Sync looks for what it holds
		}
	}
	return r.client.CreateLoadBalancer(run.ctx, doc)
}

// keepToDelete makes a load balancer made ahead whose delete failed
// hnsproxy's, due for deletion: left unowned, the next Sync would take it
// for another agent's on its frontend and, on a tenant's frontend, never
// remove it (found by the fault soak, seed 3).
func (r *Reconciler) keepToDelete(id string) {
	r.own(recordLoadBalancer, id)
	r.staleLBs[id] = &staleObj{reason: "ours, made ahead and not used"}
}

// dropUnusedCreates deletes the load balancers made ahead that their turn
// did not take (their backends became unknown since), so none is left
// unowned on a desired frontend; their load balancers are synced again. A
// modify made ahead and not taken is recorded as what HNS now holds.
func (r *Reconciler) dropUnusedCreates(run *syncRun) {
	for k, ahead := range run.lbCreates {
		if ahead.err != nil {
			r.keepUncertainAhead(k, ahead)
			continue
		}
		if ahead.modified {
			if e := r.lbs[k]; e != nil && e.realizedID != "" {
				r.setModified(e, ahead.doc, ahead.lb)
				r.markLB(e)
			}
			continue
		}
		r.own(recordLoadBalancer, ahead.lb.ID) // ours: its delete is confirmed as any
		if err := r.deleteLB(run, ahead.lb.ID); err != nil {
			r.log.Error(err, "Deleting a load balancer made ahead and not used failed; it is deleted later", "key", k, "id", ahead.lb.ID)
			r.keepToDelete(ahead.lb.ID)
		}
		if e := r.lbs[k]; e != nil {
			r.markLB(e)
		}
	}
	run.lbCreates = nil
}

// keepUncertainAhead makes a create made ahead whose reply was lost, and
// that its turn did not take, its key's uncertain create: HNS may have made
// it, and left unowned on a tenant's frontend it would be taken for another
// agent's for good (found by the fault soak, seed 5). The key's next Sync
// looks for it (resolveUncertainLB) and then deletes or updates it.
func (r *Reconciler) keepUncertainAhead(k intent.LBKey, ahead createdLB) {
	e := r.lbs[k]
	if definitive(ahead.err) || e == nil || e.realizedID != "" || e.uncertain != nil {
		return
	}
	e.uncertain = ahead.doc
	r.markLB(e)
}
