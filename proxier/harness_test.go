package proxier

import (
	"context"
	"fmt"
	"net/netip"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
	"github.com/hnsproxy/hnsproxy/reconciler"
	"github.com/hnsproxy/hnsproxy/sim"
)

// testNode is one simulated Windows node running the real proxier against
// the simulator, fed by a fake clientset through real informers.
type testNode struct {
	t         *testing.T
	name      string
	client    *fake.Clientset
	hns       *sim.HNS
	networkID string
	stateFile string
	recorder  *events.FakeRecorder
	proxier   *Proxier
	cancel    context.CancelFunc
	done      chan error

	// What start gives the proxier besides the defaults: the
	// node-independent config (Mode l2bridge when unset), the overlay
	// remote-subnet reader, an observer and the min sync period.
	config        desired.Config
	remoteSubnets func(context.Context) ([]desired.RemoteSubnet, error)
	// healthCheckGateway re-reads the root endpoint (Options.HealthCheckGateway).
	healthCheckGateway func(context.Context) (map[intent.IPFamily]netip.Addr, error)
	observer           Observer
	minSyncPeriod      time.Duration
	// apiEvents wires the recorder as the daemon does (events.k8s.io
	// broadcaster to the fake API, hnsevents' reporter) instead of the
	// fake recorder; apiRecorder is it once started.
	apiEvents   bool
	apiRecorder events.EventRecorder
	// believedCap, if set, is the backend cap hnsproxy starts with (from the
	// OS build) where HNS may enforce less; the reconciler learns the cap.
	believedCap int
	// repairPeriod, if set, is the drift repair period (default an hour);
	// checkNetwork makes the reconciler check the network by its name.
	repairPeriod time.Duration
	checkNetwork bool
	// callTimeout, listTimeout and retryBase, if set, are the reconciler's
	// HNS call and listing deadlines and first retry (default 10 ms, at
	// most 100 ms).
	callTimeout, listTimeout, retryBase time.Duration
	// resyncPeriod is the Service and slice informers' resync period (none if 0).
	resyncPeriod time.Duration
	rec          *reconciler.Reconciler
	// clock, if set, is the proxier's clock (default the real one).
	clock clock.WithTicker
	// logger, if set, is what the proxier and the reconciler log through
	// (default klog's global logger).
	logger *klog.Logger
	// takeover is the reconciler's --takeover token.
	takeover string
}

const (
	nodeName = "win-1"
	nodeIP   = "10.0.0.1"
	podCIDR  = "10.244.1.0/24"
)

// newTestNode makes a node with an l2bridge network and local pod endpoints
// (as the CNI would create them) on the given simulator profile.
func newTestNode(t *testing.T, profile string, localPods ...string) *testNode {
	t.Helper()
	return newTestNodeVariants(t, profile, sim.ErrorVariants{}, localPods...)
}

// newTestNodeVariants is newTestNode on an HNS answering with the given
// error variants.
func newTestNodeVariants(t *testing.T, profile string, variants sim.ErrorVariants, localPods ...string) *testNode {
	t.Helper()
	p, err := sim.ProfileByName(profile)
	if err != nil {
		t.Fatal(err)
	}
	hns := sim.New(sim.Options{Profile: p, Seed: 1, Variants: variants})
	ctx := context.Background()
	nw, err := hns.CreateNetwork(ctx, &hnslb.Network{
		Name: "cbr0", Type: hnslb.NetworkTypeL2Bridge,
		Ipams: []hnslb.Ipam{{Type: "Static", Subnets: []hnslb.Subnet{{IpAddressPrefix: podCIDR}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, ip := range localPods {
		if _, err := hns.CreateEndpoint(ctx, nw.ID, &hnslb.Endpoint{
			Name:             "pod-" + ip,
			IpConfigurations: []hnslb.IPConfig{{IpAddress: ip, PrefixLength: 24}},
		}); err != nil {
			t.Fatal(err)
		}
	}
	node := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: nodeName, Labels: map[string]string{v1.LabelTopologyZone: "zone-a"}},
		Spec:       v1.NodeSpec{PodCIDR: podCIDR},
		Status:     v1.NodeStatus{Addresses: []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: nodeIP}}},
	}
	return &testNode{
		t: t, name: nodeName, client: fake.NewClientset(node), hns: hns, networkID: nw.ID,
		stateFile: filepath.Join(t.TempDir(), "state.json"),
	}
}

// start runs a fresh proxier and reconciler (a new process, as after a restart).
func (n *testNode) start() {
	n.t.Helper()
	features := n.hns.Profile().Features()
	if n.believedCap > 0 {
		features.MaxBackends = n.believedCap
	}
	opts := reconciler.Options{
		NetworkID: n.networkID, Features: features, StateFile: n.stateFile, LearnBackendCap: n.believedCap > 0,
		OSBuild:   n.hns.Profile().OSBuild, // as the daemon reads it from the registry
		RetryBase: 10 * time.Millisecond, RetryMax: 100 * time.Millisecond,
	}
	if n.checkNetwork {
		opts.NetworkName = "cbr0"
	}
	opts.CallTimeout, opts.ListTimeout, opts.Takeover = n.callTimeout, n.listTimeout, n.takeover
	if n.retryBase > 0 {
		opts.RetryBase, opts.RetryMax = n.retryBase, n.retryBase
	}
	if n.logger != nil {
		opts.Logger = *n.logger
	}
	rec := reconciler.New(n.hns, opts)
	n.rec = rec
	repairPeriod := n.repairPeriod
	if repairPeriod == 0 {
		repairPeriod = time.Hour
	}
	nodeFactory := informers.NewSharedInformerFactoryWithOptions(n.client, 0, informers.WithTransform(ownCopy(TrimForCache)))
	n.recorder = events.NewFakeRecorder(1000)
	cfg := n.config
	if cfg.Mode == "" {
		cfg.Mode = desired.L2Bridge
	}
	cfg.Features = features
	cfg.HealthzPort = 10256
	// On overlay every Node's pod CIDR is watched, as the daemon does.
	clusterNodes := informers.NewSharedInformerFactoryWithOptions(n.client, 0, informers.WithTransform(ownCopy(TrimToRouting)))
	var nodeInformer coreinformers.NodeInformer
	if n.remoteSubnets != nil {
		nodeInformer = clusterNodes.Core().V1().Nodes()
	}
	var recorder events.EventRecorder = n.recorder
	if n.apiEvents {
		n.apiRecorder = n.startAPIEvents()
		recorder = n.apiRecorder
	}
	p, err := New(Options{
		NodeName:           n.name,
		Config:             cfg,
		MinSyncPeriod:      n.minSyncPeriod,
		SyncPeriod:         time.Hour,
		RepairPeriod:       repairPeriod,
		Reconciler:         rec,
		Recorder:           recorder,
		Observer:           n.observer,
		RemoteSubnets:      n.remoteSubnets,
		HealthCheckGateway: n.healthCheckGateway,
		ClusterNodes:       nodeInformer,
		Kube:               n.client,
		CacheTransform:     ownCopy(TrimForCache),
		ResyncPeriod:       n.resyncPeriod,
		Clock:              n.clock,
	}, nodeFactory)
	if err != nil {
		n.t.Fatal(err)
	}
	n.proxier = p
	ctx, cancel := context.WithCancel(context.Background())
	if n.logger != nil {
		p.handlerLog = *n.logger
		ctx = klog.NewContext(ctx, *n.logger)
	}
	n.cancel = cancel
	n.done = make(chan error, 1)
	nodeFactory.Start(ctx.Done())
	clusterNodes.Start(ctx.Done())
	go func() { n.done <- p.Run(ctx) }()
	n.t.Cleanup(n.stop)
}

func (n *testNode) stop() {
	if n.cancel == nil {
		return
	}
	n.cancel()
	if err := <-n.done; err != nil {
		n.t.Errorf("proxier.Run: %v", err)
	}
	n.cancel = nil
}

// lbView is a load balancer as a test reads it: frontend and backend IPs.
type lbView struct {
	Frontend string
	Port     uint16
	Internal uint16
	Backends []string
	Flags    hnslb.LoadBalancerFlags
	PortFlag hnslb.PortMappingFlags
	Dist     hnslb.Distribution
}

// lbs returns HNS's load balancers with backend IDs resolved to IPs.
func (n *testNode) lbs() []lbView {
	if n.hns == nil { // waitFor's node, which has no HNS
		return nil
	}
	snap := n.hns.Snapshot()
	ips := endpointIPs(snap)
	var out []lbView
	for _, lb := range snap.LoadBalancers {
		v := lbView{Flags: lb.Flags, Backends: backendIPs(lb, ips)}
		if len(lb.FrontendVIPs) > 0 {
			v.Frontend = lb.FrontendVIPs[0]
		}
		if len(lb.PortMappings) > 0 {
			pm := lb.PortMappings[0]
			v.Port, v.Internal, v.PortFlag, v.Dist = pm.ExternalPort, pm.InternalPort, pm.Flags, pm.DistributionType
		}
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Frontend != out[j].Frontend {
			return out[i].Frontend < out[j].Frontend
		}
		return out[i].Port < out[j].Port
	})
	return out
}

// endpointIPs maps each endpoint of a snapshot to its IP.
func endpointIPs(snap *hnslb.Snapshot) map[string]string {
	ips := map[string]string{}
	for _, e := range snap.Endpoints {
		ips[e.ID] = e.IP()
	}
	return ips
}

// backendIPs are a load balancer's backends as IPs (ips from endpointIPs), sorted.
func backendIPs(lb hnslb.LoadBalancer, ips map[string]string) []string {
	var out []string
	for _, id := range lb.HostComputeEndpoints {
		out = append(out, ips[id])
	}
	sort.Strings(out)
	return out
}

func (n *testNode) remoteEndpointIPs() []string {
	var out []string
	for _, e := range n.hns.Snapshot().Endpoints {
		if e.IsRemote() {
			out = append(out, e.IP())
		}
	}
	sort.Strings(out)
	return out
}

// eventually polls cond until it holds; convergence, not speed, is asserted.
func (n *testNode) eventually(what string, cond func() bool) {
	n.t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 20*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		n.t.Fatalf("%s never happened; HNS load balancers: %+v", what, n.lbs())
	}
}

// settle waits until the proxier has no queued change and HNS is quiet.
func (n *testNode) settle() {
	n.t.Helper()
	n.settleOn(func(c sim.Counters) int { return c.Total() })
}

// settleWrites is settle where HNS may still be read: lookups for a
// backend no endpoint serves go on at the retry period.
func (n *testNode) settleWrites() {
	n.t.Helper()
	n.settleOn(func(c sim.Counters) int { return c.Writes() })
}

// settleOn is settle with calls counted by count.
func (n *testNode) settleOn(count func(sim.Counters) int) {
	n.t.Helper()
	last := -1
	stable := 0
	n.eventually("HNS settling", func() bool {
		if !n.cachesCaughtUp() {
			stable = 0
			return false
		}
		// Sync holds mu: taking it waits for a sync in progress, so the
		// counters are read between syncs, never in the middle of one.
		n.proxier.mu.Lock()
		w := count(n.hns.Counters())
		s, e := n.proxier.tracker.pending()
		repairing := n.proxier.repairing
		// Before its first sync a proxier has nothing queued (the start's
		// full computation covers what the informers listed) and HNS is
		// quiet, also while the reconciler's start lists HNS outside mu
		// (long on a loaded machine): that is not settled. The first sync
		// clears startChanges under mu, so nil here means it has ended.
		computed := n.proxier.initialized && n.proxier.startChanges == nil
		n.proxier.mu.Unlock()
		if w == last && s == 0 && e == 0 && !repairing && computed {
			stable++
		} else {
			stable = 0
		}
		last = w
		return stable >= 20
	})
}

// cachesCaughtUp: the proxier's informer caches hold every Service and
// EndpointSlice the API holds, as it holds them, and nothing else. Before
// that a change just applied may not have reached the proxier, and a quiet
// HNS with nothing queued says nothing (seen on a loaded machine). An API
// that cannot list is not waited for.
func (n *testNode) cachesCaughtUp() bool {
	if n.proxier == nil || n.proxier.services == nil {
		return true
	}
	ctx := context.Background()
	svcs, err := n.client.CoreV1().Services("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return true
	}
	slices, err := n.client.DiscoveryV1().EndpointSlices("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return true
	}
	want := map[string]any{}
	for i := range svcs.Items {
		want["svc/"+svcs.Items[i].Namespace+"/"+svcs.Items[i].Name], _ = TrimForCache(svcs.Items[i].DeepCopy())
	}
	for i := range slices.Items {
		want["slice/"+slices.Items[i].Namespace+"/"+slices.Items[i].Name], _ = TrimForCache(slices.Items[i].DeepCopy())
	}
	cached, err := n.proxier.services.List(labels.Everything())
	if err != nil {
		return true
	}
	got := map[string]any{}
	for _, s := range cached {
		got["svc/"+s.Namespace+"/"+s.Name] = s
	}
	for _, o := range n.proxier.slices.List() {
		if m, err := meta.Accessor(o); err == nil {
			got["slice/"+m.GetNamespace()+"/"+m.GetName()] = o
		}
	}
	return reflect.DeepEqual(want, got)
}

func (n *testNode) apply(objs ...any) {
	n.t.Helper()
	for _, o := range objs {
		if _, err := upsert(n.client, o); err != nil {
			n.t.Fatal(err)
		}
	}
}

// upsert creates or updates a Service or EndpointSlice and returns the stored object.
func upsert(client *fake.Clientset, obj any) (any, error) {
	ctx := context.Background()
	switch o := obj.(type) {
	case *v1.Service:
		return createOrUpdate(ctx, client.CoreV1().Services(o.Namespace), o)
	case *discoveryv1.EndpointSlice:
		return createOrUpdate(ctx, client.DiscoveryV1().EndpointSlices(o.Namespace), o)
	}
	return nil, fmt.Errorf("upsert: unexpected %T", obj)
}

type createUpdater[T any] interface {
	Create(context.Context, T, metav1.CreateOptions) (T, error)
	Update(context.Context, T, metav1.UpdateOptions) (T, error)
}

func createOrUpdate[T any](ctx context.Context, c createUpdater[T], o T) (T, error) {
	out, err := c.Create(ctx, o, metav1.CreateOptions{})
	if err != nil {
		out, err = c.Update(ctx, o, metav1.UpdateOptions{})
	}
	return out, err
}

// service builds a ClusterIP Service with one TCP port 80 → 8080.
func service(name, clusterIP string, mutate ...func(*v1.Service)) *v1.Service {
	s := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, CreationTimestamp: metav1.NewTime(time.Unix(1000, 0))},
		Spec: v1.ServiceSpec{
			Type: v1.ServiceTypeClusterIP, ClusterIP: clusterIP, ClusterIPs: []string{clusterIP},
			IPFamilies: []v1.IPFamily{v1.IPv4Protocol},
			Ports:      []v1.ServicePort{{Name: "http", Protocol: v1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}
	for _, m := range mutate {
		m(s)
	}
	return s
}

// endpoint is one ready endpoint on a node.
type endpoint struct{ ip, node string }

func slice(svc string, eps ...endpoint) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "default", Name: svc + "-abc",
			Labels: map[string]string{discoveryv1.LabelServiceName: svc},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080), Protocol: ptr.To(v1.ProtocolTCP)}},
	}
	for _, e := range eps {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{e.ip},
			NodeName:   ptr.To(e.node),
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true), Serving: ptr.To(true), Terminating: ptr.To(false)},
		})
	}
	return s
}

// drainEvents returns the events recorded so far, in order, and forgets them.
func (n *testNode) drainEvents() []string {
	var out []string
	for {
		select {
		case e := <-n.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// ownCopy runs transform on a copy of the object: the fake clientset hands
// one object to every watcher, where each watcher of a real API server
// decodes its own, which client-go lets a transform change in place (the
// nodes of one test cluster share the fake, and trimming raced).
func ownCopy(transform cache.TransformFunc) cache.TransformFunc {
	return func(obj any) (any, error) {
		if o, ok := obj.(runtime.Object); ok {
			obj = o.DeepCopyObject()
		}
		return transform(obj)
	}
}
