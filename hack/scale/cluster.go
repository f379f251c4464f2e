package main

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
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
	Seed                                              uint64
}

func (s clusterSpec) validate() error {
	switch {
	case s.Services < 1 || s.Services > 1<<20-2:
		return fmt.Errorf("-services must be in 1..%d, got %d", 1<<20-2, s.Services)
	case s.Nodes < 1 || s.Nodes > 32768:
		return fmt.Errorf("-nodes must be in 1..32768, got %d", s.Nodes)
	case s.PodsPerNode < 1 || s.PodsPerNode > 254:
		return fmt.Errorf("-pods-per-node must be in 1..254, got %d", s.PodsPerNode)
	case s.EndpointsPerService < 1 || s.EndpointsPerService > s.Nodes*s.PodsPerNode:
		return fmt.Errorf("-endpoints-per-service must be in 1..nodes*pods-per-node (%d), got %d", s.Nodes*s.PodsPerNode, s.EndpointsPerService)
	}
	return nil
}

// The node the harness plays, and the address plan: node n has node IP
// 10.0.0.0+n+1 and pod subnet 10.(128+n/256).(n%256).0/24; Service i has
// cluster IP 10.96.0.0+i+1.
const (
	thisNode     = 0
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
	// newLocalPods counts pods added on this node after the start.
	newLocalPods int
}

// newCluster makes Services with one TCP port each, whose endpoints are
// distinct pods drawn at random from nodes×pods-per-node pods, so about
// 1/nodes of the endpoints are on this node.
func newCluster(spec clusterSpec) *cluster {
	c := &cluster{spec: spec, rng: rand.New(rand.NewPCG(spec.Seed, 0x5ca1e))}
	for n := range spec.Nodes {
		base := podCIDR(n).Addr()
		for k := range spec.PodsPerNode {
			c.pods = append(c.pods, pod{ip: addrPlus(base, k+1).String(), node: n})
		}
	}
	c.readyRefs = make([]int, len(c.pods))
	created := metav1.NewTime(time.Unix(1_700_000_000, 0))
	for i := range spec.Services {
		ns := fmt.Sprintf("ns-%02d", i%namespaces)
		name := fmt.Sprintf("svc-%06d", i)
		ip := addrPlus(netip.MustParseAddr("10.96.0.0"), i+1).String()
		c.svcs = append(c.svcs, &v1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: created},
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
		for len(members) < spec.EndpointsPerService {
			p := c.rng.IntN(len(c.pods))
			if !chosen[p] {
				chosen[p] = true
				members = append(members, p)
				c.readyRefs[p]++
			}
		}
		c.members = append(c.members, members)
		ready := make([]bool, len(members))
		for j := range ready {
			ready[j] = true
		}
		c.ready = append(c.ready, ready)
	}
	return c
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

// objects is every Service and EndpointSlice, for the fake clientset. The
// slices are rendered afresh, not kept, so that the harness's own memory
// stays small beside the proxier's.
func (c *cluster) objects() []runtime.Object {
	var out []runtime.Object
	for i, svc := range c.svcs {
		out = append(out, svc)
		for s := 0; s*endpointsCap < len(c.members[i]); s++ {
			out = append(out, c.buildSlice(i, s))
		}
	}
	return out
}

// expectedLBs is one ClusterIP load balancer per Service (each keeps at
// least one ready endpoint).
func (c *cluster) expectedLBs() int { return len(c.svcs) }

// expectedRemoteEndpoints is the number of remote pods with a ready endpoint.
func (c *cluster) expectedRemoteEndpoints() int {
	n := 0
	for p, refs := range c.readyRefs {
		if refs > 0 && !c.pods[p].local() {
			n++
		}
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

// change is one single-endpoint change: an endpoint's readiness flips.
type change struct {
	service, endpoint int
	slice             *discoveryv1.EndpointSlice
	// remoteEndpointWrites is what the minimal HNS programming needs beyond
	// the one load balancer update: a remote endpoint created when a remote
	// pod gets its first ready endpoint, deleted when it loses its last.
	remoteEndpointWrites int
}

// nextChange flips the readiness of a random endpoint, never the last ready
// one of a Service (a Service without endpoints has no load balancer), and
// returns the EndpointSlice to write.
func (c *cluster) nextChange() change {
	for {
		i := c.rng.IntN(len(c.svcs))
		j := c.rng.IntN(len(c.members[i]))
		if c.ready[i][j] && c.expectedBackends(i) == 1 {
			continue
		}
		p := c.members[i][j]
		ch := change{service: i, endpoint: j}
		c.ready[i][j] = !c.ready[i][j]
		before := c.readyRefs[p]
		if c.ready[i][j] {
			c.readyRefs[p]++
		} else {
			c.readyRefs[p]--
		}
		if !c.pods[p].local() && (before == 0) != (c.readyRefs[p] == 0) {
			ch.remoteEndpointWrites = 1
		}
		ch.slice = c.buildSlice(i, j/endpointsCap)
		return ch
	}
}

// newLocalPodChange replaces a ready endpoint of a random Service with a
// brand-new pod on this node (a pod rescheduled here). It returns the change
// and the new pod's IP, whose local HNS endpoint the CNI makes first. ok is
// false when this node's pod subnet is full.
func (c *cluster) newLocalPodChange() (ch change, ip string, ok bool) {
	k := c.spec.PodsPerNode + c.newLocalPods + 1
	if k > 254 {
		return change{}, "", false
	}
	c.newLocalPods++
	ip = addrPlus(podCIDR(thisNode).Addr(), k).String()
	c.pods = append(c.pods, pod{ip: ip, node: thisNode})
	c.readyRefs = append(c.readyRefs, 1)
	for {
		i := c.rng.IntN(len(c.svcs))
		j := c.rng.IntN(len(c.members[i]))
		if !c.ready[i][j] {
			continue
		}
		old := c.members[i][j]
		c.readyRefs[old]--
		ch = change{service: i, endpoint: j}
		if !c.pods[old].local() && c.readyRefs[old] == 0 {
			ch.remoteEndpointWrites = 1
		}
		c.members[i][j] = len(c.pods) - 1
		ch.slice = c.buildSlice(i, j/endpointsCap)
		return ch, ip, true
	}
}
