package proxier

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
	"unique"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/informers"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	hnsevents "github.com/hnsproxy/hnsproxy/events"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
	"github.com/hnsproxy/hnsproxy/reconciler"
)

// Reconciler is what the proxier needs of reconciler.Reconciler.
type Reconciler interface {
	Start(ctx context.Context) error
	Upsert(lb intent.LB)
	Delete(key intent.LBKey)
	UpsertEndpoint(ep intent.RemoteEndpoint)
	DeleteEndpoint(ip string)
	// RecheckLocal has the next Sync check that the local endpoints at ips
	// still exist: their pods left their slices or stopped being ready, and
	// the CNI may have replaced an endpoint behind the same address.
	RecheckLocal(ips []string)
	// LocalReturned has the next Sync look again for the local endpoints
	// at ips that load balancers wait for: their pods came back to serving.
	LocalReturned(ips []string)
	// Expect is a size hint for a whole node's hand-over.
	Expect(lbs, eps int)
	Sync(ctx context.Context) reconciler.SyncResult
	Repair(ctx context.Context) error
	Lookup(ctx context.Context) error
	NextRetry() (time.Time, bool)
	// LearnedBackendCap is the backend cap HNS was found to enforce (0:
	// none); after Start, also one kept from before a restart.
	LearnedBackendCap() int
	// CallsReturned receives when an HNS call abandoned at its deadline
	// returned: the next sync retries what waited on it.
	CallsReturned() <-chan struct{}
}

// Observer receives what the sync loop does, for metrics and health. The
// daemon adapts the metrics and healthcheck packages to it.
type Observer interface {
	// SyncQueued is called when something asks for a sync.
	SyncQueued(at time.Time)
	// Changes is called as each Service or EndpointSlice change arrives
	// and when a sync takes them, in that order (kube-proxy's trackers
	// count at the same moments).
	Changes(c Changes)
	// SyncDone is called after every sync.
	SyncDone(s SyncStats)
	// HealthChecks replaces the per-Service health-check node ports and local endpoint counts.
	HealthChecks(checks map[types.NamespacedName]desired.HealthCheck)
}

// Changes is one Service or EndpointSlice change (Services or Endpoints
// is 1), or none when a sync took them, with what then waits for a sync.
type Changes struct {
	Services, Endpoints int
	// PendingServices counts Services with a change of their own waiting;
	// PendingEndpoints, EndpointSlice changes waiting.
	PendingServices, PendingEndpoints int
}

// SyncStats describes one sync.
type SyncStats struct {
	Start, End       time.Time
	Full             bool // every Service was recomputed
	ServicesComputed int
	ServiceChanges   int
	EndpointChanges  int
	Result           reconciler.SyncResult
	// NoLocalEndpoints by traffic policy ("internal", "external"): Service
	// ports, per family, with that Local policy, usable endpoints somewhere
	// and none on this node (kube-proxy's count).
	NoLocalEndpoints map[string]int
	// ProgrammingLatency by the family of the EndpointSlice whose change
	// each measures (nil when none).
	ProgrammingLatency map[intent.IPFamily][]time.Duration
	Truncated          int
	MixedPortDropped   int
	// NodeCauseServices counts, by kind, the Services a problem whose
	// cause is the node affects after this sync; a kind whose causes
	// ended since an earlier sync is there with 0.
	NodeCauseServices map[NodeCauseKind]int
}

// Options configure a Proxier.
type Options struct {
	NodeName string
	// Config is the node-independent part of desired.Config; node IPs and
	// zone not set here are taken from the Node object.
	Config        desired.Config
	MinSyncPeriod time.Duration
	SyncPeriod    time.Duration
	// RepairPeriod is how often HNS is listed to repair drift; 0 turns drift repair off.
	RepairPeriod time.Duration
	Reconciler   Reconciler
	Recorder     events.EventRecorder
	Observer     Observer
	// RemoteSubnets, if set, re-reads the overlay network's RemoteSubnetRoute
	// policies: at start, on every drift repair, and when a route may have
	// appeared (subnets.go).
	RemoteSubnets func(ctx context.Context) ([]desired.RemoteSubnet, error)
	// ClusterNodes, if set with RemoteSubnets, watches every Node (its
	// factory trims them with TrimToRouting): another Node's pod CIDR,
	// address or Flannel public IP that appears or changes asks for a read
	// until a route to it covers its pod CIDR.
	ClusterNodes coreinformers.NodeInformer
	// HealthCheckGateway, if set, re-reads the root HNS endpoint's
	// addresses (Config.HealthCheckGateway) while Config.ForwardHealthCheckVIP
	// is on: while none is known at most once per SyncPeriod, and at each
	// drift repair (healthgw.go).
	HealthCheckGateway func(ctx context.Context) (map[intent.IPFamily]netip.Addr, error)
	Clock              clock.WithTicker

	// Kube is the API client the proxier's own Service and EndpointSlice
	// informers list and watch with (informers.go); Run runs them.
	Kube kubernetes.Interface
	// NarrowServices and NarrowSlices, if set, narrow those lists and
	// watches as kube-proxy's are: the daemon leaves out headless Services
	// and those another proxy implements, and the slices of headless ones.
	NarrowServices, NarrowSlices func(*metav1.ListOptions)
	// ResyncPeriod is those informers' resync period (--config-sync-period); 0: none.
	ResyncPeriod time.Duration
	// CacheTransform replaces TrimForCache on those informers. Tests that
	// share a fake clientset's objects with other watchers copy first.
	CacheTransform cache.TransformFunc
}

// Proxier is the sync loop of one node.
type Proxier struct {
	opts    Options
	clock   clock.WithTicker
	tracker *changeTracker
	queue   workqueue.TypedDelayingInterface[string]
	// handlerLog is where informer handlers and nodeConfig, which have no
	// context, log.
	handlerLog klog.Logger
	// self is this node's name as slices hold it (desired.Endpoint.Node).
	self unique.Handle[string]

	services                                  corelisters.ServiceLister
	slices                                    cache.Indexer
	nodes                                     corelisters.NodeLister
	servicesSynced, slicesSynced, nodesSynced cache.InformerSynced
	informers                                 ownInformers
	// clusterNodesSynced waits for ClusterNodes' initial list (always true without it).
	clusterNodesSynced cache.InformerSynced

	// Owned by the sync loop.
	mu  sync.Mutex
	cfg desired.Config
	// computedWith is the config the current results were computed with.
	computedWith desired.Config
	state        *desired.State
	tally        *tallies // per-Service gauges of state, summed
	// startChanges are the changes Run's first computation covered; the
	// first Sync reports them (counts, trigger times) without recomputing.
	startChanges *pendingChanges
	// startedAt is when Run began its first computation.
	startedAt time.Time
	reported  map[types.NamespacedName]reportedProblems // last problems reported per Service
	// nodeCauses: the Services' problems whose cause is the node, raised
	// on the Node once per cause (nodecause.go).
	nodeCauses *nodeCauses
	// lastSync is when the last sync ended (nil before the first), as the
	// clock read it: with its monotonic reading, which a step of the wall
	// clock does not move. Atomic for requestSync, which runs without p.mu.
	lastSync   atomic.Pointer[time.Time]
	lastRepair time.Time
	// gatewayReadAt is when the root HNS endpoint was last read (healthgw.go).
	gatewayReadAt time.Time
	// repairRetryAt holds back the next drift repair after a failed one.
	repairRetryAt time.Time
	repairBackoff workqueue.TypedRateLimiter[string]
	// listingFailure is the streak of failing repairs and lookup
	// listings, logged once at -v=0.
	listingFailure failureStreak
	// repairAtOnce: HNS came back from a restart, which may have
	// dropped objects, or the reconciler's probe found one deleted behind
	// hnsproxy's back, so a drift repair is due now (repair.go).
	repairAtOnce bool
	// listingWanted: the last sync left objects waiting for what only a
	// listing tells (reconciler.SyncResult.ListingWanted, repair.go).
	listingWanted bool
	// repairLeft: the last sync left part of a drift repair's work
	// (reconciler.SyncResult.RepairLeft); the next sync follows at once.
	repairLeft bool
	// repairing: a drift repair runs (repair.go); repairs counts its goroutine.
	repairing   bool
	repairs     sync.WaitGroup
	health      map[types.NamespacedName]desired.HealthCheck
	initialized bool
	subnets     subnetReads
	// nodeAddressesMissing: the Node has no InternalIP or ExternalIP and
	// the last known node IPs are in use (reported once per streak).
	nodeAddressesMissing bool
	// skippedNodeAddresses: the Node's addresses last warned about as
	// unreadable (desired.SkippedNodeAddresses), so the warning is logged
	// when they change, not at every sync.
	skippedNodeAddresses []string
	// foreignReported and leftOutReported hold what was last reported per
	// frontend (the foreign load balancer's ID, the left-out IPs).
	foreignReported, leftOutReported onceEach
	// foreignRaised and leftOutRaised place the events of those conditions
	// while many load balancers have them (reconcile_events.go).
	foreignRaised, leftOutRaised hnsevents.Bound[intent.LBKey]
	// stopRun ends Run's context; stopErr is what Run returns then (network.go).
	stopRun context.CancelCauseFunc
	stopErr error
}

// A failed drift repair (each lists all of HNS) is retried with
// exponential backoff between these bounds, never later than RepairPeriod.
const (
	repairRetryBase = 100 * time.Millisecond
	repairRetryMax  = 30 * time.Second
)

// startRetryFor bounds how long Run retries a reconciler start that failed
// transiently (HNS unreachable, restarting, timed out): one lost reply must
// not end the process, an HNS that stays down must. A variable for tests.
var startRetryFor = time.Minute

// startReconciler starts the reconciler, retrying transient HNS failures
// with backoff for up to startRetryFor. The error it gives up with says it
// was retried, so that the last line of a restarting pod's log is not read
// as one failed call.
func (p *Proxier) startReconciler(ctx context.Context) error {
	backoff := workqueue.NewTypedItemExponentialFailureRateLimiter[string](repairRetryBase, 5*time.Second)
	begun := time.Now()
	deadline := begun.Add(startRetryFor)
	for attempt := 1; ; attempt++ {
		err := p.opts.Reconciler.Start(ctx)
		if err == nil || !hnslb.IsTransient(err) {
			return err
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("%w (still failing after %d attempts over %v; hnsproxy retries its start for %v)", err, attempt, time.Since(begun).Round(time.Millisecond), startRetryFor)
		}
		wait := backoff.When("start")
		klog.FromContext(ctx).Error(err, "Starting the reconciler failed; retrying", "after", wait, "attempt", attempt, "givingUpAt", deadline.Format(time.RFC3339))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}

const (
	syncKey         = "sync"
	sliceServiceIdx = "service"
)

// New builds the proxier's Service and EndpointSlice informers on
// opts.Kube (Run runs them) and registers its Node handler on nodeFactory,
// which must be filtered to this node and which the caller starts.
func New(opts Options, nodeFactory informers.SharedInformerFactory) (*Proxier, error) {
	if opts.NodeName == "" {
		return nil, fmt.Errorf("proxier: node name is required")
	}
	if opts.Reconciler == nil {
		return nil, fmt.Errorf("proxier: reconciler is required")
	}
	if opts.Kube == nil {
		return nil, fmt.Errorf("proxier: API client is required")
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.SyncPeriod <= 0 {
		opts.SyncPeriod = 30 * time.Second
	}
	if opts.MinSyncPeriod < 0 {
		opts.MinSyncPeriod = 0
	}
	if opts.RepairPeriod < 0 {
		opts.RepairPeriod = 0
	}
	repairMax := repairRetryMax
	if opts.RepairPeriod > 0 {
		repairMax = min(repairRetryMax, opts.RepairPeriod)
	}
	p := &Proxier{
		opts:       opts,
		clock:      opts.Clock,
		tracker:    newChangeTracker(opts.Clock.Now(), observeChanges(opts.Observer)),
		handlerLog: klog.Background(),
		queue: workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{
			Name: "hnsproxy_sync", Clock: opts.Clock,
		}),
		cfg: opts.Config,
		repairBackoff: workqueue.NewTypedItemExponentialFailureRateLimiter[string](
			repairRetryBase, repairMax),
		reported:        map[types.NamespacedName]reportedProblems{},
		nodeCauses:      newNodeCauses(),
		foreignReported: onceEach{},
		leftOutReported: onceEach{},
		health:          map[types.NamespacedName]desired.HealthCheck{},
	}
	p.cfg.NodeName = opts.NodeName
	p.self = unique.Make(opts.NodeName)
	p.state = desired.NewState(p.cfg)
	p.tally = newTallies()

	p.informers = p.newOwnInformers(&opts)
	nodeInformer := nodeFactory.Core().V1().Nodes()
	p.nodes = nodeInformer.Lister()
	// The registration's HasSynced (not the informer's) holds until the
	// handler has seen every object of the initial list.
	nodeReg, err := nodeInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: p.onNode, UpdateFunc: p.onNodeUpdate, DeleteFunc: p.onNode,
	})
	if err != nil {
		return nil, err
	}
	p.nodesSynced = nodeReg.HasSynced
	p.clusterNodesSynced = func() bool { return true }
	if opts.ClusterNodes != nil && opts.RemoteSubnets != nil {
		reg, err := opts.ClusterNodes.Informer().AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
			// The initial list is covered by the read at start.
			AddFunc: func(obj any, initial bool) {
				if !initial {
					p.onNodeRouting(nil, obj)
				}
			},
			UpdateFunc: p.onNodeRouting,
		})
		if err != nil {
			return nil, err
		}
		p.clusterNodesSynced = reg.HasSynced
	}
	return p, nil
}

func indexSliceByService(obj any) ([]string, error) {
	slice, ok := obj.(*cachedSlice)
	if !ok || slice.service.Name == "" {
		return nil, nil
	}
	return []string{slice.service.String()}, nil
}

func unwrapTombstone(obj any) any {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return t.Obj
	}
	return obj
}

// ServiceUID returns the UID of a Service in the informer cache, for events
// raised by name alone (events.ResolveServiceUIDs).
func (p *Proxier) ServiceUID(name types.NamespacedName) (types.UID, bool) {
	svc, err := p.services.Services(name.Namespace).Get(name.Name)
	if err != nil {
		return "", false
	}
	return svc.UID, true
}

func (p *Proxier) onService(obj any) {
	svc, ok := unwrapTombstone(obj).(*v1.Service)
	if !ok {
		return
	}
	p.tracker.serviceChanged(types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name})
	p.requestSync()
}

// onServiceUpdate is onService, except for a resync or re-list of an
// unchanged Service.
func (p *Proxier) onServiceUpdate(old, obj any) {
	before, wasService := old.(*v1.Service)
	if now, ok := obj.(*v1.Service); ok && wasService && sameVersion(&before.ObjectMeta, &now.ObjectMeta) {
		return
	}
	p.onService(obj)
}

// onSlice notes an added slice's change, with its trigger time.
func (p *Proxier) onSlice(obj any) {
	p.sliceChanged(unwrapTombstone(obj), true)
}

// onSliceDelete notes a deleted slice's change. Its trigger time dates its
// last update, not the deletion: no programming latency (kube-proxy's
// EndpointsChangeTracker ignores it too).
func (p *Proxier) onSliceDelete(obj any) {
	obj = unwrapTombstone(obj)
	if s, ok := obj.(*cachedSlice); ok {
		p.tracker.localLeft(localEndpointsLeft(p.self, &s.slice, nil))
	}
	p.sliceChanged(obj, false)
}

// sliceChanged marks obj's Service changed. live (added or updated, not
// deleted) passes the slice's trigger time on for the network programming
// latency (a deletion ends the family's pending ones instead), and logs a
// slice no Service can use: one without the kubernetes.io/service-name
// label, the usual mistake with a hand-made slice, which kube-proxy logs
// as an error too.
func (p *Proxier) sliceChanged(obj any, live bool) {
	slice, ok := obj.(*cachedSlice)
	if !ok {
		return
	}
	if slice.service.Name == "" {
		if live {
			p.handlerLog.Error(nil, "Ignoring EndpointSlice without the "+discoveryv1.LabelServiceName+" label: no Service uses its endpoints",
				"endpointSlice", klog.KObj(slice))
		}
		return
	}
	ev := sliceSeen
	if !live {
		ev = sliceDeleted
	}
	p.noteSlice(slice.service, slice, ev)
}

// sliceEvent is what befell a Service's slice, as noteSlice counts it.
type sliceEvent uint8

const (
	sliceSeen sliceEvent = iota // added or updated
	sliceDeleted
	// sliceMovedAway: relabelled away from the Service. It is recomputed
	// without the slice's endpoints (kube-proxy keeps them there), but the
	// update is one change, which kube-proxy counts once, for the Service
	// the slice names now (none if it names none).
	sliceMovedAway
)

// noteSlice notes a change to one of name's slices, s. As kube-proxy's
// EndpointsChangeTracker, it counts (sync_proxy_rules_endpoint_changes_*,
// programming latency) only a slice of a family this node serves
// (desired.Config.ServesFamily). An FQDN slice is no change at all: the
// mapping reads none. One of a family not served still has its Service
// recomputed, uncounted, since the mapping reports its unusable endpoints.
func (p *Proxier) noteSlice(name types.NamespacedName, s *cachedSlice, ev sliceEvent) {
	switch fam := s.slice.Family; {
	case fam == 0:
		return
	case !p.opts.Config.ServesFamily(fam):
		p.tracker.sliceTouched(name)
	case ev == sliceDeleted:
		p.tracker.sliceRemoved(name, fam)
	case ev == sliceMovedAway:
		p.tracker.sliceLeft(name, fam)
	default:
		p.tracker.sliceChanged(name, fam, s.triggerTime)
	}
	p.requestSync()
}

// onSliceUpdate is onSlice for the new slice, and for the Service the old
// one belonged to if its service-name label changed (a hand-made slice
// moved or unlabelled): that Service has lost the slice's endpoints. A
// resync (the cached object handed over again) or a re-list of an
// unchanged version is no change at all.
func (p *Proxier) onSliceUpdate(old, obj any) {
	before, wasSlice := old.(*cachedSlice)
	if wasSlice && before.service.Name != "" {
		if now, ok := obj.(*cachedSlice); !ok || now.service != before.service {
			p.noteSlice(before.service, before, sliceMovedAway)
		}
	}
	now, ok := obj.(*cachedSlice)
	if wasSlice && ok && sameVersion(&before.ObjectMeta, &now.ObjectMeta) {
		return
	}
	if wasSlice {
		var nowSlice *desired.EndpointSlice
		if ok {
			nowSlice = &now.slice
		}
		p.tracker.localLeft(localEndpointsLeft(p.self, &before.slice, nowSlice))
		if ok {
			p.tracker.localReturned(localEndpointsReturned(p.self, &before.slice, nowSlice))
		}
	}
	p.sliceChanged(obj, true)
}

// sameVersion tells an informer's resync (the cached object handed over
// again) or a re-list of an unchanged object from a change: kube-proxy's
// change trackers find no difference in either and sync nothing.
func sameVersion(before, now *metav1.ObjectMeta) bool {
	return before == now || (now.ResourceVersion != "" && now.ResourceVersion == before.ResourceVersion)
}

func (p *Proxier) onNode(obj any) {
	node, ok := unwrapTombstone(obj).(*v1.Node)
	if !ok || node.Name != p.opts.NodeName {
		return
	}
	// The sync recomputes every Service only if what the desired state
	// reads of the Node (addresses, zone, pod CIDRs) changed (a full
	// recompute at 10,000 Services costs a second of CPU); an update that
	// changed none of it does not come here (onNodeUpdate).
	p.requestSync()
}

// observeChanges is o's Changes, nil without an observer.
func observeChanges(o Observer) func(Changes) {
	if o == nil {
		return nil
	}
	return o.Changes
}

// requestSync queues a sync no sooner than MinSyncPeriod after the last one;
// the delaying queue keeps one entry, so a burst of changes is one sync.
func (p *Proxier) requestSync() {
	now := p.clock.Now()
	if p.opts.Observer != nil {
		p.opts.Observer.SyncQueued(now)
	}
	wait := p.minSyncWait()
	if wait <= 0 {
		p.queue.Add(syncKey)
		return
	}
	p.queue.AddAfter(syncKey, wait)
}

// minSyncWait is how long until MinSyncPeriod has passed since the
// last sync ended. lastSync is atomic so informer handlers never wait
// for a sync that holds p.mu while it talks to HNS. The wait is never
// longer than MinSyncPeriod: a clock without a monotonic reading (a fake
// one, or a time that lost it) stepped back after the sync would
// otherwise hold every change back by the size of the step.
func (p *Proxier) minSyncWait() time.Duration {
	last := p.lastSync.Load()
	if last == nil {
		return 0
	}
	return min(last.Add(p.opts.MinSyncPeriod).Sub(p.clock.Now()), p.opts.MinSyncPeriod)
}

// loopWait is how long the sync loop holds back a queued sync: none while
// the last sync left part of a drift repair's work, else what is left of
// MinSyncPeriod.
func (p *Proxier) loopWait() time.Duration {
	p.mu.Lock()
	left := p.repairLeft
	p.mu.Unlock()
	if left {
		return 0
	}
	return p.minSyncWait()
}

// syncOnReturns asks for a sync each time an abandoned HNS call returns,
// until ctx ends: what waited on the hang need not wait for its backoff.
func (p *Proxier) syncOnReturns(ctx context.Context) {
	returns := p.opts.Reconciler.CallsReturned()
	for {
		select {
		case <-ctx.Done():
			return
		case <-returns:
			p.requestSync()
		}
	}
}

// Run waits for the informers, starts the reconciler (adopting what HNS
// already holds) and syncs until ctx ends.
func (p *Proxier) Run(ctx context.Context) error {
	defer utilruntime.HandleCrash()
	logger := klog.FromContext(ctx)
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	p.mu.Lock()
	p.stopRun = stop
	p.mu.Unlock()
	go func() {
		<-ctx.Done()
		p.queue.ShutDown()
	}()
	p.informers.run(ctx)
	logger.Info("Waiting for caches to sync")
	if !cache.WaitForNamedCacheSync("hnsproxy", ctx.Done(), p.servicesSynced, p.slicesSynced, p.nodesSynced, p.clusterNodesSynced) {
		return fmt.Errorf("proxier: caches did not sync: %w", ctx.Err())
	}
	if err := p.waitForNodeAddresses(ctx); err != nil {
		return nil // shut down while waiting: not a failure
	}
	// Compute desired state before Start, so adoption can match identical
	// load balancers and a restart makes no HNS writes. The changes the
	// initial lists reported are in this computation: the first Sync only
	// reports them, or it would compute every Service a second time.
	p.mu.Lock()
	p.startedAt = p.clock.Now()
	initial := p.tracker.take()
	p.startChanges = &initial
	if p.opts.RemoteSubnets != nil {
		// Every other Node waits for its route as a joining one does: a
		// start as soon as the network is usable may come before the CNI
		// routes the Nodes it learns then (subnets.go).
		p.noteUnrouted(p.otherRoutedNodes())
		p.readRemoteSubnets(ctx)
	}
	p.computeAll()
	p.subnets.fresh = false
	p.mu.Unlock()
	if err := p.startReconciler(ctx); err != nil {
		p.mu.Lock()
		p.noteNetworkChanged(ctx, err) // gone or replaced since it was read
		stopErr := p.stopErr
		p.mu.Unlock()
		switch {
		case stopErr != nil:
			return stopErr
		case ctx.Err() != nil:
			return nil // shut down while starting: not a failure
		}
		return fmt.Errorf("proxier: starting reconciler: %w", err)
	}
	p.mu.Lock()
	p.lastRepair = p.clock.Now()
	p.keepBackendCap(ctx)
	p.mu.Unlock()
	go p.syncOnReturns(ctx)
	p.queue.Add(syncKey)
	for {
		key, shutdown := p.queue.Get()
		if shutdown {
			p.repairs.Wait()
			p.mu.Lock()
			defer p.mu.Unlock()
			return p.stopErr
		}
		// No sync starts sooner than MinSyncPeriod after the last one ended,
		// as kube-proxy's runner waits after each run: a change made during
		// a sync was queued at once when that sync began long after the one
		// before, and would start the next as soon as this one ends. Except
		// while a drift repair's work is left: its chunks follow one
		// another at once (scheduleNext), which this wait would undo.
		if wait := p.loopWait(); wait > 0 {
			p.queue.Done(key)
			p.queue.AddAfter(key, wait)
			continue
		}
		p.Sync(ctx)
		p.queue.Done(key)
	}
}
