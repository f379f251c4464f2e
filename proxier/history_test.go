package proxier

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
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
	log    []string
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

// historyNodes are the Node objects a history starts with.
func historyNodes(spec phSpec) []runtime.Object {
	own := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: nodeName, Labels: map[string]string{v1.LabelTopologyZone: "zone-a"}},
		Spec:       v1.NodeSpec{PodCIDR: podCIDR, PodCIDRs: []string{podCIDR}},
		Status:     v1.NodeStatus{Addresses: []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: nodeIP}}},
	}
	if spec.dual {
		own.Spec.PodCIDRs = append(own.Spec.PodCIDRs, phPodCIDR6)
		own.Status.Addresses = append(own.Status.Addresses, v1.NodeAddress{Type: v1.NodeInternalIP, Address: phNodeIP6})
	}
	out := []runtime.Object{own}
	for _, o := range phOthers {
		out = append(out, otherNode(o))
	}
	return out
}

func otherNode(o [3]string) *v1.Node {
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: o[0], Labels: map[string]string{v1.LabelTopologyZone: "zone-b"}},
		Spec:       v1.NodeSpec{PodCIDR: o[2], PodCIDRs: []string{o[2]}},
		Status:     v1.NodeStatus{Addresses: []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: o[1]}}},
	}
}

// newHistoryNode makes this node's HNS (its network as the CNI makes it,
// with routes on overlay: those given, else one per other node as Flannel
// adds them) and pods, and a testNode on client, not started.
func newHistoryNode(t *testing.T, spec phSpec, client *fake.Clientset, seed int64, routes []hnslb.NetworkPolicy, pods []string) *testNode {
	t.Helper()
	prof, err := sim.ProfileByName(spec.profile)
	if err != nil {
		t.Fatal(err)
	}
	hns := sim.New(sim.Options{Profile: prof, Seed: seed, Variants: spec.variants})
	nw := &hnslb.Network{Name: clusterNetwork, Type: hnslb.NetworkTypeL2Bridge,
		Ipams: []hnslb.Ipam{{Type: "Static", Subnets: []hnslb.Subnet{{IpAddressPrefix: podCIDR}}}}}
	if spec.dual {
		nw.Ipams = append(nw.Ipams, hnslb.Ipam{Type: "Static", Subnets: []hnslb.Subnet{{IpAddressPrefix: phPodCIDR6}}})
	}
	if spec.overlay {
		nw.Type = hnslb.NetworkTypeOverlay
		nw.Policies = routes
		if routes == nil {
			for _, o := range phOthers {
				nw.Policies = append(nw.Policies, phRoute(o))
			}
		}
	}
	ctx := context.Background()
	created, err := hns.CreateNetwork(ctx, nw)
	if err != nil {
		t.Fatal(err)
	}
	n := &testNode{
		t: t, name: nodeName, client: client, hns: hns, networkID: created.ID,
		stateFile: filepath.Join(t.TempDir(), "state.json"),
		config:    desired.Config{Mode: desired.L2Bridge, NetworkSubnets: desired.NetworkSubnetsOf(created)},
	}
	if spec.overlay {
		n.config.Mode, n.config.EnableDSR = desired.Overlay, spec.dsr
		n.config.SourceVIP = map[intent.IPFamily]netip.Addr{intent.IPv4: netip.MustParseAddr("10.244.1.2")}
		n.config.HostMAC = "00-15-5d-00-00-01"
		n.remoteSubnets = networkRemoteSubnets(hns, created.ID)
	}
	for _, ip := range pods {
		n.wirePod(ip)
	}
	return n
}

// phRoute is the RemoteSubnetRoute Flannel adds for another node.
func phRoute(o [3]string) hnslb.NetworkPolicy {
	return hnslb.NewNetworkPolicy(hnslb.NetworkPolicyRemoteSubnetRoute,
		hnslb.RemoteSubnetRoutePolicySetting{DestinationPrefix: o[2], ProviderAddress: o[1], IsolationId: 4096})
}

// wirePod makes a pod's local endpoint in its own namespace, as the CNI's ADD does.
func (n *testNode) wirePod(ip string) {
	n.t.Helper()
	ctx := context.Background()
	ep, err := n.hns.CreateEndpoint(ctx, n.networkID, podEndpoint(ip))
	if err != nil {
		n.t.Fatalf("wiring pod %s: %v; HNS endpoints %+v", ip, err, n.hns.Snapshot().Endpoints)
	}
	ns, err := n.hns.CreateNamespace(ctx, &hnslb.Namespace{Type: hnslb.NamespaceTypeHost})
	if err != nil {
		n.t.Fatal(err)
	}
	if err := n.hns.AddNamespaceEndpoint(ctx, ns.ID, ep.ID); err != nil {
		n.t.Fatal(err)
	}
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
	h.n.hns.SetFaults(sim.Faults{})
	fn()
	h.n.hns.SetFaults(h.faults)
}

// step makes one random change, then lets hnsproxy catch up with it: to
// quiet HNS where no fault is on, else until its caches hold the API's objects.
func (h *proxierHistory) step() {
	switch r := h.rng.IntN(100); {
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
	default:
		h.note("hnsproxy restarted")
		h.restartProxy()
	}
	if h.faults.ErrorRate == nil && h.rng.IntN(2) == 0 {
		h.n.settleWrites()
		return
	}
	h.n.eventually("caches catching up", h.n.cachesCaughtUp)
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

// applyService creates or replaces one of the Services with a random spec.
func (h *proxierHistory) applyService() {
	i := h.rng.IntN(len(phServices))
	s := h.randomService(i)
	h.note("service %s: %s", s.Name, describeService(s))
	h.apply(s)
}

func (h *proxierHistory) randomService(i int) *v1.Service {
	rng := h.rng
	clusterIP, clusterIP6 := fmt.Sprintf("10.96.0.%d", 10+i), fmt.Sprintf("fd00:10:96::%d", 10+i)
	s := service(phServices[i], clusterIP)
	// Distinct ages: the older Service keeps a frontend two want.
	s.CreationTimestamp = metav1.NewTime(s.CreationTimestamp.Add(time.Duration(i) * time.Minute))
	s.Spec.Ports = []v1.ServicePort{{Name: "http", Protocol: v1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(8080)}}
	if rng.IntN(2) == 0 {
		s.Spec.Ports = append(s.Spec.Ports, v1.ServicePort{Name: "dns", Protocol: v1.ProtocolUDP, Port: 53, TargetPort: intstr.FromInt32(5353)})
	}
	if h.spec.dual {
		switch rng.IntN(3) {
		case 1:
			s.Spec.ClusterIPs = []string{clusterIP, clusterIP6}
			s.Spec.IPFamilies = []v1.IPFamily{v1.IPv4Protocol, v1.IPv6Protocol}
			s.Spec.IPFamilyPolicy = ptr.To(v1.IPFamilyPolicyPreferDualStack)
		case 2:
			s.Spec.ClusterIP, s.Spec.ClusterIPs = clusterIP6, []string{clusterIP6}
			s.Spec.IPFamilies = []v1.IPFamily{v1.IPv6Protocol}
		}
	}
	switch rng.IntN(8) {
	case 0, 1:
	case 2, 3:
		s.Spec.Type = v1.ServiceTypeNodePort
	case 4, 5:
		s.Spec.Type = v1.ServiceTypeLoadBalancer
		for _, ip := range pickSome(rng, []string{"192.0.2.30", "192.0.2.31", "2001:db8::30"}) {
			if h.spec.dual || !strings.Contains(ip, ":") {
				s.Status.LoadBalancer.Ingress = append(s.Status.LoadBalancer.Ingress, v1.LoadBalancerIngress{IP: ip})
			}
		}
	case 6:
		s.Spec.ClusterIP, s.Spec.ClusterIPs = v1.ClusterIPNone, []string{v1.ClusterIPNone}
	case 7:
		s.Spec.Type, s.Spec.ExternalName = v1.ServiceTypeExternalName, "example.com"
		s.Spec.ClusterIP, s.Spec.ClusterIPs, s.Spec.IPFamilies = "", nil, nil
	}
	if s.Spec.Type == v1.ServiceTypeNodePort || s.Spec.Type == v1.ServiceTypeLoadBalancer {
		for p := range s.Spec.Ports {
			s.Spec.Ports[p].NodePort = int32(30000 + 10*i + p)
		}
		if rng.IntN(3) == 0 {
			s.Spec.ExternalTrafficPolicy = v1.ServiceExternalTrafficPolicyLocal
			s.Spec.HealthCheckNodePort = int32(32000 + i)
		}
	}
	if s.Spec.Type != v1.ServiceTypeExternalName {
		if rng.IntN(3) == 0 {
			for _, ip := range pickSome(rng, []string{"192.0.2.20", "192.0.2.21", "2001:db8::20"}) {
				if h.spec.dual || !strings.Contains(ip, ":") {
					s.Spec.ExternalIPs = append(s.Spec.ExternalIPs, ip)
				}
			}
		}
		if rng.IntN(4) == 0 {
			s.Spec.InternalTrafficPolicy = ptr.To(v1.ServiceInternalTrafficPolicyLocal)
		}
		if rng.IntN(4) == 0 {
			s.Spec.SessionAffinity = v1.ServiceAffinityClientIP
			s.Spec.SessionAffinityConfig = &v1.SessionAffinityConfig{ClientIP: &v1.ClientIPConfig{TimeoutSeconds: ptr.To[int32](10800)}}
		}
	}
	if rng.IntN(8) == 0 {
		malform(rng, s)
	}
	return s
}

// malform spoils one field the API server would have checked, as a
// mirror, an old API server or a webhook may let through.
func malform(rng *rand.Rand, s *v1.Service) {
	switch rng.IntN(4) {
	case 0:
		s.Spec.ExternalIPs = append(s.Spec.ExternalIPs, "192.0.2.999")
	case 1:
		s.Status.LoadBalancer.Ingress = append(s.Status.LoadBalancer.Ingress, v1.LoadBalancerIngress{IP: "not-an-ip"})
	case 2:
		s.Spec.Ports[0].Port = 0
	case 3:
		if s.Spec.ClusterIP != v1.ClusterIPNone && s.Spec.ClusterIP != "" {
			s.Spec.ClusterIPs = append([]string{"10.96.0.300"}, s.Spec.ClusterIPs[1:]...)
			s.Spec.ClusterIP = s.Spec.ClusterIPs[0]
		}
	}
}

func describeService(s *v1.Service) string {
	var ports []string
	for _, p := range s.Spec.Ports {
		ports = append(ports, fmt.Sprintf("%s/%d:%d", p.Protocol, p.Port, p.NodePort))
	}
	itp := ""
	if s.Spec.InternalTrafficPolicy != nil {
		itp = string(*s.Spec.InternalTrafficPolicy)
	}
	return fmt.Sprintf("%s %v ports %v etp %q itp %q affinity %q external %v ingress %v",
		s.Spec.Type, s.Spec.ClusterIPs, ports, s.Spec.ExternalTrafficPolicy, itp, s.Spec.SessionAffinity,
		s.Spec.ExternalIPs, s.Status.LoadBalancer.Ingress)
}

func pickSome[T any](rng *rand.Rand, from []T) []T {
	var out []T
	for _, x := range from {
		if rng.IntN(2) == 0 {
			out = append(out, x)
		}
	}
	return out
}

// sliceName picks one of the slices a history uses: two IPv4 per
// Service, one IPv6 on a dual-stack node.
func (h *proxierHistory) sliceName() string {
	svc := phServices[h.rng.IntN(len(phServices))]
	if h.spec.dual && h.rng.IntN(3) == 0 {
		return svc + "-v6"
	}
	return fmt.Sprintf("%s-%d", svc, h.rng.IntN(2))
}

// applySlice creates or replaces a slice (its Service may not exist) with
// random endpoints in random conditions.
func (h *proxierHistory) applySlice() {
	name := h.sliceName()
	svc := name[:len("svc-a")]
	at, pool := discoveryv1.AddressTypeIPv4, phEndpoints
	if strings.HasSuffix(name, "-v6") {
		at, pool = discoveryv1.AddressTypeIPv6, phEndpoints6
	}
	s := sliceOf(svc, name, at)
	s.Ports = append(s.Ports, discoveryv1.EndpointPort{Name: ptr.To("dns"), Port: ptr.To[int32](5353), Protocol: ptr.To(v1.ProtocolUDP)})
	var desc []string
	seen := map[string]bool{}
	for _, e := range pickSome(h.rng, pool) {
		if seen[e.ip] { // one address once per slice, as the controller writes it
			continue
		}
		seen[e.ip] = true
		ready, serving, terminating := true, true, false
		switch h.rng.IntN(5) {
		case 0:
			ready, serving, terminating = false, true, true
		case 1:
			ready, serving, terminating = false, false, true
		case 2:
			ready, serving = false, false
		}
		ep := discoveryv1.Endpoint{Addresses: []string{e.ip},
			Conditions: discoveryv1.EndpointConditions{Ready: &ready, Serving: &serving, Terminating: &terminating}}
		if e.node != "" {
			ep.NodeName = ptr.To(e.node)
		}
		s.Endpoints = append(s.Endpoints, ep)
		desc = append(desc, fmt.Sprintf("%s@%s r%t s%t t%t", e.ip, e.node, ready, serving, terminating))
	}
	if h.rng.IntN(3) == 0 { // topology hints, on every endpoint as the controller gives them
		for i := range s.Endpoints {
			hints := &discoveryv1.EndpointHints{ForZones: []discoveryv1.ForZone{{Name: []string{"zone-a", "zone-b"}[h.rng.IntN(2)]}}}
			if h.rng.IntN(2) == 0 {
				hints.ForNodes = []discoveryv1.ForNode{{Name: nodeName}}
			}
			s.Endpoints[i].Hints = hints
		}
		desc = append(desc, "hinted")
	}
	h.note("slice %s: %v", name, desc)
	h.apply(s)
}

// changeNode changes this node's addresses, pod CIDRs or zone, or has
// win-4 join or leave (its route added or removed with it on overlay, as
// Flannel does).
func (h *proxierHistory) changeNode() {
	ctx := context.Background()
	nodes := h.n.client.CoreV1().Nodes()
	own, err := nodes.Get(ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	switch h.rng.IntN(4) {
	case 0:
		extra := v1.NodeAddress{Type: v1.NodeInternalIP, Address: "10.0.0.11"}
		if h.spec.dual {
			extra.Address = phNodeIP6
		}
		if i := slices.Index(own.Status.Addresses, extra); i >= 0 {
			own.Status.Addresses = slices.Delete(own.Status.Addresses, i, i+1)
		} else {
			own.Status.Addresses = append(own.Status.Addresses, extra)
		}
		h.note("node addresses %v", own.Status.Addresses)
	case 1:
		// A pod CIDR the node gets late, or never (Calico IPAM).
		if len(own.Spec.PodCIDRs) > 0 {
			own.Spec.PodCIDR, own.Spec.PodCIDRs = "", nil
		} else {
			own.Spec.PodCIDR, own.Spec.PodCIDRs = podCIDR, []string{podCIDR}
			if h.spec.dual {
				own.Spec.PodCIDRs = append(own.Spec.PodCIDRs, phPodCIDR6)
			}
		}
		h.note("node pod CIDRs %v", own.Spec.PodCIDRs)
	case 2:
		own.Labels[v1.LabelTopologyZone] = []string{"zone-a", "zone-b"}[h.rng.IntN(2)]
		h.note("node zone %s", own.Labels[v1.LabelTopologyZone])
	case 3:
		h.joinOrLeave()
		return
	}
	if _, err := nodes.Update(ctx, own, metav1.UpdateOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

// joinOrLeave has win-4's Node made or deleted, and on overlay its route
// added or removed with it, as Flannel does.
func (h *proxierHistory) joinOrLeave() {
	ctx := context.Background()
	nodes := h.n.client.CoreV1().Nodes()
	_, err := nodes.Get(ctx, phJoin[0], metav1.GetOptions{})
	joined := err == nil
	h.note("%s joins: %t", phJoin[0], !joined)
	if joined {
		err = nodes.Delete(ctx, phJoin[0], metav1.DeleteOptions{})
	} else {
		_, err = nodes.Create(ctx, otherNode(phJoin), metav1.CreateOptions{})
	}
	if err != nil {
		h.t.Fatal(err)
	}
	if h.spec.overlay {
		h.quietly(func() { h.setJoinRoute(!joined) })
	}
}

// setJoinRoute adds or removes win-4's route on this node's network.
func (h *proxierHistory) setJoinRoute(present bool) {
	nw, err := h.n.hns.GetNetworkByID(context.Background(), h.n.networkID)
	if err != nil {
		h.t.Fatal(err)
	}
	route := phRoute(phJoin)
	pols := slices.DeleteFunc(slices.Clone(nw.Policies), func(p hnslb.NetworkPolicy) bool {
		return fmt.Sprint(p) == fmt.Sprint(route)
	})
	if present {
		pols = append(pols, route)
	}
	if err := h.n.hns.SetNetworkPolicies(h.n.networkID, pols); err != nil {
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
	if h.faults.ErrorRate != nil || h.rng.IntN(3) == 0 {
		h.faults = sim.Faults{}
	} else {
		h.faults = historytest.RandomFaults(h.rng, 0.3)
	}
	h.note("faults %+v", h.faults)
	h.n.hns.SetFaults(h.faults)
}

// restartHNS restarts HNS, which may drop what it holds; pods whose
// endpoints it dropped are wired again, as the kubelet remakes their sandboxes.
func (h *proxierHistory) restartHNS() {
	loss := sim.RestartLosses[h.rng.IntN(len(sim.RestartLosses))]
	h.note("HNS restarted, losing %s", loss)
	if err := h.n.hns.RestartLosing(0, loss); err != nil {
		h.t.Fatal(err)
	}
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
	h.faults = sim.Faults{}
	h.n.hns.SetFaults(h.faults)
	for range 2 {
		h.n.repairNow()
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
		return h.n.proxier.initialized
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
