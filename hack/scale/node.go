package main

import (
	"context"
	"fmt"
	"net/netip"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/clock"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/proxier"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
	"github.com/hnsproxy/hnsproxy/reconciler"
	"github.com/hnsproxy/hnsproxy/sim"
)

// node is the Windows node the harness plays: a simulated HNS with the
// pods' local endpoints (as the CNI would have made them), and the real
// proxier and reconciler fed by informers on a fake clientset.
type node struct {
	hns       *sim.HNS
	metered   *meteredHNS
	networkID string
	stateFile string
	kube      *fake.Clientset
	features  hnslb.Features
	overlay   bool
	// clock is the proxier's: real time that the harness can move forward
	// to make a drift repair due.
	clock   *steppedClock
	proxier *proxier.Proxier

	// apiCPU is the thread CPU of the harness's own API writes and of the
	// fake API server's watch starts (the API server's work), taken out of
	// the proxier's CPU like the simulator's.
	apiCPU atomic.Int64
	// listCPU is the thread CPU the fake API server spent serving LISTs.
	listCPU atomic.Int64
	// stateSyncs counts the state file's fsyncs (reconciler.Options.StateFileSynced).
	stateSyncs atomic.Int64
	// delivered counts the informer events the proxier's handlers saw.
	delivered atomic.Int64
	// collections tells the changes a garbage collection ran beside.
	collections collectionWatch
	events      chan syncEvent
	dropped     atomic.Int64
	cancel      context.CancelFunc
	done        chan error
}

// syncEvent is one finished proxier sync and the proxier's CPU at its end.
type syncEvent struct {
	stats proxier.SyncStats
	cpu   time.Duration
}

// proxierCPU is the process CPU minus what the simulator spent in its calls,
// what metering them cost, and the fake API server in the harness's writes.
func (n *node) proxierCPU() time.Duration {
	return processCPU() - n.metered.CPU() - n.metered.ProbeCPU() - time.Duration(n.apiCPU.Load())
}

// apply makes one API write. The call's thread CPU (the fake server's
// work up to handing the watch event over) is not the proxier's; the
// informer's handling of the event is.
func (n *node) apply(ctx context.Context, w write) (err error) {
	chargeThreadCPU(&n.apiCPU, func() { err = n.write(ctx, w) })
	return err
}

// chargeThreadCPU runs fn pinned to one OS thread and adds the thread CPU
// it spent to c: the fake API server's work, on whichever goroutine asked
// for it.
func chargeThreadCPU(c *atomic.Int64, fn func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := threadCPU()
	fn()
	c.Add(int64(threadCPU() - start))
}

func (n *node) write(ctx context.Context, w write) error {
	if w.svc != nil {
		return writeObject(ctx, n.kube.CoreV1().Services(w.svc.Namespace), w.op, w.svc, w.svc.Name)
	}
	return writeObject(ctx, n.kube.DiscoveryV1().EndpointSlices(w.slice.Namespace), w.op, w.slice, w.slice.Name)
}

// objectClient is what the harness uses of a typed client.
type objectClient[T any] interface {
	Create(context.Context, T, metav1.CreateOptions) (T, error)
	Update(context.Context, T, metav1.UpdateOptions) (T, error)
	Delete(context.Context, string, metav1.DeleteOptions) error
}

func writeObject[T any](ctx context.Context, c objectClient[T], op writeOp, obj T, name string) error {
	var err error
	switch op {
	case writeCreate:
		_, err = c.Create(ctx, obj, metav1.CreateOptions{})
	case writeDelete:
		err = c.Delete(ctx, name, metav1.DeleteOptions{})
	default:
		_, err = c.Update(ctx, obj, metav1.UpdateOptions{})
	}
	return err
}

func newNode(ctx context.Context, c *cluster, profile sim.Profile, latency time.Duration, dir string) (*node, error) {
	hns := sim.New(sim.Options{Profile: profile, Seed: int64(c.spec.Seed)})
	nw, err := hns.CreateNetwork(ctx, podNetwork(c.spec))
	if err != nil {
		return nil, fmt.Errorf("creating the pod network: %w", err)
	}
	for _, p := range c.pods {
		if !p.local() {
			continue
		}
		if err := createLocalEndpoint(ctx, hns, nw.ID, p.ip); err != nil {
			return nil, err
		}
	}
	hns.SetLatency(latency)
	hns.ResetCounters()
	k8sNode := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: nodeName(thisNode), Labels: map[string]string{v1.LabelTopologyZone: "zone-a"}},
		Spec:       v1.NodeSpec{PodCIDR: podCIDR(thisNode).String()},
		Status:     v1.NodeStatus{Addresses: []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: nodeIP(thisNode).String()}}},
	}
	// The simple tracker: a real API server does field management on its
	// side, so the field-managed fake's cost would be no part of the proxier.
	kube := fake.NewSimpleClientset(append(c.objects(), k8sNode)...)
	n := &node{
		hns: hns, metered: newMeteredHNS(hns), networkID: nw.ID,
		stateFile: filepath.Join(dir, "hnsproxy-state.json"),
		kube:      kube, features: profile.Features(), overlay: c.spec.Overlay,
		events: make(chan syncEvent, 1<<16),
	}
	// The informers' LISTs are served by the fake API server's tracker (a
	// real one serves them in its own process, and the informer decodes
	// them instead); its thread CPU stays in the proxier's figure and is
	// reported apart, to show how much of a cold start it is.
	serve := k8stesting.ObjectReaction(kube.Tracker())
	kube.PrependReactor("list", "*", func(a k8stesting.Action) (handled bool, obj k8sruntime.Object, err error) {
		chargeThreadCPU(&n.listCPU, func() { handled, obj, err = serve(a) })
		return handled, obj, err
	})
	// Starting a watch, the fake API server sorts every stored object of
	// the resource to find those newer than the LIST (none): a real one
	// does that in its own process, and the informer only opens a stream.
	// Its thread CPU is the API server's, like the harness's writes.
	for i, r := range kube.WatchReactionChain {
		kube.WatchReactionChain[i] = apiWatch{WatchReactor: r, cpu: &n.apiCPU}
	}
	return n, nil
}

// apiWatch charges a watch reactor's thread CPU to the fake API server.
type apiWatch struct {
	k8stesting.WatchReactor
	cpu *atomic.Int64
}

func (w apiWatch) React(a k8stesting.Action) (handled bool, ret watch.Interface, err error) {
	chargeThreadCPU(w.cpu, func() { handled, ret, err = w.WatchReactor.React(a) })
	return handled, ret, err
}

// podNetwork is this node's pod network as the CNI makes it; on overlay
// (Flannel's VXLAN, VNI 4096) it routes every other node's pod subnet to
// that node's address.
func podNetwork(spec clusterSpec) *hnslb.Network {
	nw := &hnslb.Network{
		Name: "cbr0", Type: hnslb.NetworkTypeL2Bridge,
		Ipams: []hnslb.Ipam{{Type: "Static", Subnets: []hnslb.Subnet{{IpAddressPrefix: podCIDR(thisNode).String()}}}},
	}
	if !spec.Overlay {
		return nw
	}
	nw.Type = hnslb.NetworkTypeOverlay
	for other := range spec.Nodes {
		if other == thisNode {
			continue
		}
		nw.Policies = append(nw.Policies, hnslb.NewNetworkPolicy(hnslb.NetworkPolicyRemoteSubnetRoute,
			hnslb.RemoteSubnetRoutePolicySetting{DestinationPrefix: podCIDR(other).String(), ProviderAddress: nodeIP(other).String(), IsolationId: 4096}))
	}
	return nw
}

// desiredConfig is hnsproxy's configuration on this node: l2bridge, or
// overlay with a source VIP, the host MAC and the network's remote subnets.
func (n *node) desiredConfig() (desired.Config, func(context.Context) ([]desired.RemoteSubnet, error)) {
	cfg := desired.Config{Mode: desired.L2Bridge, Features: n.features, HealthzPort: 10256}
	if !n.overlay {
		return cfg, nil
	}
	cfg.Mode = desired.Overlay
	cfg.SourceVIP = map[intent.IPFamily]netip.Addr{intent.IPv4: sourceVIP()}
	cfg.HostMAC = "00-15-5d-00-00-01"
	return cfg, func(ctx context.Context) ([]desired.RemoteSubnet, error) {
		nw, err := n.metered.GetNetworkByID(ctx, n.networkID)
		if err != nil {
			return nil, err
		}
		return desired.RemoteSubnetsOf(nw), nil
	}
}

// createLocalEndpoint wires a pod as the runtime and the CNI would: the
// pod's namespace, its endpoint, the endpoint attached to the namespace.
func createLocalEndpoint(ctx context.Context, hns *sim.HNS, networkID, ip string) error {
	ep, err := hns.CreateEndpoint(ctx, networkID, &hnslb.Endpoint{
		Name:             "pod-" + ip,
		IpConfigurations: []hnslb.IPConfig{{IpAddress: ip, PrefixLength: 24}},
	})
	if err != nil {
		return fmt.Errorf("creating local endpoint %s: %w", ip, err)
	}
	ns, err := hns.CreateNamespace(ctx, &hnslb.Namespace{Type: hnslb.NamespaceTypeHost})
	if err != nil {
		return fmt.Errorf("creating the namespace of %s: %w", ip, err)
	}
	if err := hns.AddNamespaceEndpoint(ctx, ns.ID, ep.ID); err != nil {
		return fmt.Errorf("attaching endpoint %s to its namespace: %w", ip, err)
	}
	return nil
}

// start runs a new reconciler and proxier, as a freshly started process
// would: new informers on the same API server, the same HNS and state file.
func (n *node) start() error {
	n.clock = &steppedClock{} // a new process starts at the real time
	rec := reconciler.New(n.metered, reconciler.Options{
		NetworkID: n.networkID, Features: n.features, StateFile: n.stateFile,
		StateFileSynced: func(time.Duration) { n.stateSyncs.Add(1) },
	})
	nodeFactory := informers.NewSharedInformerFactoryWithOptions(n.kube, 0, informers.WithTransform(proxier.TrimForCache),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = "metadata.name=" + nodeName(thisNode) }))
	cfg, remoteSubnets := n.desiredConfig()
	p, err := proxier.New(proxier.Options{
		NodeName: nodeName(thisNode),
		Config:   cfg,
		// Periodic syncs and drift repair (a full HNS list) come only when
		// the harness measures them as phases; see docs/benchmarks.md.
		SyncPeriod:    time.Hour,
		RepairPeriod:  repairPeriod,
		Reconciler:    rec,
		Observer:      n,
		RemoteSubnets: remoteSubnets,
		Clock:         n.clock,
		Kube:          n.kube,
	}, nodeFactory)
	if err != nil {
		return err
	}
	n.proxier = p
	ctx, cancel := context.WithCancel(context.Background())
	n.cancel = cancel
	n.done = make(chan error, 1)
	nodeFactory.Start(ctx.Done())
	go func() { n.done <- p.Run(ctx) }()
	return nil
}

// stop ends the proxier and waits for its sync loop to return.
func (n *node) stop() error {
	if n.cancel == nil {
		return nil
	}
	n.cancel()
	n.cancel = nil
	return <-n.done
}

// SyncQueued implements proxier.Observer; the handlers call it once per event.
func (n *node) SyncQueued(time.Time) { n.delivered.Add(1) }

// Changes implements proxier.Observer.
func (n *node) Changes(proxier.Changes) {}

// maxInFlight bounds the API writes whose watch events the proxier has not
// yet seen: the fake API server's watch channel holds 100 and panics when
// full (a real one would pace its writers).
const maxInFlight = 50

// awaitDelivery waits until at most maxInFlight of the events up to want
// are undelivered.
func (n *node) awaitDelivery(want int64) {
	for want-n.delivered.Load() > maxInFlight {
		time.Sleep(100 * time.Microsecond)
	}
}

// SyncDone implements proxier.Observer: it stamps the proxier's CPU on the
// sync loop's own goroutine, so the harness waiting is never counted.
func (n *node) SyncDone(s proxier.SyncStats) {
	select {
	case n.events <- syncEvent{stats: s, cpu: n.proxierCPU()}:
	default:
		n.dropped.Add(1)
	}
}

// HealthChecks implements proxier.Observer.
func (n *node) HealthChecks(map[types.NamespacedName]desired.HealthCheck) {}

// drain discards sync events of earlier phases.
func (n *node) drain() {
	for {
		select {
		case <-n.events:
		default:
			return
		}
	}
}

// waitConverged waits for a sync that leaves nothing pending and after
// which done holds, then for quiet (no further sync); it returns the last
// sync's event. Quiet time is waited out but not measured.
func (n *node) waitConverged(ctx context.Context, quiet time.Duration, done func() bool) (syncEvent, error) {
	var last syncEvent
	seen := false
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		select {
		case ev := <-n.events:
			last, seen = ev, true
			if ev.stats.Result.Pending == 0 && done() {
				timer.Reset(quiet)
			} else {
				timer.Reset(time.Hour)
			}
		case <-timer.C:
			if seen {
				return last, nil
			}
		case err := <-n.done:
			return last, fmt.Errorf("proxier stopped: %v", err)
		case <-ctx.Done():
			return last, ctx.Err()
		}
	}
}

// repairPeriod is the proxier's drift repair period; the harness moves the
// proxier's clock past it to measure a repair.
const repairPeriod = time.Hour

// steppedClock is the real clock moved forward by what advance added.
type steppedClock struct {
	clock.RealClock
	offset atomic.Int64
}

func (c *steppedClock) Now() time.Time { return c.RealClock.Now().Add(time.Duration(c.offset.Load())) }

func (c *steppedClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

func (c *steppedClock) advance(d time.Duration) { c.offset.Add(int64(d)) }
