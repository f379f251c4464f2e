package main

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"net/netip"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// clusterSpec sizes the synthetic cluster.
type clusterSpec struct {
	Services, EndpointsPerService, Nodes, PodsPerNode int
	// Overlay: the node's pod network is a VXLAN overlay; the node then also
	// wants a service-VIP endpoint per Service and a source-VIP endpoint.
	Overlay bool
	Seed    uint64
}

func (s clusterSpec) validate() error {
	switch {
	case s.Services < 1 || s.Services > 1<<20-2:
		return fmt.Errorf("-services must be in 1..%d, got %d", 1<<20-2, s.Services)
	case s.Nodes < 1 || s.Nodes > maxNodes:
		return fmt.Errorf("-nodes must be in 1..%d, got %d", maxNodes, s.Nodes)
	case s.PodsPerNode < 1 || s.PodsPerNode > maxPodHost:
		return fmt.Errorf("-pods-per-node must be in 1..%d, got %d", maxPodHost, s.PodsPerNode)
	case s.EndpointsPerService < 1 || s.EndpointsPerService > s.Nodes*s.PodsPerNode:
		return fmt.Errorf("-endpoints-per-service must be in 1..nodes*pods-per-node (%d), got %d", s.Nodes*s.PodsPerNode, s.EndpointsPerService)
	}
	return nil
}

// The node the harness plays, and the address plan: node n has node IP
// 10.0.0.0+n+1 and pod subnet 10.(128+n/256).(n%256).0/24, whose .254 is
// the overlay source VIP; Service i has cluster IP 10.96.0.0+i+1.
const (
	thisNode     = 0
	maxNodes     = 5000 // Kubernetes' supported maximum
	maxPodHost   = 253  // pods take .1 to .253 of a node's /24
	namespaces   = 50
	servicePort  = 80
	targetPort   = 8080
	endpointsCap = 100 // endpoints per EndpointSlice, as the controller makes them
)

func nodeName(n int) string { return fmt.Sprintf("win-%05d", n) }

func nodeIP(n int) netip.Addr { return addrPlus(netip.MustParseAddr("10.0.0.0"), n+1) }

func podCIDR(n int) netip.Prefix {
	return netip.PrefixFrom(addrPlus(netip.MustParseAddr("10.128.0.0"), n*256), 24)
}

// sourceVIP is this node's overlay source VIP.
func sourceVIP() netip.Addr { return addrPlus(podCIDR(thisNode).Addr(), 254) }

func addrPlus(a netip.Addr, n int) netip.Addr {
	b := a.As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	v += uint32(n)
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// pod is one pod of the pool that Services select from.
type pod struct {
	ip   string
	node int
}

func (p pod) local() bool { return p.node == thisNode }

// cluster is the synthetic cluster and the harness's own model of what HNS
// must end up holding, kept independently of the code under test.
type cluster struct {
	spec clusterSpec
	rng  *rand.Rand
	pods []pod
	svcs []*v1.Service
	// members[i][j] is the pod behind endpoint j of Service i.
	members [][]int
	ready   [][]bool
	// readyRefs counts, per pod, the ready endpoints that name it: a remote
	// pod with readyRefs > 0 needs a remote HNS endpoint on this node.
	readyRefs []int
	// nextHost is, per node, the host number of its next new pod.
	nextHost []int
	// scaledUp is the Service a scale-up grew and the scale-down will
	// shrink back, or -1.
	scaledUp int
}

// newCluster makes Services with one TCP port each, whose endpoints are
// distinct pods drawn at random from nodes×pods-per-node pods, so about
// 1/nodes of the endpoints are on this node.
func newCluster(spec clusterSpec) *cluster {
	c := &cluster{spec: spec, rng: rand.New(rand.NewPCG(spec.Seed, 0x5ca1e)), scaledUp: -1}
	for n := range spec.Nodes {
		base := podCIDR(n).Addr()
		for k := range spec.PodsPerNode {
			c.pods = append(c.pods, pod{ip: addrPlus(base, k+1).String(), node: n})
		}
		c.nextHost = append(c.nextHost, spec.PodsPerNode+1)
	}
	c.readyRefs = make([]int, len(c.pods))
	for range spec.Services {
		c.addService()
	}
	return c
}

// addService appends a Service whose endpoints are distinct ready pods
// drawn from the pool, and returns the remote endpoints it brings in.
func (c *cluster) addService() (remoteEndpointWrites int) {
	i := len(c.svcs)
	ns := fmt.Sprintf("ns-%02d", i%namespaces)
	name := fmt.Sprintf("svc-%06d", i)
	ip := addrPlus(netip.MustParseAddr("10.96.0.0"), i+1).String()
	c.svcs = append(c.svcs, &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: metav1.NewTime(time.Unix(1_700_000_000, 0))},
		Spec: v1.ServiceSpec{
			Type: v1.ServiceTypeClusterIP, ClusterIP: ip, ClusterIPs: []string{ip},
			IPFamilies: []v1.IPFamily{v1.IPv4Protocol},
			Ports: []v1.ServicePort{{
				Name: "http", Protocol: v1.ProtocolTCP, Port: servicePort, TargetPort: intstr.FromInt32(targetPort),
			}},
		},
	})
	chosen := map[int]bool{}
	var members []int
	for len(members) < c.spec.EndpointsPerService {
		p := c.rng.IntN(len(c.pods))
		if !chosen[p] {
			chosen[p] = true
			members = append(members, p)
			remoteEndpointWrites += c.addRef(p, 1)
		}
	}
	c.members = append(c.members, members)
	ready := make([]bool, len(members))
	for j := range ready {
		ready[j] = true
	}
	c.ready = append(c.ready, ready)
	return remoteEndpointWrites
}

// addRef changes pod p's ready references by d and returns 1 when that
// creates or deletes its remote HNS endpoint (a remote pod's first ready
// reference, or its last), else 0.
func (c *cluster) addRef(p, d int) int {
	before := c.readyRefs[p]
	c.readyRefs[p] += d
	if !c.pods[p].local() && (before == 0) != (c.readyRefs[p] == 0) {
		return 1
	}
	return 0
}

// newPod adds a pod on a random node other than this one and the avoided
// one (when there is such a node with room) and returns its index.
func (c *cluster) newPod(avoid int) int {
	for range 1000 {
		n := c.rng.IntN(c.spec.Nodes)
		if !c.takesNewPods(n, avoid) {
			continue
		}
		if p, ok := c.addPod(n); ok {
			return p
		}
	}
	// Most subnets are full: the first with room (roomForPods said there is one).
	for n := range c.spec.Nodes {
		if c.takesNewPods(n, avoid) {
			if p, ok := c.addPod(n); ok {
				return p
			}
		}
	}
	panic("scale: newPod without room; roomForPods is wrong")
}

// takesNewPods says whether newPod may put a pod on node n: not this node
// (unless it is the only one) and not avoid (unless there are only two).
func (c *cluster) takesNewPods(n, avoid int) bool {
	return (n != thisNode || c.spec.Nodes == 1) && (n != avoid || c.spec.Nodes <= 2)
}

// roomForPods says whether newPod(avoid) can place count more pods:
// addresses are never reused, so a long run of changes can fill every
// other node's /24.
func (c *cluster) roomForPods(count, avoid int) bool {
	free := 0
	for n := range c.spec.Nodes {
		if c.takesNewPods(n, avoid) {
			free += max(0, maxPodHost+1-c.nextHost[n])
		}
	}
	return free >= count
}

// addPod adds a pod on node n if its subnet has room.
func (c *cluster) addPod(n int) (int, bool) {
	if c.nextHost[n] > maxPodHost {
		return 0, false
	}
	c.pods = append(c.pods, pod{ip: addrPlus(podCIDR(n).Addr(), c.nextHost[n]).String(), node: n})
	c.readyRefs = append(c.readyRefs, 0)
	c.nextHost[n]++
	return len(c.pods) - 1, true
}

// buildSlice renders EndpointSlice s of Service i from the model.
func (c *cluster) buildSlice(i, s int) *discoveryv1.EndpointSlice {
	svc := c.svcs[i]
	out := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: svc.Namespace, Name: fmt.Sprintf("%s-%03d", svc.Name, s),
			Labels: map[string]string{discoveryv1.LabelServiceName: svc.Name},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports: []discoveryv1.EndpointPort{{
			Name: ptr.To("http"), Port: ptr.To[int32](targetPort), Protocol: ptr.To(v1.ProtocolTCP),
		}},
	}
	for j := s * endpointsCap; j < min((s+1)*endpointsCap, len(c.members[i])); j++ {
		p := c.pods[c.members[i][j]]
		out.Endpoints = append(out.Endpoints, discoveryv1.Endpoint{
			Addresses: []string{p.ip},
			NodeName:  ptr.To(nodeName(p.node)),
			// As the EndpointSlice controller sets it; the proxier's
			// informers drop it (proxier.TrimForCache).
			TargetRef: &v1.ObjectReference{Kind: "Pod", Namespace: svc.Namespace, Name: "pod-" + p.ip},
			Conditions: discoveryv1.EndpointConditions{
				Ready: ptr.To(c.ready[i][j]), Serving: ptr.To(c.ready[i][j]), Terminating: ptr.To(false),
			},
		})
	}
	return out
}

// slicesFor is the number of EndpointSlices n endpoints take.
func slicesFor(n int) int { return (n + endpointsCap - 1) / endpointsCap }

// objects is every Service and EndpointSlice, for the fake clientset. The
// slices are rendered afresh, not kept, so that the harness's own memory
// stays small beside the proxier's.
func (c *cluster) objects() []runtime.Object {
	var out []runtime.Object
	for i, svc := range c.svcs {
		out = append(out, svc)
		for s := range slicesFor(len(c.members[i])) {
			out = append(out, c.buildSlice(i, s))
		}
	}
	return out
}

// expectedLBs is one ClusterIP load balancer per Service (each keeps at
// least one ready endpoint).
func (c *cluster) expectedLBs() int { return len(c.svcs) }

// expectedRemotePods is the number of remote pods with a ready endpoint.
func (c *cluster) expectedRemotePods() int {
	n := 0
	for p, refs := range c.readyRefs {
		if refs > 0 && !c.pods[p].local() {
			n++
		}
	}
	return n
}

// expectedRemoteEndpoints is what HNS must hold flagged remote: one per
// remote pod with a ready endpoint and, on overlay, one per cluster IP.
func (c *cluster) expectedRemoteEndpoints() int {
	n := c.expectedRemotePods()
	if c.spec.Overlay {
		n += len(c.svcs)
	}
	return n
}

// expectedOwnEndpoints is every HNS endpoint the proxier makes: the remote
// ones and, on overlay, the source-VIP endpoint.
func (c *cluster) expectedOwnEndpoints() int {
	n := c.expectedRemoteEndpoints()
	if c.spec.Overlay {
		n++
	}
	return n
}

// expectedBackends is the number of ready endpoints of Service i.
func (c *cluster) expectedBackends(i int) int {
	n := 0
	for _, r := range c.ready[i] {
		if r {
			n++
		}
	}
	return n
}

// write is one write to the API server.
type write struct {
	svc   *v1.Service
	slice *discoveryv1.EndpointSlice
	op    writeOp
}

type writeOp int

const (
	writeUpdate writeOp = iota
	writeCreate
	writeDelete
)

// change is one cluster change: the API writes that make it, and the
// minimal HNS programming it needs, which depends on the HNS profile only
// through whether a load balancer can be modified in place.
type change struct {
	kind   string
	writes []write
	// Load balancers created, changed (backends) and deleted.
	lbCreates, lbUpdates, lbDeletes int
	// remoteEndpointWrites are remote endpoints created or deleted: a remote
	// pod's first ready endpoint or its last, a Service's overlay VIP endpoint.
	remoteEndpointWrites int
	// service is the Service a single-Service change touched.
	service int
}

// minimalWrites is the least HNS can be written for the change: without
// ModifyLoadBalancer (ws2019, ws2022, 15.4) a load balancer's new backends
// are a delete and a create.
func (ch change) minimalWrites(modify bool) int {
	perUpdate := 1
	if !modify {
		perUpdate = 2
	}
	return ch.lbCreates + ch.lbDeletes + perUpdate*ch.lbUpdates + ch.remoteEndpointWrites
}

// Change kinds, as the report names them.
const (
	kindFlip          = "readiness_flip"
	kindReplace       = "pod_replaced"
	kindServiceCreate = "service_created"
	kindServiceDelete = "service_deleted"
	kindScaleUp       = "scaled_up"
	kindScaleDown     = "scaled_down"
	kindDrain         = "node_drained"
	kindNewLocalPod   = "new_local_pod"
	kindExternalIP    = "external_ip"
)

// updateSlices is the change's writes of Service i's slices that hold the
// given endpoints.
func (c *cluster) updateSlices(ch *change, i int, endpoints map[int]bool) {
	done := map[int]bool{}
	for j := range endpoints {
		if s := j / endpointsCap; !done[s] {
			done[s] = true
			ch.writes = append(ch.writes, write{slice: c.buildSlice(i, s), op: writeUpdate})
		}
	}
}

// nextChange flips the readiness of a random endpoint, never the last ready
// one of a Service (a Service without endpoints has no load balancer).
func (c *cluster) nextChange() change {
	for {
		i := c.rng.IntN(len(c.svcs))
		j := c.rng.IntN(len(c.members[i]))
		if c.ready[i][j] && c.expectedBackends(i) == 1 {
			continue
		}
		ch := change{kind: kindFlip, service: i, lbUpdates: 1}
		c.ready[i][j] = !c.ready[i][j]
		d := -1
		if c.ready[i][j] {
			d = 1
		}
		ch.remoteEndpointWrites = c.addRef(c.members[i][j], d)
		c.updateSlices(&ch, i, map[int]bool{j: true})
		return ch
	}
}

// replacePods puts a new pod (on a node other than this one and avoid) in
// place of each pod in gone, in every Service that names it, as a
// Deployment's replacement pods do; each touched Service's slices are
// written once. A Service whose backends change is a load balancer update.
func (c *cluster) replacePods(ch *change, gone map[int]bool, avoid int) {
	replacement := map[int]int{}
	for i := range c.svcs {
		touched := map[int]bool{}
		lbChanged := false
		for j, p := range c.members[i] {
			if !gone[p] {
				continue
			}
			q, ok := replacement[p]
			if !ok {
				q = c.newPod(avoid)
				replacement[p] = q
			}
			c.members[i][j] = q
			touched[j] = true
			if c.ready[i][j] {
				lbChanged = true
				ch.remoteEndpointWrites += c.addRef(p, -1) + c.addRef(q, 1)
			}
		}
		if len(touched) == 0 {
			continue
		}
		if lbChanged {
			ch.lbUpdates++
		}
		c.updateSlices(ch, i, touched)
	}
}

// replacePodChange replaces a random remote pod that backs a Service by a
// new pod on another node, in every Service it backs. ok is false when
// there is no remote pod, or no room for its replacement.
func (c *cluster) replacePodChange() (ch change, ok bool) {
	for range 1000 {
		i := c.rng.IntN(len(c.svcs))
		p := c.members[i][c.rng.IntN(len(c.members[i]))]
		if c.pods[p].local() {
			continue
		}
		if !c.roomForPods(1, c.pods[p].node) {
			return change{}, false
		}
		ch = change{kind: kindReplace}
		c.replacePods(&ch, map[int]bool{p: true}, c.pods[p].node)
		return ch, true
	}
	return change{}, false
}

// drainChange drains a random other node that runs a pod some Service
// names: every such pod on it is replaced by a new pod on another node. ok
// is false when there is no such node, or no room for its pods elsewhere.
func (c *cluster) drainChange() (ch change, ok bool) {
	onNode := map[int]map[int]bool{}
	for i := range c.members {
		for _, p := range c.members[i] {
			if n := c.pods[p].node; n != thisNode {
				if onNode[n] == nil {
					onNode[n] = map[int]bool{}
				}
				onNode[n][p] = true
			}
		}
	}
	if len(onNode) == 0 {
		return change{}, false
	}
	nodes := slices.Sorted(maps.Keys(onNode))
	n := nodes[c.rng.IntN(len(nodes))]
	if !c.roomForPods(len(onNode[n]), n) {
		return change{}, false
	}
	ch = change{kind: kindDrain}
	c.replacePods(&ch, onNode[n], n)
	return ch, true
}

// serviceChurn creates a Service with its EndpointSlices, or deletes the
// one it created last: Services alternate between spec.Services and one more.
func (c *cluster) serviceChurn() change {
	vip := 0
	if c.spec.Overlay {
		vip = 1
	}
	if len(c.svcs) == c.spec.Services {
		ch := change{kind: kindServiceCreate, lbCreates: 1}
		ch.remoteEndpointWrites = c.addService() + vip
		i := len(c.svcs) - 1
		ch.service = i
		ch.writes = append(ch.writes, write{svc: c.svcs[i], op: writeCreate})
		for s := range slicesFor(len(c.members[i])) {
			ch.writes = append(ch.writes, write{slice: c.buildSlice(i, s), op: writeCreate})
		}
		return ch
	}
	i := len(c.svcs) - 1
	ch := change{kind: kindServiceDelete, lbDeletes: 1, remoteEndpointWrites: vip, service: i}
	ch.writes = append(ch.writes, write{svc: c.svcs[i], op: writeDelete})
	for s := range slicesFor(len(c.members[i])) {
		ch.writes = append(ch.writes, write{slice: c.buildSlice(i, s), op: writeDelete})
	}
	for j, p := range c.members[i] {
		if c.ready[i][j] {
			ch.remoteEndpointWrites += c.addRef(p, -1)
		}
	}
	c.svcs, c.members, c.ready = c.svcs[:i], c.members[:i], c.ready[:i]
	return ch
}

// externalIPChanges are two changes of a random Service: one that gives it
// the external IP vip (a new tenant frontend: one load balancer created),
// and one that takes it away again.
func (c *cluster) externalIPChanges(vip string) (given, taken change) {
	i := c.rng.IntN(len(c.svcs))
	svc := c.svcs[i].DeepCopy()
	svc.Spec.ExternalIPs = []string{vip}
	given = change{kind: kindExternalIP, service: i, lbCreates: 1, writes: []write{{svc: svc, op: writeUpdate}}}
	taken = change{kind: kindExternalIP, service: i, lbDeletes: 1, writes: []write{{svc: c.svcs[i], op: writeUpdate}}}
	return given, taken
}

// scaleChange scales a random Service from endpoints-per-service to five
// times as many new pods on other nodes, or the one it scaled back down.
// ok is false when the other nodes have no room for the new pods.
func (c *cluster) scaleChange() (ch change, ok bool) {
	e := c.spec.EndpointsPerService
	if c.scaledUp < 0 {
		if !c.roomForPods(4*e, -1) {
			return change{}, false
		}
		i := c.rng.IntN(c.spec.Services)
		for len(c.members[i]) != e {
			i = c.rng.IntN(c.spec.Services)
		}
		c.scaledUp = i
		ch = change{kind: kindScaleUp, lbUpdates: 1, service: i}
		touched := map[int]bool{}
		for j := e; j < 5*e; j++ {
			p := c.newPod(-1)
			c.members[i] = append(c.members[i], p)
			c.ready[i] = append(c.ready[i], true)
			ch.remoteEndpointWrites += c.addRef(p, 1)
			touched[j] = true
		}
		c.resliced(&ch, i, e, touched)
		return ch, true
	}
	i := c.scaledUp
	c.scaledUp = -1
	ch = change{kind: kindScaleDown, lbUpdates: 1, service: i}
	before := len(c.members[i])
	touched := map[int]bool{}
	for j := e; j < before; j++ {
		if c.ready[i][j] {
			ch.remoteEndpointWrites += c.addRef(c.members[i][j], -1)
		}
		touched[j] = true
	}
	c.members[i], c.ready[i] = c.members[i][:e], c.ready[i][:e]
	c.resliced(&ch, i, before, touched)
	return ch, true
}

// resliced writes Service i's slices after its endpoint count changed from
// before: the touched slices that still exist are updated, new ones
// created, those past the end deleted.
func (c *cluster) resliced(ch *change, i, before int, touched map[int]bool) {
	now := slicesFor(len(c.members[i]))
	kept := map[int]bool{}
	for j := range touched {
		if j/endpointsCap < min(now, slicesFor(before)) {
			kept[j] = true
		}
	}
	c.updateSlices(ch, i, kept)
	for s := slicesFor(before); s < now; s++ {
		ch.writes = append(ch.writes, write{slice: c.buildSlice(i, s), op: writeCreate})
	}
	for s := now; s < slicesFor(before); s++ {
		ch.writes = append(ch.writes, write{slice: c.buildSlice(i, s), op: writeDelete})
	}
}

// newLocalPodChange replaces a ready endpoint of a random Service with a
// brand-new pod on this node (a pod rescheduled here). It returns the change
// and the new pod's IP, whose local HNS endpoint the CNI makes first. ok is
// false when this node's pod subnet is full.
func (c *cluster) newLocalPodChange() (ch change, ip string, ok bool) {
	q, ok := c.addPod(thisNode)
	if !ok {
		return change{}, "", false
	}
	for {
		i := c.rng.IntN(len(c.svcs))
		j := c.rng.IntN(len(c.members[i]))
		if !c.ready[i][j] {
			continue
		}
		ch = change{kind: kindNewLocalPod, service: i, lbUpdates: 1}
		ch.remoteEndpointWrites = c.addRef(c.members[i][j], -1) + c.addRef(q, 1)
		c.members[i][j] = q
		c.updateSlices(&ch, i, map[int]bool{j: true})
		return ch, c.pods[q].ip, true
	}
}
