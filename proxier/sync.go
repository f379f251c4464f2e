package proxier

import (
	"context"
	"fmt"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"

	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
)

// Sync recomputes the Services that changed since the last sync, hands the
// resulting load balancers and remote endpoints to the reconciler and lets
// it converge HNS. It never lists HNS; the drift repair, which does, runs
// beside it (repair.go): periodically, and when objects wait for what only
// a listing tells.
func (p *Proxier) Sync(ctx context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	logger := klog.FromContext(ctx)
	stats := SyncStats{Start: p.clock.Now()}
	changes := p.tracker.take()
	if p.startChanges != nil {
		// The first sync completes the start: Run computed every Service
		// and the reconciler adopted or programmed them. Like kube-proxy's
		// first sync it is a full one, timed from when Run began.
		changes.addReported(*p.startChanges)
		p.startChanges = nil
		stats.Full, stats.Start = true, p.startedAt
	}
	stats.ServiceChanges, stats.EndpointChanges = changes.serviceChanges, changes.endpointChanges

	repairDue := p.repairDue()
	p.noteUnrouted(changes.routingNodes)
	if repairDue && p.opts.RemoteSubnets != nil {
		p.readRemoteSubnets(ctx)
	} else {
		p.readSubnetsForTriggers(ctx)
	}
	p.readHealthCheckGateway(ctx, repairDue)
	if !p.initialized || p.configChanged() {
		stats.Full = true
		stats.ServicesComputed = p.computeAll()
	} else {
		for name := range changes.services {
			p.computeService(name, p.state)
		}
		stats.ServicesComputed = len(changes.services)
	}
	// A backend in no known subnet asked for a read: done before the
	// reconciler creates its endpoint, so a new node's pod gets its node's
	// provider address in this sync rather than a replacement later.
	if !p.subnets.fresh && p.readSubnetsForTriggers(ctx) && p.configChanged() {
		stats.Full = true
		stats.ServicesComputed += p.computeAll()
	}
	p.subnets.fresh = false

	if repairDue {
		p.startRepair(ctx)
	}
	if len(changes.localLeft) > 0 {
		p.opts.Reconciler.RecheckLocal(changes.localLeft)
	}
	if len(changes.localReturned) > 0 {
		p.opts.Reconciler.LocalReturned(changes.localReturned)
	}
	stats.Result = p.opts.Reconciler.Sync(ctx)
	// The stop ended ctx during the Sync (read before a changed network
	// ends it below): what failed are the calls the stop kept from HNS.
	stopped := ctx.Err() != nil
	// After HNS, as kube-proxy does: a health-check node port counts a
	// local endpoint only once this sync has tried to program it.
	p.updateHealthChecks()
	if stats.Result.NetworkChanged != nil {
		p.noteNetworkChanged(ctx, stats.Result.NetworkChanged)
	}
	if stats.Result.HNSBack {
		p.noteHNSBack()
	}
	if stats.Result.HNSReturned {
		p.noteHNSReturned(ctx)
	} else if stats.Result.ObjectsGone {
		p.noteObjectsGone(ctx)
	}
	p.listingWanted = stats.Result.ListingWanted
	p.repairLeft = stats.Result.RepairLeft > 0
	if p.lookupDue() {
		p.startLookup(ctx)
	}
	p.reportNodeCauses()
	p.reportReconcile(stats.Result)
	p.learnBackendCap(ctx, stats.Result.LearnedBackendCap)
	stats.End = p.clock.Now()
	for _, times := range changes.triggerTimes {
		for _, t := range times {
			if stats.ProgrammingLatency == nil {
				stats.ProgrammingLatency = map[intent.IPFamily][]time.Duration{}
			}
			stats.ProgrammingLatency[t.family] = append(stats.ProgrammingLatency[t.family], stats.End.Sub(t.at))
		}
	}
	stats.NoLocalEndpoints = p.tally.noLocalEndpoints()
	stats.Truncated, stats.MixedPortDropped = p.tally.total.truncated, p.tally.total.mixedPortDropped
	stats.NodeCauseServices = p.nodeCauses.servicesByKind()
	p.markSynced(stats.End)
	if p.opts.Observer != nil {
		p.opts.Observer.SyncDone(stats)
	}
	switch {
	case stopped && stats.Result.Failed > 0:
		logger.Info("Stopped during a sync; what it did not program is programmed at the next start", "notProgrammed", stats.Result.Failed)
	case stats.Result.Failed > 0:
		// Each retry's sync: at --v=2, as "Synced". The reconciler logs
		// each object's failure when it starts or changes.
		logger.V(2).Info("HNS sync incomplete; failed objects are retried with backoff", "failed", stats.Result.Failed, "pending", stats.Result.Pending)
	}
	logger.V(2).Info("Synced", "services", stats.ServicesComputed, "full", stats.Full, "created", stats.Result.Created,
		"updated", stats.Result.Updated, "deleted", stats.Result.Deleted, "elapsed", stats.End.Sub(stats.Start))
	p.scheduleNext()
}

// ReasonBackendCapLowered is the Warning event on the Node when HNS
// refused a load balancer of more than 64 backends and accepted 64.
const ReasonBackendCapLowered = "HNSBackendCapLowered"

// learnBackendCap lowers the cap the desired state uses to the one the
// reconciler found HNS enforcing (the reconciler reports, the proxier feeds
// it in: the desired state never reads the reconciler). The changed config
// recomputes every Service at the next sync, which follows as soon as
// --min-sync-period allows.
func (p *Proxier) learnBackendCap(ctx context.Context, learned int) {
	was, lowered := p.cfg.LowerBackendCap(learned)
	if !lowered {
		return
	}
	klog.FromContext(ctx).Info("Lowered the backend cap per load balancer: HNS refused more with 0x57 (invalid parameter) and accepted the lower cap",
		"maxBackends", learned, "was", was, "hnsVersion", p.cfg.Features.Version)
	p.warnNode(ctx, ReasonBackendCapLowered, "Sync",
		"HNS refused a load balancer with more than %d backends and accepted %d: Services with more endpoints get a stable subset of %d on this node (was %d)",
		learned, learned, learned, was)
	p.queue.Add(syncKey)
}

// keepBackendCap, after the reconciler's Start, lowers the cap to one it
// kept from before a restart on this build, and computes every Service
// again before the first Sync, which then finds the adopted load balancers
// equal to the desired subset instead of replacing them (the reconciler
// adopts against what it is handed until that Sync). The Node had its
// event when the cap was learned; the reconciler logs the cap kept.
func (p *Proxier) keepBackendCap(ctx context.Context) {
	if _, lowered := p.cfg.LowerBackendCap(p.opts.Reconciler.LearnedBackendCap()); lowered {
		klog.FromContext(ctx).V(2).Info("Computing every Service again at the backend cap kept from before the restart", "maxBackends", p.cfg.MaxBackends)
		p.computeAll()
	}
}

// scheduleNext queues the next sync at the earliest of: the periodic sync,
// the next object retry, the next drift repair (the sync that starts it).
// While a drift repair's work is left it queues the next at once, past
// --min-sync-period: the reconciler does that work a chunk per sync so
// that changes made meanwhile wait for one chunk, not for all of it, and
// the work would otherwise take a min-sync-period per chunk.
func (p *Proxier) scheduleNext() {
	if p.repairLeft {
		p.queue.Add(syncKey)
		return
	}
	now := p.clock.Now()
	next := now.Add(p.opts.SyncPeriod)
	if t, ok := p.opts.Reconciler.NextRetry(); ok && t.Before(next) {
		next = t
	}
	if r := p.nextRepair(); p.opts.RepairPeriod > 0 && !p.repairing && r.Before(next) {
		next = r
	}
	if p.listingWanted && !p.repairing && p.repairRetryAt.Before(next) {
		next = p.repairRetryAt // a failed one backs off
	}
	if r, ok := p.nextSubnetRead(); ok && r.Before(next) {
		next = r
	}
	if min := now.Add(p.minSyncWait()); next.Before(min) {
		next = min
	}
	p.queue.AddAfter(syncKey, next.Sub(now))
}

// configChanged re-derives the node-dependent part of the configuration and
// reports whether it differs from what the current results were computed with.
func (p *Proxier) configChanged() bool {
	return !reflect.DeepEqual(p.nodeConfig(), p.computedWith)
}

// nodeConfig fills node IPs (those --bind-address does not name), the
// zone and the pod CIDRs from the Node.
func (p *Proxier) nodeConfig() desired.Config {
	cfg := p.cfg
	node, err := p.nodes.Get(p.opts.NodeName)
	if err != nil {
		return cfg
	}
	cfg.Zone = node.Labels[v1.LabelTopologyZone]
	cfg.PodCIDRs = desired.PodCIDRsOf(node)
	if skipped := desired.SkippedNodeAddresses(node); !slices.Equal(skipped, p.skippedNodeAddresses) {
		p.skippedNodeAddresses = skipped
		if len(skipped) > 0 {
			p.handlerLog.Info("Warning: Node addresses skipped: not IP addresses as kube-proxy reads them (an IPv6 zone is refused)", "node", node.Name, "addresses", skipped)
		}
	}
	bound := p.opts.Config.NodeIPs // --bind-address's family
	ips := desired.NodeIPs(node, bound)
	if len(desired.NodeHostIPs(node)) == 0 && len(cfg.NodeIPs) > len(bound) {
		// A Node recreated or re-registered before its addresses are
		// filled would otherwise empty this node's HNS (of the families
		// --bind-address does not name) in one sync: keep the last good
		// addresses until new ones appear.
		p.warnNodeAddressesMissing(node, cfg.NodeIPs)
		return cfg
	}
	p.nodeAddressesMissing = false
	cfg.NodeIPs = ips
	return cfg
}

// nodeAddressWait is how often a start waiting for node addresses looks again.
const nodeAddressWait = time.Second

// waitForNodeAddresses returns once the node has an address (or ctx ends).
// A first computation without one would want nothing, and the first sync
// would prune every load balancer of a previous run (a restart while the
// Node is being re-registered); waiting leaves HNS as it is. A Node not
// registered yet (kubelet starts after hnsproxy, or the Node was deleted)
// is told apart from one without addresses: there is no Node to raise the
// event on, and the operator looks for the kubelet, not the cloud
// controller.
func (p *Proxier) waitForNodeAddresses(ctx context.Context) error {
	var reported string
	return wait.PollUntilContextCancel(ctx, nodeAddressWait, true, func(context.Context) (bool, error) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if len(p.nodeConfig().NodeIPs) > 0 {
			return true, nil
		}
		_, err := p.nodes.Get(p.opts.NodeName)
		switch {
		case err != nil && reported == "":
			reported = "unregistered"
			klog.FromContext(ctx).Info("Node is not registered yet; hnsproxy waits for it and an address of it before its first sync and leaves HNS as it is (if kubelet registers this node under another name, set --hostname-override to it)", "node", p.opts.NodeName)
		case err == nil && reported != ReasonNodeAddressesMissing:
			reported = ReasonNodeAddressesMissing
			klog.FromContext(ctx).Info("Node has no InternalIP or ExternalIP yet; hnsproxy waits for one before its first sync and leaves HNS as it is", "node", p.opts.NodeName)
			p.warnNode(ctx, ReasonNodeAddressesMissing, "Start",
				"Node has no InternalIP or ExternalIP address; hnsproxy waits for one before its first sync and leaves HNS as it is")
		}
		return false, nil
	})
}

// ReasonNodeAddressesMissing is the Warning event on the Node when its
// status has no InternalIP or ExternalIP: the last known addresses stay in
// use, or a start waits for one.
const ReasonNodeAddressesMissing = "NodeAddressesMissing"

// warnNode raises a Warning event on this node's Node object; without a
// recorder, or while the Node cannot be read, it logs why it could not.
func (p *Proxier) warnNode(ctx context.Context, reason, action, note string, args ...any) {
	if p.opts.Recorder == nil {
		return
	}
	node, err := p.nodes.Get(p.opts.NodeName)
	if err != nil {
		klog.FromContext(ctx).Error(err, "Reading the Node to raise an event on it", "reason", reason)
		return
	}
	p.opts.Recorder.Eventf(node, nil, v1.EventTypeWarning, reason, action, note, args...)
}

// warnNodeAddressesMissing reports, once per streak, that the Node lost its
// InternalIPs and ExternalIPs and the last good ones stay in use.
func (p *Proxier) warnNodeAddressesMissing(node *v1.Node, kept map[intent.IPFamily]netip.Addr) {
	if p.nodeAddressesMissing {
		return
	}
	p.nodeAddressesMissing = true
	klog.InfoS("Node has no InternalIP or ExternalIP; keeping the last known node addresses", "node", node.Name, "addresses", kept)
	if p.opts.Recorder != nil {
		p.opts.Recorder.Eventf(node, nil, v1.EventTypeWarning, ReasonNodeAddressesMissing, "Sync",
			"Node has no InternalIP or ExternalIP address; hnsproxy keeps programming HNS with the last known node addresses %v until it has one", kept)
	}
}

// computeAll recomputes every Service from a fresh desired state, then hands
// the reconciler every frontend that differs from before.
func (p *Proxier) computeAll() int {
	p.cfg = p.nodeConfig()
	p.computedWith = p.cfg
	p.initialized = true
	old := p.state
	svcs, err := p.services.List(labels.Everything())
	p.state = desired.NewStateFor(p.cfg, len(svcs))
	p.tally = newTallies()
	p.health = map[types.NamespacedName]desired.HealthCheck{}
	if err != nil {
		return 0
	}
	if len(old.LBs) == 0 { // a first hand-over: a load balancer and a remote endpoint or so per Service
		p.opts.Reconciler.Expect(len(svcs), len(svcs))
	}
	bySvc := p.slicesByService(len(svcs))
	for _, svc := range svcs {
		name := types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}
		p.compute(svc, name, bySvc[name], old)
	}
	for key := range old.LBs {
		if _, ok := p.state.LBs[key]; !ok {
			p.opts.Reconciler.Delete(key)
		}
	}
	// Every endpoint but the source VIP's came with a Service's change; the
	// reconciler ignores an unchanged Upsert, so hand over the whole set.
	for _, ep := range p.state.RemoteEndpoints {
		p.opts.Reconciler.UpsertEndpoint(ep)
	}
	for ip := range old.RemoteEndpoints {
		if _, ok := p.state.RemoteEndpoints[ip]; !ok {
			p.opts.Reconciler.DeleteEndpoint(ip)
		}
	}
	for name := range p.reported {
		if _, ok := p.state.Services[name]; !ok {
			delete(p.reported, name)
		}
	}
	for name := range p.nodeCauses.of {
		if _, ok := p.state.Services[name]; !ok {
			p.nodeCauses.forget(name)
		}
	}
	return len(svcs)
}

// computeService recomputes one Service and hands the changed frontends to
// the reconciler; prior holds the Service's previous result.
func (p *Proxier) computeService(name types.NamespacedName, prior *desired.State) {
	svc, err := p.services.Services(name.Namespace).Get(name.Name)
	if apierrors.IsNotFound(err) || svc == nil {
		delete(p.reported, name)
		p.nodeCauses.forget(name)
		delete(p.health, name)
		p.tally.remove(name)
		p.apply(p.state.Delete(name))
		return
	}
	p.computeListed(svc, name, prior)
}

// computeListed is computeService for a Service the lister holds.
func (p *Proxier) computeListed(svc *v1.Service, name types.NamespacedName, prior *desired.State) {
	objs, _ := p.slices.ByIndex(sliceServiceIdx, name.String())
	slices := make([]*desired.EndpointSlice, 0, len(objs))
	for _, o := range objs {
		if s, ok := o.(*cachedSlice); ok {
			slices = append(slices, &s.slice)
		}
	}
	p.compute(svc, name, slices, prior)
}

// slicesByService groups every cached EndpointSlice by its Service, in one
// walk of the cache: what a full recompute of services Services would
// otherwise look up in the index one Service at a time.
func (p *Proxier) slicesByService(services int) map[types.NamespacedName][]*desired.EndpointSlice {
	out := make(map[types.NamespacedName][]*desired.EndpointSlice, services)
	for _, o := range p.slices.List() {
		if s, ok := o.(*cachedSlice); ok && s.service.Name != "" {
			out[s.service] = append(out[s.service], &s.slice)
		}
	}
	return out
}

// compute maps one Service with its EndpointSlices and hands the result over.
func (p *Proxier) compute(svc *v1.Service, name types.NamespacedName, slices []*desired.EndpointSlice, prior *desired.State) {
	res := desired.ForService(desired.ServiceInput{Service: svc, Slices: slices}, p.cfg)
	p.noteNoProviderAddress(res, prior.Services[name])
	if res.HealthCheck != nil {
		p.health[name] = *res.HealthCheck
	} else {
		delete(p.health, name)
	}
	p.tally.set(name, tallyOf(res))
	p.apply(p.state.Set(res))
	p.report(name, svc)
}

// apply tells the reconciler what each changed remote endpoint and frontend
// should now be, and re-reports Services whose conflicts may have changed.
// Endpoints go first, so that between Start and the first Sync a load
// balancer already in HNS is adopted with the endpoints it uses.
func (p *Proxier) apply(ch desired.Change) {
	for _, ip := range ch.RemoteEndpoints {
		if ep, ok := p.state.RemoteEndpoints[ip]; ok {
			p.opts.Reconciler.UpsertEndpoint(ep)
		} else {
			p.opts.Reconciler.DeleteEndpoint(ip)
		}
	}
	for _, k := range ch.LBs {
		if lb, ok := p.state.LBs[k]; ok {
			p.opts.Reconciler.Upsert(*lb)
		} else {
			p.opts.Reconciler.Delete(k)
		}
	}
	for _, name := range ch.Conflicted {
		p.report(name, nil)
	}
}

// report emits the Service's own problems that were not in its last report, so
// a steady problem is one event, not one per sync, nor one more each time
// another problem of the Service comes, goes or changes its text. svc is
// the Service if the caller holds it; a Service made again under its name
// (another UID) has had none of its problems reported.
func (p *Proxier) report(name types.NamespacedName, svc *v1.Service) {
	res, ok := p.state.Services[name]
	if !ok {
		p.nodeCauses.forget(name)
		return
	}
	// Problems the node causes are the Node's to raise, once (nodecause.go).
	problems := append(p.nodeCauses.set(name, res.Problems), p.state.Conflicts(name)...)
	var sig strings.Builder
	for _, pr := range problems {
		sig.WriteString(problemLine(pr))
	}
	last, had := p.reported[name]
	if had && svc != nil && last.uid != svc.UID {
		last = reportedProblems{}
		delete(p.reported, name)
	}
	if last.sig == sig.String() {
		return
	}
	if svc == nil {
		var err error
		if svc, err = p.services.Services(name.Namespace).Get(name.Name); err != nil {
			p.reported[name] = reportedProblems{uid: last.uid, sig: sig.String()}
			return
		}
	}
	p.reported[name] = reportedProblems{uid: svc.UID, sig: sig.String()}
	if p.opts.Recorder == nil {
		return
	}
	fresh := problems[:0]
	for _, pr := range problems {
		if !strings.Contains("\n"+last.sig, "\n"+problemLine(pr)) { // not reported, or ended since
			fresh = append(fresh, pr)
		}
	}
	if len(fresh) == 0 {
		return
	}
	// One event per reason: client-go's events.k8s.io broadcaster folds a
	// second event of one object with the same reason into a series of the
	// first, and the API keeps the first note, so a second would say nothing.
	var reasons []string
	byReason := map[string][]desired.Problem{}
	for _, pr := range fresh {
		if _, ok := byReason[pr.Reason]; !ok {
			reasons = append(reasons, pr.Reason)
		}
		byReason[pr.Reason] = append(byReason[pr.Reason], pr)
	}
	for _, reason := range reasons {
		prs := byReason[reason]
		eventType := v1.EventTypeNormal
		if slices.ContainsFunc(prs, func(pr desired.Problem) bool { return pr.Warning }) {
			eventType = v1.EventTypeWarning
		}
		if len(prs) == 1 {
			p.opts.Recorder.Eventf(svc, nil, eventType, reason, "Sync", "%s", prs[0].Message)
			continue
		}
		msgs := make([]string, 0, maxProblemsPerEvent)
		for _, pr := range prs[:min(len(prs), maxProblemsPerEvent)] {
			msgs = append(msgs, pr.Message)
		}
		which := "these"
		if len(prs) > maxProblemsPerEvent {
			which = fmt.Sprintf("the first %d (hnsproxy-diag lists them all)", maxProblemsPerEvent)
		}
		p.opts.Recorder.Eventf(svc, nil, eventType, reason, "Sync", "%d %s problems of this Service, %s: %s",
			len(prs), reason, which, strings.Join(msgs, "; "))
	}
}

// maxProblemsPerEvent bounds the problems of one reason one event of a
// Service says: a Service with thousands of ports (the API allows them) of
// one problem, such as SCTP, says the first few and counts the rest.
const maxProblemsPerEvent = 5

// reportedProblems is what report last raised for a Service: the object
// (its UID) and the signature of its problems (problemLine's, in order).
type reportedProblems struct {
	uid types.UID
	sig string
}

// problemLine is one problem in a Service's report signature.
func problemLine(pr desired.Problem) string { return pr.Reason + ":" + pr.Message + "\n" }

func (p *Proxier) updateHealthChecks() {
	if p.opts.Observer == nil {
		return
	}
	checks := make(map[types.NamespacedName]desired.HealthCheck, len(p.health))
	for k, v := range p.health {
		checks[k] = v
	}
	p.opts.Observer.HealthChecks(checks)
}

// refreshRemoteSubnets re-reads the overlay network's remote subnets into the config.
func (p *Proxier) refreshRemoteSubnets(ctx context.Context) error {
	if p.opts.RemoteSubnets == nil {
		return nil
	}
	subnets, err := p.opts.RemoteSubnets(ctx)
	if err != nil {
		return err
	}
	subnets = p.holdVanished(ctx, subnets)
	// Indexed here, once per change of the routes, not per Service; an
	// unchanged set keeps its index, so configChanged sees the same pointer.
	p.cfg.RemoteSubnets = p.cfg.RemoteSubnets.Reindexed(subnets)
	return nil
}

// markSynced records when a sync ended; callers hold p.mu.
func (p *Proxier) markSynced(at time.Time) {
	p.lastSync.Store(&at)
}
