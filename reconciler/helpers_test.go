package reconciler

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"k8s.io/klog/v2/ktesting"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

var ctx = context.Background()

// env is one simulated node: an HNS with one network, local endpoints made
// as the CNI would, a fake clock shared by HNS and the reconciler, and a
// state file path.
type env struct {
	t         testing.TB
	hns       *sim.HNS
	profile   sim.Profile
	netID     string
	clock     *clocktesting.FakeClock
	stateFile string
	locals    map[string]string  // IP → local endpoint ID
	tweak     func(*Options)     // changes the reconciler's options, if set
	drifted   map[ObjectKind]int // what Options.DriftRepaired was told
}

func newEnv(t testing.TB, profile string) *env {
	t.Helper()
	return newEnvVariants(t, profile, sim.ErrorVariants{})
}

// newEnvVariants is newEnv on an HNS answering with the given error variants.
func newEnvVariants(t testing.TB, profile string, variants sim.ErrorVariants) *env {
	t.Helper()
	return newEnvSim(t, profile, sim.Options{Variants: variants})
}

// newEnvSim is newEnv on an HNS made with o (its profile and clock are
// the env's, and its seed unless o sets one).
func newEnvSim(t testing.TB, profile string, o sim.Options) *env {
	t.Helper()
	p, err := sim.ProfileByName(profile)
	if err != nil {
		t.Fatal(err)
	}
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	if o.Seed == 0 {
		o.Seed = 7
	}
	o.Profile, o.Clock = p, clk
	h := sim.New(o)
	n, err := h.CreateNetwork(ctx, &hnslb.Network{
		Name: "cbr0", Type: hnslb.NetworkTypeL2Bridge,
		Ipams: []hnslb.Ipam{{Type: "Static", Subnets: []hnslb.Subnet{{IpAddressPrefix: "10.244.1.0/24"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, hns: h, profile: p, netID: n.ID, clock: clk,
		stateFile: filepath.Join(t.TempDir(), "hnsproxy-state.json"), locals: map[string]string{},
		drifted: map[ObjectKind]int{}}
	return e
}

// local creates a local endpoint (the CNI's job) and returns its ID.
// local wires a pod as a runtime and the CNI do: a namespace for the pod,
// an endpoint with its IP, attached to the namespace.
func (e *env) local(ip string) string {
	e.t.Helper()
	return e.localIn(ip, hnslb.NamespaceTypeHost)
}

// localIn is local with a namespace of the given type.
func (e *env) localIn(ip string, typ hnslb.NamespaceType) string {
	e.t.Helper()
	id := e.localOutsideNamespace(ip)
	ns, err := e.hns.CreateNamespace(ctx, &hnslb.Namespace{Type: typ})
	if err != nil {
		e.t.Fatalf("create namespace for %s: %v", ip, err)
	}
	if err := e.hns.AddNamespaceEndpoint(ctx, ns.ID, id); err != nil {
		e.t.Fatalf("attach endpoint %s: %v", ip, err)
	}
	return id
}

// localOutsideNamespace is a local endpoint in no namespace, as a runtime
// that attaches endpoints otherwise leaves it.
func (e *env) localOutsideNamespace(ip string) string {
	e.t.Helper()
	ep, err := e.hns.CreateEndpoint(ctx, e.netID, &hnslb.Endpoint{IpConfigurations: []hnslb.IPConfig{{IpAddress: ip}}})
	if err != nil {
		e.t.Fatalf("create local endpoint %s: %v", ip, err)
	}
	e.locals[ip] = ep.ID
	return ep.ID
}

func (e *env) options() Options {
	o := Options{
		NetworkID: e.netID, Features: e.profile.Features(), StateFile: e.stateFile,
		RetryBase: time.Second, RetryMax: 16 * time.Second, Clock: e.clock,
		Logger:        ktesting.NewLogger(e.t, ktesting.NewConfig()),
		DriftRepaired: func(k ObjectKind) { e.drifted[k]++ },
	}
	if e.tweak != nil {
		e.tweak(&o)
	}
	return o
}

func (e *env) reconciler() *Reconciler { return New(e.hns, e.options()) }

// start runs a new reconciler over c with lbs desired: Upserts, Start, one Sync.
func (e *env) start(c hnslb.Client, lbs ...intent.LB) (*Reconciler, SyncResult) {
	e.t.Helper()
	r := New(c, e.options())
	upsert(r, lbs...)
	if err := r.Start(ctx); err != nil {
		e.t.Fatal(err)
	}
	return r, r.Sync(ctx)
}

// started is start on the simulator, requiring a clean first Sync;
// counters are reset afterwards.
func (e *env) started(lbs ...intent.LB) *Reconciler {
	e.t.Helper()
	r, res := e.start(e.hns, lbs...)
	if res.Failed+res.Pending != 0 {
		e.t.Fatalf("initial sync: %+v", res)
	}
	e.hns.ResetCounters()
	return r
}

// upsert hands r the load balancers and, before them, the remote endpoints
// their remote backends need; then it withdraws the endpoints no desired
// load balancer uses any more. It plays the part of the desired state, which
// owns the remote endpoint set in production (package proxier/desired).
func upsert(r *Reconciler, lbs ...intent.LB) { handOver(r, lbs, nil) }

// remove deletes the load balancers and withdraws the remote endpoints no
// desired load balancer uses any more.
func remove(r *Reconciler, keys ...intent.LBKey) {
	for _, k := range keys {
		r.Delete(k)
	}
	handOver(r, nil, nil)
}

// handOver upserts lbs, and makes r's desired remote endpoints exactly the
// remote backends of its desired load balancers plus extras (which win, as
// the source VIP does in the desired state).
func handOver(r *Reconciler, lbs []intent.LB, extras []intent.RemoteEndpoint) {
	upserted := map[intent.LBKey]bool{}
	for _, lb := range lbs {
		upserted[lb.Key] = true
	}
	want := map[string]intent.RemoteEndpoint{}
	addBackends := func(lb *intent.LB) {
		for _, b := range lb.Backends {
			if !b.Local {
				want[b.IP] = intent.EndpointOf(b)
			}
		}
	}
	r.mu.Lock()
	for _, e := range r.lbs {
		if e.desired != nil && !upserted[e.key] {
			addBackends(e.desired)
		}
	}
	r.mu.Unlock()
	for i := range lbs {
		addBackends(&lbs[i])
	}
	for _, ep := range extras {
		want[ep.IP] = ep
	}
	for _, ip := range slices.SortedFunc(maps.Keys(want), intent.CompareIPs) {
		r.UpsertEndpoint(want[ip])
	}
	for _, lb := range lbs {
		r.Upsert(lb)
	}
	r.mu.Lock()
	var gone []string
	for ip, ep := range r.eps {
		if _, ok := want[ip]; ep.wanted && !ok {
			gone = append(gone, ip)
		}
	}
	r.mu.Unlock()
	for _, ip := range gone {
		r.DeleteEndpoint(ip)
	}
}

// converge runs Sync, stepping the clock to each retry, until nothing waits;
// a Sync that leaves objects waiting for a listing is followed by a Lookup,
// as the proxier starts one.
func (e *env) converge(r *Reconciler) {
	e.t.Helper()
	for i := 0; i < 500; i++ {
		if r.Sync(ctx).ListingWanted {
			_ = r.Lookup(ctx) // a failed one is tried again after the next Sync
			continue
		}
		next, ok := r.NextRetry()
		if !ok {
			return
		}
		if d := next.Sub(e.clock.Now()); d > 0 {
			e.clock.Step(d)
		}
	}
	e.t.Fatalf("no convergence after 500 syncs: %+v", r.Statuses())
}

func (e *env) counters() sim.Counters { return e.hns.Counters() }

// fullListings counts the listings of load balancers and endpoints (those
// that grow with the cluster; a node's namespaces do not).
func (e *env) fullListings() int {
	c := e.counters()
	return c.Count(sim.OpListLoadBalancers) + c.Count(sim.OpListEndpoints)
}

// syncListed runs a Sync that must leave objects waiting for a listing
// and list nothing itself, then the Lookup that answers them and the Sync
// that goes on with them, as the proxier would; it returns that last
// Sync's result.
func (e *env) syncListed(r *Reconciler) SyncResult {
	e.t.Helper()
	before := e.fullListings()
	res := r.Sync(ctx)
	if n := e.fullListings() - before; n != 0 || !res.ListingWanted {
		e.t.Fatalf("sync %+v listed HNS's load balancers or endpoints %d times; want no such listing and objects waiting for one", res, n)
	}
	return e.answer(r, res)
}

// answerAll answers res as answer does, and every Sync after it that asks
// for a listing again: a question a listing answered with nothing is
// asked again, silentListings listings in all. It fails the test past
// that.
func (e *env) answerAll(r *Reconciler, res SyncResult) SyncResult {
	e.t.Helper()
	for i := 0; res.ListingWanted; i++ {
		if i == silentListings {
			e.t.Fatalf("still asking for listings after %d: %+v", i, res)
		}
		res = e.answer(r, res)
	}
	return res
}

// answer runs, after a Sync whose result res left objects waiting for a
// listing, the Lookup that answers them and the Sync that goes on with
// them; it returns that Sync's result.
func (e *env) answer(r *Reconciler, res SyncResult) SyncResult {
	e.t.Helper()
	if !res.ListingWanted {
		e.t.Fatalf("sync %+v left nothing waiting for a listing", res)
	}
	if err := r.Lookup(ctx); err != nil {
		e.t.Fatalf("lookup: %v", err)
	}
	return r.Sync(ctx)
}

// declaringEndpoints makes HNS answer remote endpoints without their names,
// so that the reconciler declares each endpoint create in the state file
// (names.go): for the tests of those declarations.
func (e *env) declaringEndpoints() { e.hns.SetEcho(sim.Echo{DropRemoteEndpointNames: true}) }

func (e *env) snapshot() *hnslb.Snapshot { return e.hns.Snapshot() }

func loc(ip string) intent.Backend { return intent.Backend{IP: ip, Local: true} }

func rem(ip, pa string) intent.Backend { return intent.Backend{IP: ip, ProviderAddress: pa} }

// lb is a TCP ClusterIP load balancer desired on vip:port.
func lb(vip string, port uint16, backends ...intent.Backend) intent.LB {
	slices.SortFunc(backends, func(a, b intent.Backend) int { return intent.CompareIPs(a.IP, b.IP) })
	return intent.LB{
		Key:          intent.LBKey{Family: intent.IPv4, VIP: vip, Protocol: hnslb.ProtocolTCP, Port: port},
		SourceVIP:    "10.244.1.2",
		InternalPort: 8080,
		Backends:     backends,
		Owner:        fmt.Sprintf("default/svc-%s:%d", vip, port),
		Origin:       intent.OriginClusterIP,
	}
}

// hnsLB returns the load balancer HNS holds for key, or nil.
func (e *env) hnsLB(key intent.LBKey) *hnslb.LoadBalancer {
	for _, l := range e.snapshot().LoadBalancers {
		if k, ok := KeyOf(&l); ok && k == key {
			return &l
		}
	}
	return nil
}

// backendIPs are the IPs of the endpoints a load balancer in HNS uses.
func (e *env) backendIPs(l *hnslb.LoadBalancer) []string {
	byID := map[string]string{}
	for _, ep := range e.snapshot().Endpoints {
		byID[ep.ID] = ep.IP()
	}
	var ips []string
	for _, id := range l.HostComputeEndpoints {
		ips = append(ips, byID[id])
	}
	slices.SortFunc(ips, intent.CompareIPs)
	return ips
}

// remoteIPs are the IPs of the remote endpoints in HNS, sorted.
func (e *env) remoteIPs() []string {
	var ips []string
	for _, ep := range e.snapshot().Endpoints {
		if ep.IsRemote() {
			ips = append(ips, ep.IP())
		}
	}
	slices.SortFunc(ips, intent.CompareIPs)
	return ips
}

func ipsOf(bs []intent.Backend) []string {
	var ips []string
	for _, b := range bs {
		ips = append(ips, b.IP)
	}
	slices.SortFunc(ips, intent.CompareIPs)
	return ips
}

// assertRealized checks that HNS holds exactly the desired load balancers
// with exactly their backends, and exactly the remote endpoints wanted.
func (e *env) assertRealized(want []intent.LB, extraRemote ...string) {
	e.t.Helper()
	snap := e.snapshot()
	if len(snap.LoadBalancers) != len(want) {
		e.t.Errorf("HNS holds %d load balancers, want %d", len(snap.LoadBalancers), len(want))
	}
	remote := map[string]bool{}
	for _, ip := range extraRemote {
		remote[ip] = true
	}
	for _, d := range want {
		got := e.hnsLB(d.Key)
		if got == nil {
			e.t.Errorf("no load balancer for %s", d.Key)
			continue
		}
		if !slices.Equal(e.backendIPs(got), ipsOf(d.Backends)) {
			e.t.Errorf("%s backends %v, want %v", d.Key, e.backendIPs(got), ipsOf(d.Backends))
		}
		for _, b := range d.Backends {
			if !b.Local {
				remote[b.IP] = true
			}
		}
	}
	var wantRemote []string
	for ip := range remote {
		wantRemote = append(wantRemote, ip)
	}
	slices.SortFunc(wantRemote, intent.CompareIPs)
	if got := e.remoteIPs(); !slices.Equal(got, wantRemote) {
		e.t.Errorf("remote endpoints %v, want %v", got, wantRemote)
	}
}

// recorder is the simulator seen through a decorator that logs the order
// of writes (not a fake: every call goes to the simulator).
type recorder struct {
	hnslb.Client
	ops []string
}

func (r *recorder) CreateEndpoint(ctx context.Context, n string, ep *hnslb.Endpoint) (*hnslb.Endpoint, error) {
	out, err := r.Client.CreateEndpoint(ctx, n, ep)
	if err == nil {
		r.ops = append(r.ops, "create-ep "+out.ID)
	}
	return out, err
}

func (r *recorder) DeleteEndpoint(ctx context.Context, id string) error {
	err := r.Client.DeleteEndpoint(ctx, id)
	if err == nil {
		r.ops = append(r.ops, "delete-ep "+id)
	}
	return err
}

func (r *recorder) CreateLoadBalancer(ctx context.Context, l *hnslb.LoadBalancer) (*hnslb.LoadBalancer, error) {
	out, err := r.Client.CreateLoadBalancer(ctx, l)
	if err == nil {
		r.ops = append(r.ops, "create-lb "+out.ID)
		for _, id := range l.HostComputeEndpoints {
			r.ops = append(r.ops, "uses "+id)
		}
	}
	return out, err
}

func (r *recorder) DeleteLoadBalancer(ctx context.Context, id string) error {
	err := r.Client.DeleteLoadBalancer(ctx, id)
	if err == nil {
		r.ops = append(r.ops, "delete-lb "+id)
	}
	return err
}

// loadState reads the state file at path from the real file system.
func loadState(path string) (*stateFile, error) { return loadStateFrom(osFS{}, path) }
