package proxier

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/sim/historytest"
)

// Random histories of what users change: Services, EndpointSlices and
// Nodes through the API, pods of this node wired and unwired by the CNI,
// HNS faults and restarts, hnsproxy restarts, all through the informers,
// proxier/desired and the sync loop. reconciler/history_test.go asks the
// same of the reconciler's input; this asks it of the API's. A seed picks
// a Windows build, l2bridge or overlay (DSR or not), dual-stack where the
// build has it, HNS's echoes and error codes, and at most 15 steps over at
// most 4 Services. Then the faults stop, two drift repairs run, and HNS
// must hold what a fresh node (fresh HNS, fresh hnsproxy, the same API
// objects, pods and routes) programs; a restart then writes nothing.

// proxierHistorySeeds is how many seeds `go test` runs; FuzzProxierHistory tries more.
const proxierHistorySeeds = 16

func TestRandomProxierHistoriesConverge(t *testing.T) {
	for seed := range uint64(proxierHistorySeeds) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runProxierHistory(t, seed) })
	}
}

func FuzzProxierHistory(f *testing.F) {
	for seed := range uint64(4) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed uint64) { runProxierHistory(t, seed) })
}

// phSpec is what a seed fixes about the node, shared by the node under
// test and the fresh one it is compared with.
type phSpec struct {
	profile  string
	overlay  bool
	dsr      bool
	dual     bool
	variants sim.ErrorVariants
}

// The pools a history draws from. This node is win-1; win-2 and win-3
// have Nodes and (on overlay) routes from the start, win-4 joins and leaves.
const (
	phNodeIP6  = "fd00::1"
	phPodCIDR6 = "fd00:10:244:1::/64"
	phJoinPod  = "10.244.4.40"
)

var (
	phProfiles = []string{sim.ProfileWS2019, sim.ProfileWS2022, sim.ProfileWS2025, sim.ProfileWS2025Mod4}
	phServices = []string{"svc-a", "svc-b", "svc-c", "svc-d"}
	// phLocalPods are pods of this node the CNI may wire; phLocalPods6 on a dual-stack node.
	phLocalPods  = []string{"10.244.1.10", "10.244.1.11", "10.244.1.12"}
	phLocalPods6 = []string{"fd00:10:244:1::10", "fd00:10:244:1::11"}
	// phOthers are nodes besides this one: name, IP, pod CIDR.
	phOthers = [][3]string{{"win-2", "10.0.0.2", "10.244.2.0/24"}, {"win-3", "10.0.0.3", "10.244.3.0/24"}}
	phJoin   = [3]string{"win-4", "10.0.0.4", "10.244.4.0/24"}
)

// phEndpoint is an address a slice may list, and the node it names ("" none).
type phEndpoint struct{ ip, node string }

var (
	phEndpoints = []phEndpoint{
		{"10.244.1.10", nodeName}, {"10.244.1.11", nodeName}, {"10.244.1.12", nodeName},
		{"10.244.2.20", "win-2"}, {"10.244.2.21", "win-2"}, {"10.244.3.30", "win-3"},
		{phJoinPod, "win-4"}, {"10.0.0.2", "win-2"}, // a host-network pod
		{"10.244.1.12", ""}, {"10.244.2.21", ""}, {"192.168.5.5", ""},
	}
	phEndpoints6 = []phEndpoint{
		{"fd00:10:244:1::10", nodeName}, {"fd00:10:244:1::11", nodeName},
		{"fd00:10:244:2::20", "win-2"}, {"fd00:10:244:3::30", ""},
	}
)

// proxierHistory is one run.
type proxierHistory struct {
	t      *testing.T
	rng    *rand.Rand
	spec   phSpec
	n      *testNode
	wired  map[string]bool // this node's pods the CNI has wired
	faults sim.Faults
	// hangSteps is how many more steps the hang in faults lasts (historyhang_test.go).
	hangSteps int
	log       []string
}

func runProxierHistory(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x9817))
	spec := phSpec{profile: phProfiles[rng.IntN(len(phProfiles))], overlay: rng.IntN(2) == 0}
	prof, err := sim.ProfileByName(spec.profile)
	if err != nil {
		t.Fatal(err)
	}
	features := prof.Features()
	spec.dsr = spec.overlay && features.DSR && rng.IntN(2) == 0
	spec.dual = !spec.overlay && features.IPv6DualStack && rng.IntN(2) == 0
	spec.variants = historytest.RandomErrorVariants(rng)
	echo, echoes := historytest.RandomEcho(rng)
	h := &proxierHistory{t: t, rng: rng, spec: spec, wired: map[string]bool{}}
	h.note("spec %+v, echoes %q", spec, echoes)
	defer func() {
		if t.Failed() {
			t.Logf("seed %d history:\n  %s", seed, strings.Join(h.log, "\n  "))
		}
	}()
	for _, ip := range h.localPods() {
		if rng.IntN(3) != 0 {
			h.wired[ip] = true
		}
	}
	h.n = newHistoryNode(t, spec, fake.NewClientset(historyNodes(spec)...), int64(seed)+1, nil, h.wiredPods())
	h.n.hns.SetEcho(echo)
	h.n.start()
	for range 6 + rng.IntN(10) {
		h.step()
	}
	h.converge()
	h.compareWithFresh()
	h.restartWritesNothing()
}

func (h *proxierHistory) note(format string, args ...any) {
	h.log = append(h.log, fmt.Sprintf(format, args...))
}

func (h *proxierHistory) localPods() []string {
	if h.spec.dual {
		return append(slices.Clone(phLocalPods), phLocalPods6...)
	}
	return phLocalPods
}

func (h *proxierHistory) wiredPods() []string {
	var out []string
	for ip, wired := range h.wired {
		if wired {
			out = append(out, ip)
		}
	}
	sort.Strings(out)
	return out
}

// quietly runs fn as another actor (the CNI, Flannel) whose HNS calls the
// injected faults do not reach.
func (h *proxierHistory) quietly(fn func()) {
	h.endHang() // the CNI's calls would be held too
	h.n.hns.SetFaults(sim.Faults{})
	fn()
	h.n.hns.SetFaults(h.faults)
}

// step makes one random change, then lets hnsproxy catch up with it: to
// quiet HNS where no fault is on, else until its caches hold the API's objects.
func (h *proxierHistory) step() {
	switch r := h.rng.IntN(112); {
	case r < 30:
		h.applyService()
	case r < 35:
		h.deleteObject("service", phServices[h.rng.IntN(len(phServices))])
	case r < 60:
		h.applySlice()
	case r < 65:
		h.deleteObject("slice", h.sliceName())
	case r < 72:
		h.changeNode()
	case r < 80:
		h.wireOrUnwire()
	case r < 87:
		h.setFaults()
	case r < 93:
		h.restartHNS()
	case r < 100:
		h.note("hnsproxy restarted; HNS holds %d calls", h.n.hns.Held())
		h.restartProxy()
	case r < 106:
		h.hang()
		h.restartAtHeld()
	default:
		h.replaceNetwork()
	}
	if !h.hung() && h.faults.ErrorRate == nil && h.rng.IntN(2) == 0 {
		h.n.settleWrites()
	} else {
		h.n.eventually("caches catching up", h.n.cachesCaughtUp)
	}
	h.tickHang()
}

func (h *proxierHistory) deleteObject(kind, name string) {
	ctx := context.Background()
	var err error
	if kind == "service" {
		err = h.n.client.CoreV1().Services("default").Delete(ctx, name, metav1.DeleteOptions{})
	} else {
		err = h.n.client.DiscoveryV1().EndpointSlices("default").Delete(ctx, name, metav1.DeleteOptions{})
	}
	h.note("%s %s deleted (%v)", kind, name, err)
}

func (h *proxierHistory) apply(o any) {
	h.t.Helper()
	if _, err := upsert(h.n.client, o); err != nil {
		h.t.Fatal(err)
	}
}

// wireOrUnwire has the CNI wire a pod of this node, or delete one's endpoint.
func (h *proxierHistory) wireOrUnwire() {
	pods := h.localPods()
	ip := pods[h.rng.IntN(len(pods))]
	h.note("pod %s wired: %t", ip, !h.wired[ip])
	h.quietly(func() {
		if h.wired[ip] {
			h.n.replacePod(ip, false)
		} else {
			h.n.wirePod(ip)
		}
	})
	h.wired[ip] = !h.wired[ip]
}

// setFaults turns random HNS faults on, or off.
func (h *proxierHistory) setFaults() {
	hang, reply := h.faults.Hang, h.faults.HangReply
	if h.faults.ErrorRate != nil || h.rng.IntN(3) == 0 {
		h.faults = sim.Faults{}
	} else {
		h.faults = historytest.RandomFaults(h.rng, 0.3)
	}
	h.faults.Hang, h.faults.HangReply = hang, reply // a hang lasts its steps
	h.note("faults %+v", h.faults)
	h.n.hns.SetFaults(h.faults)
}

// restartHNS restarts HNS, which may drop what it holds; pods whose
// endpoints it dropped are wired again, as the kubelet remakes their sandboxes.
func (h *proxierHistory) restartHNS() {
	loss := sim.RestartLosses[h.rng.IntN(len(sim.RestartLosses))]
	h.note("HNS restarted, losing %s", loss)
	h.restartEndingHeldCalls(loss)
	if loss == sim.RestartLosesEndpoints {
		h.quietly(func() {
			for _, ip := range h.wiredPods() {
				h.n.wirePod(ip)
			}
		})
	}
}

// converge stops the faults and lets two drift repairs run, as the repair
// period would, each followed by quiet.
func (h *proxierHistory) converge() {
	h.endHang()
	h.faults = sim.Faults{}
	h.n.hns.SetFaults(h.faults)
	for range 2 {
		h.n.repaired()
		h.n.settleWrites()
	}
}

// compareWithFresh: a fresh node on the same API objects, pods and routes
// programs what the node holds.
func (h *proxierHistory) compareWithFresh() {
	h.t.Helper()
	n := h.n
	ctx := context.Background()
	var objs []runtime.Object
	nodes, _ := n.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	for i := range nodes.Items {
		objs = append(objs, withoutVersion(&nodes.Items[i]))
	}
	svcs, _ := n.client.CoreV1().Services("").List(ctx, metav1.ListOptions{})
	for i := range svcs.Items {
		objs = append(objs, withoutVersion(&svcs.Items[i]))
	}
	sls, _ := n.client.DiscoveryV1().EndpointSlices("").List(ctx, metav1.ListOptions{})
	for i := range sls.Items {
		objs = append(objs, withoutVersion(&sls.Items[i]))
	}
	nw, err := n.hns.GetNetworkByID(ctx, n.networkID)
	if err != nil {
		h.t.Fatal(err)
	}
	routes := nw.Policies
	if routes == nil {
		routes = []hnslb.NetworkPolicy{}
	}
	f := newHistoryNode(h.t, h.spec, fake.NewClientset(objs...), 99, routes, h.wiredPods())
	f.start()
	f.settleWrites()
	want := programmed(f.hns.Snapshot())
	f.stop()
	if got := programmed(n.hns.Snapshot()); !slices.Equal(got, want) {
		h.t.Errorf("HNS after the history differs from a fresh node's:\nhistory %s\nfresh   %s",
			strings.Join(got, "\n        "), strings.Join(want, "\n        "))
	}
}

// withoutVersion is a copy of o to create in another API.
func withoutVersion(o runtime.Object) runtime.Object {
	c := o.DeepCopyObject()
	c.(metav1.Object).SetResourceVersion("")
	return c
}

// restartProxy stops hnsproxy once it has started (a stop before its
// caches synced ends Run with an error) and starts it again.
func (h *proxierHistory) restartProxy() {
	h.n.eventually("hnsproxy started", func() bool {
		h.n.proxier.mu.Lock()
		defer h.n.proxier.mu.Unlock()
		// While HNS holds calls the start may wait for it: a process past
		// its cache sync (startedAt is set then) stops without an error.
		return h.n.proxier.initialized || (h.hung() && !h.n.proxier.startedAt.IsZero())
	})
	h.n.stop()
	h.n.start()
}

// restartWritesNothing: hnsproxy started again adopts what HNS holds.
func (h *proxierHistory) restartWritesNothing() {
	before := programmed(h.n.hns.Snapshot())
	h.n.stop()
	h.n.hns.ResetCounters()
	h.n.start()
	h.n.settleWrites()
	if c := h.n.hns.Counters(); c.Writes() != 0 {
		h.t.Errorf("a restart after the history wrote %v:\nbefore %s\nafter  %s", c.Calls,
			strings.Join(before, "\n       "), strings.Join(programmed(h.n.hns.Snapshot()), "\n       "))
	}
}

// programmed is what hnsproxy wrote into HNS, as text without HNS's IDs:
// each load balancer whole, with its backends as addresses, and each
// endpoint that is no pod's.
func programmed(snap *hnslb.Snapshot) []string {
	ips := endpointIPs(snap)
	var out []string
	for _, lb := range snap.LoadBalancers {
		fronts := slices.Clone(lb.FrontendVIPs)
		sort.Strings(fronts)
		out = append(out, fmt.Sprintf("lb %v src %s flags %v ports %+v backends %v",
			fronts, lb.SourceVIP, lb.Flags, lb.PortMappings, backendIPs(lb, ips)))
	}
	for _, e := range snap.Endpoints {
		if strings.HasPrefix(e.Name, "pod-") {
			continue
		}
		out = append(out, fmt.Sprintf("endpoint %s %s remote %t pa %s mac %s", e.Name, e.IP(), e.IsRemote(), e.ProviderAddress(), e.MacAddress))
	}
	sort.Strings(out)
	return out
}
