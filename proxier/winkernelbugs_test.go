package proxier

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
	"github.com/hnsproxy/hnsproxy/sim"
)

// kube-proxy winkernel's bug reports, replayed: each case is the sequence a
// public report (kubernetes/kubernetes issues and the pull requests that
// fixed them) gives to reproduce it, through the real proxiers of simulated
// nodes as the conformance sequences run. After each step packets are traced
// with the VFP model, and no node may keep a remote endpoint that nothing
// uses: stale remote endpoints and stale load balancers are what most of
// these reports were about. The reports are winkernel's
// (reference counts kept by hand, an ID cached for the wrong object, a map
// cleared too early); hnsproxy shares none of that code, so the cases check
// the outcome its users were promised, not a fix.

type winkernelBug struct {
	report    string            // the report, its fix, and where it appeared
	dualStack bool              // the dual-stack nodes; l2bridge only (HNS overlay has no IPv6)
	nodes     func() []nodeSpec // default threeNodes
	steps     []conformanceStep
}

// dualStackNodes are two nodes with an IPv4 and an IPv6 pod subnet.
func dualStackNodes() []nodeSpec {
	return []nodeSpec{
		{name: "win-1", ips: []string{ip1, "fd00::1"}, podCIDRs: []string{"10.244.1.0/24", "fd00:10:244:1::/64"},
			pods: []string{pod1a + ",fd00:10:244:1::10", pod1b + ",fd00:10:244:1::11"}},
		{name: "win-2", ips: []string{ip2, "fd00::2"}, podCIDRs: []string{"10.244.2.0/24", "fd00:10:244:2::/64"},
			pods: []string{pod2a + ",fd00:10:244:2::10", pod2b + ",fd00:10:244:2::11"}},
	}
}

// at8080 are the pods' addresses at their target port 8080, IPv6 ones
// bracketed.
func at8080(ips ...string) []string {
	out := make([]string, len(ips))
	for i, ip := range ips {
		out[i] = netip.AddrPortFrom(netip.MustParseAddr(ip), 8080).String()
	}
	return out
}

// onEveryNode sets HNS's faults on each node.
func onEveryNode(f sim.Faults) func(c *simCluster) {
	return func(c *simCluster) {
		for _, n := range c.nodes {
			n.hns.SetFaults(f)
		}
	}
}

// untilEveryNode waits until cond holds of each node's HNS counters.
func untilEveryNode(what string, cond func(sim.Counters) bool) func(c *simCluster) {
	return func(c *simCluster) {
		for _, n := range c.nodes {
			n.eventually(what, func() bool { return cond(n.hns.Counters()) })
		}
	}
}

// deletedBehindItsBack deletes the named nodes' load balancers as an
// operator's hnsdiag or another agent would, runs the drift repair the
// periodic timer would run, and waits until each node has as many again.
func deletedBehindItsBack(nodes ...string) func(c *simCluster) {
	return func(c *simCluster) {
		for _, name := range nodes {
			n := c.node(name)
			lbs := n.hns.Snapshot().LoadBalancers
			for _, lb := range lbs {
				if err := n.hns.DeleteLoadBalancerOutOfBand(lb.ID); err != nil {
					c.t.Fatal(err)
				}
			}
			n.repairNow()
			n.eventually("the drift repair making the load balancers again", func() bool { return len(n.lbs()) == len(lbs) })
		}
	}
}

// deletedThenAsMany is kubernetes/kubernetes#113524's sequence: a Service's
// three pods deleted while HNS has faults (until met holds on every node),
// then HNS well again and three pods on other addresses (a new one on
// win-3). A remote endpoint HNS kept backs nothing and is left to the next
// drift repair, which lists HNS (a delete HNS reports done is not
// checked): with repair, the last step runs one.
func deletedThenAsMany(name, clusterIP, faults string, f sim.Faults, met func(sim.Counters) bool, repair bool) []conformanceStep {
	const pod3b = "10.244.3.11"
	sl := func(eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
		return sliceOf(name, name+"-1", discoveryv1.AddressTypeIPv4, eps...)
	}
	to := clusterIP + ":80"
	steps := []conformanceStep{
		{name: "three pods", apply: []any{service(name, clusterIP), sl(readyEP(pod1a, "win-1"), readyEP(pod2a, "win-2"), readyEP(pod3a, "win-3"))},
			probes: []probe{{from: pod1b, to: to, reach: at8080(pod1a, pod2a, pod3a)}}},
		{name: "pods deleted; " + faults, do: onEveryNode(f), apply: []any{sl()}, wait: untilEveryNode(faults, met)},
		{name: "HNS well again; three new pods on other addresses",
			do: func(c *simCluster) {
				onEveryNode(sim.Faults{})(c)
				c.node("win-3").replacePod(pod3b, true)
			},
			apply:  []any{sl(readyEP(pod1b, "win-1"), readyEP(pod2b, "win-2"), readyEP(pod3b, "win-3"))},
			probes: []probe{{from: pod1a, to: to, reach: at8080(pod1b, pod2b, pod3b)}, {from: pod3a, to: to, reach: at8080(pod1b, pod2b, pod3b)}}},
	}
	if repair {
		steps[2].name += "; the next drift repair"
		steps[2].wait = func(c *simCluster) {
			c.converge()
			for _, n := range c.nodes {
				n.repaired()
			}
			c.converge()
		}
	}
	return steps
}

// remoteEndpointsBackSomething fails for a remote endpoint that is neither
// a backend of one of the node's load balancers nor (on overlay) the
// endpoint of a Service's cluster IP, made for every Service with or
// without endpoints, as winkernel makes it: one left behind.
func remoteEndpointsBackSomething(n *testNode) error {
	snap := n.hns.Snapshot()
	used := map[string]bool{}
	for _, lb := range snap.LoadBalancers {
		for _, id := range lb.HostComputeEndpoints {
			used[id] = true
		}
	}
	svcs, err := n.client.CoreV1().Services("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return err
	}
	clusterIPs := map[string]bool{}
	for _, s := range svcs.Items {
		for _, ip := range s.Spec.ClusterIPs {
			clusterIPs[ip] = true
		}
	}
	var stale []string
	for _, e := range snap.Endpoints {
		if e.IsRemote() && !used[e.ID] && !clusterIPs[e.IP()] {
			stale = append(stale, e.IP())
		}
	}
	if len(stale) > 0 {
		return fmt.Errorf("remote endpoints %v back no load balancer", stale)
	}
	return nil
}

var winkernelBugs = []winkernelBug{
	{
		report: "kubernetes/kubernetes#112836 (fix #112837; 1.24 and 1.25): each backend deleted behind a LoadBalancer Service's ingress IP left a load balancer with the old backends",
		steps: func() []conformanceStep {
			lb := service("leak", "10.96.5.10", asType(v1.ServiceTypeLoadBalancer), nodePorts(30510), ingressIP("192.0.2.80"))
			sl := func(ips ...string) *discoveryv1.EndpointSlice {
				eps := make([]discoveryv1.Endpoint, len(ips))
				for i, ip := range ips {
					eps[i] = readyEP(ip, map[string]string{pod1a: "win-1", pod1b: "win-1", pod2a: "win-2", pod2b: "win-2"}[ip])
				}
				return sliceOf("leak", "leak-1", discoveryv1.AddressTypeIPv4, eps...)
			}
			reach := func(ips ...string) []probe {
				return []probe{
					{from: pod3a, to: "10.96.5.10:80", reach: at8080(ips...)},
					{from: extClient, to: "192.0.2.80:80", ingress: "win-3", reach: at8080(ips...)},
					{from: extClient, to: "192.0.2.80:80", ingress: "win-1", reach: at8080(ips...)},
					{from: extClient, to: ip2 + ":30510", reach: at8080(ips...)},
				}
			}
			return []conformanceStep{
				{name: "three pods", apply: []any{lb, sl(pod1a, pod2a, pod2b)}, probes: reach(pod1a, pod2a, pod2b)},
				{name: "one deleted", apply: []any{sl(pod1a, pod2a)}, probes: reach(pod1a, pod2a)},
				{name: "another deleted", apply: []any{sl(pod2a)}, probes: reach(pod2a)},
				{name: "a new one", apply: []any{sl(pod2a, pod1b)}, probes: reach(pod1b, pod2a)},
			}
		}(),
	},
	{
		report: "kubernetes/kubernetes#76316 (1.12): two Services on one pod, at different ports; deleting one deleted the remote endpoint the other still used",
		steps: func() []conformanceStep {
			a := service("port-a", "10.96.5.5")
			b := service("port-b", "10.96.5.6", withPorts(tcpPort("metrics", 81, intstr.FromInt32(9090), 0)))
			bSlice := sliceOf("port-b", "port-b-1", discoveryv1.AddressTypeIPv4, readyEP(pod2a, "win-2"))
			bSlice.Ports = []discoveryv1.EndpointPort{{Name: ptr.To("metrics"), Port: ptr.To[int32](9090), Protocol: ptr.To(v1.ProtocolTCP)}}
			toB := []probe{{from: pod1b, to: "10.96.5.6:81", reach: []string{at(pod2a, 9090)}}, {from: pod3a, to: "10.96.5.6:81", reach: []string{at(pod2a, 9090)}}}
			return []conformanceStep{
				{name: "both", apply: []any{a, sliceOf("port-a", "port-a-1", discoveryv1.AddressTypeIPv4, readyEP(pod2a, "win-2")), b, bSlice},
					probes: append([]probe{{from: pod1b, to: "10.96.5.5:80", reach: at8080(pod2a)}}, toB...)},
				{name: "the first deleted", remove: []any{a}, probes: append([]probe{{from: pod1b, to: "10.96.5.5:80"}}, toB...)},
			}
		}(),
	},
	{
		report: "kubernetes/kubernetes#113841 (fixed by #113776; 1.24 to 1.26): a LoadBalancer Service whose every endpoint was terminating lost its ingress IP load balancer, and the connections draining through it",
		steps: func() []conformanceStep {
			lb := service("draining", "10.96.5.15", asType(v1.ServiceTypeLoadBalancer), nodePorts(30515), ingressIP("192.0.2.85"))
			sl := func(eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
				return sliceOf("draining", "draining-1", discoveryv1.AddressTypeIPv4, eps...)
			}
			reach := func(ips ...string) []probe {
				return []probe{
					{from: extClient, to: "192.0.2.85:80", ingress: "win-1", reach: at8080(ips...)},
					{from: extClient, to: "192.0.2.85:80", ingress: "win-2", reach: at8080(ips...)},
					{from: pod3a, to: "10.96.5.15:80", reach: at8080(ips...)},
				}
			}
			return []conformanceStep{
				{name: "one pod", apply: []any{lb, sl(readyEP(pod2a, "win-2"))}, probes: reach(pod2a)},
				{name: "its pod terminating, still serving", apply: []any{sl(terminatingEP(pod2a, "win-2", true))}, probes: reach(pod2a)},
				{name: "no longer serving", apply: []any{sl(terminatingEP(pod2a, "win-2", false))}, probes: reach()},
				{name: "gone, a new pod ready", apply: []any{sl(readyEP(pod1a, "win-1"))}, probes: reach(pod1a)},
			}
		}(),
	},
	{
		report: "kubernetes/kubernetes#113524 (Windows Server 2019): a load balancer delete HNS refused, then the Service's pods made again as many, and the stale load balancer taken for valid",
		steps: deletedThenAsMany("refused", "10.96.5.20", "HNS times out every load balancer delete",
			sim.Faults{
				ErrorRate: map[sim.Op]float64{sim.OpDeleteLoadBalancer: 1},
				Codes:     map[sim.Op][]hnslb.ErrorCode{sim.OpDeleteLoadBalancer: {hnslb.CodeTimeout}},
			},
			func(cnt sim.Counters) bool { return cnt.CountResult(sim.OpDeleteLoadBalancer, "Timeout") > 0 }, false),
	},
	{
		report: "kubernetes/kubernetes#113524 with deletes HNS reports done but does not apply (microsoft/Windows-Containers#631 saw it for endpoints): the Service's pods made again as many",
		steps: deletedThenAsMany("kept", "10.96.5.25", "HNS keeps what it reports deleted",
			sim.Faults{KeptDeletes: 1000},
			func(cnt sim.Counters) bool { return cnt.KeptOnDelete > 0 }, true),
	},
	{
		report: "kubernetes/kubernetes#115783 (fix #115919; 1.26): externalTrafficPolicy Local with every endpoint on other nodes left no cluster IP load balancer",
		steps: func() []conformanceStep {
			svc := service("remote-only", "10.96.5.30", asType(v1.ServiceTypeNodePort), nodePorts(30530),
				func(s *v1.Service) { s.Spec.ExternalTrafficPolicy = v1.ServiceExternalTrafficPolicyLocal })
			return []conformanceStep{
				{name: "the only endpoint on win-2", apply: []any{svc, sliceOf("remote-only", "remote-only-1", discoveryv1.AddressTypeIPv4, readyEP(pod2a, "win-2"))},
					probes: []probe{
						{from: pod1b, to: "10.96.5.30:80", reach: at8080(pod2a)},
						{from: pod3a, to: "10.96.5.30:80", reach: at8080(pod2a)},
						{from: extClient, to: ip1 + ":30530"},
						{from: extClient, to: ip2 + ":30530", reach: at8080(pod2a)},
					}},
				{name: "moved to win-3", apply: []any{sliceOf("remote-only", "remote-only-1", discoveryv1.AddressTypeIPv4, readyEP(pod3a, "win-3"))},
					probes: []probe{
						{from: pod1b, to: "10.96.5.30:80", reach: at8080(pod3a)},
						{from: pod2b, to: "10.96.5.30:80", reach: at8080(pod3a)},
						{from: extClient, to: ip2 + ":30530"},
						{from: extClient, to: ip3 + ":30530", reach: at8080(pod3a)},
					}},
			}
		}(),
	},
	{
		report: "kubernetes/kubernetes#133928 (fix #133953; 1.31 to 1.34): internalTrafficPolicy Local, the cluster IP load balancer deleted while the Service scaled up and down",
		steps: func() []conformanceStep {
			svc := service("itp", "10.96.5.40", func(s *v1.Service) { s.Spec.InternalTrafficPolicy = ptr.To(v1.ServiceInternalTrafficPolicyLocal) })
			sl := func(eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
				return sliceOf("itp", "itp-1", discoveryv1.AddressTypeIPv4, eps...)
			}
			return []conformanceStep{
				{name: "a pod on win-1 and on win-2", apply: []any{svc, sl(readyEP(pod1a, "win-1"), readyEP(pod2a, "win-2"))},
					probes: []probe{{from: pod1b, to: "10.96.5.40:80", reach: at8080(pod1a)}, {from: pod2b, to: "10.96.5.40:80", reach: at8080(pod2a)}, {from: pod3a, to: "10.96.5.40:80"}}},
				{name: "scaled up on win-2 only", apply: []any{sl(readyEP(pod1a, "win-1"), readyEP(pod2a, "win-2"), readyEP(pod2b, "win-2"))},
					probes: []probe{{from: pod1b, to: "10.96.5.40:80", reach: at8080(pod1a)}, {from: pod2b, to: "10.96.5.40:80", reach: at8080(pod2a, pod2b)}, {from: pod3a, to: "10.96.5.40:80"}}},
				{name: "scaled down on win-2 only", apply: []any{sl(readyEP(pod1a, "win-1"), readyEP(pod2a, "win-2"))},
					probes: []probe{{from: pod1b, to: "10.96.5.40:80", reach: at8080(pod1a)}, {from: pod2b, to: "10.96.5.40:80", reach: at8080(pod2a)}}},
				{name: "none left on win-1", apply: []any{sl(readyEP(pod2a, "win-2"))},
					probes: []probe{{from: pod1b, to: "10.96.5.40:80"}, {from: pod2b, to: "10.96.5.40:80", reach: at8080(pod2a)}}},
				{name: "scaled up everywhere", apply: []any{sl(readyEP(pod1a, "win-1"), readyEP(pod1b, "win-1"), readyEP(pod2a, "win-2"), readyEP(pod2b, "win-2"), readyEP(pod3a, "win-3"))},
					probes: []probe{{from: pod1b, to: "10.96.5.40:80", reach: at8080(pod1a, pod1b)}, {from: pod2b, to: "10.96.5.40:80", reach: at8080(pod2a, pod2b)}, {from: pod3a, to: "10.96.5.40:80", reach: at8080(pod3a)}}},
			}
		}(),
	},
	{
		report: "kubernetes/kubernetes#135144 (fix #135146; 1.31 to 1.34): one Deployment behind several Services, scaled down, left remote endpoints",
		steps: func() []conformanceStep {
			names := []string{"front", "front-admin", "front-metrics"}
			all := map[string]string{pod1a: "win-1", pod1b: "win-1", pod2a: "win-2", pod2b: "win-2", pod3a: "win-3"}
			scaled := func(ips ...string) []any {
				var out []any
				for _, name := range names {
					eps := make([]discoveryv1.Endpoint, len(ips))
					for i, ip := range ips {
						eps[i] = readyEP(ip, all[ip])
					}
					out = append(out, sliceOf(name, name+"-1", discoveryv1.AddressTypeIPv4, eps...))
				}
				return out
			}
			reach := func(ips ...string) []probe {
				var out []probe
				for i := range names {
					out = append(out, probe{from: pod3a, to: fmt.Sprintf("10.96.5.%d:80", 50+i), reach: at8080(ips...)})
				}
				return out
			}
			var svcs []any
			for i, name := range names {
				svcs = append(svcs, service(name, fmt.Sprintf("10.96.5.%d", 50+i)))
			}
			return []conformanceStep{
				{name: "three Services, five pods", apply: append(svcs, scaled(pod1a, pod1b, pod2a, pod2b, pod3a)...), probes: reach(pod1a, pod1b, pod2a, pod2b, pod3a)},
				{name: "scaled down to one, every Service at once", apply: scaled(pod1a), probes: reach(pod1a)},
				{name: "scaled up again", apply: scaled(pod1a, pod1b, pod2a, pod2b, pod3a), probes: reach(pod1a, pod1b, pod2a, pod2b, pod3a)},
				{name: "scaled to two on win-2", apply: scaled(pod2a, pod2b), probes: reach(pod2a, pod2b)},
				{name: "scaled to zero", apply: scaled(), probes: reach()},
			}
		}(),
	},
	churnAtScale(),
	func() winkernelBug {
		probes := []probe{
			{from: pod3a, to: "10.96.5.60:80", reach: at8080(pod1a, pod2a)},
			{from: pod1b, to: "10.96.5.60:80", reach: at8080(pod1a, pod2a)},
			{from: extClient, to: ip1 + ":30560", reach: at8080(pod2a)},
		}
		return winkernelBug{
			report: "kubernetes/kubernetes#135802 (1.34) and #110849 (1.22 to 1.24): load balancers deleted behind kube-proxy's back (hnsdiag, a CNI restart) never made again, or after days",
			steps: []conformanceStep{
				{name: "served", apply: []any{
					service("gone", "10.96.5.60"), sliceOf("gone", "gone-1", discoveryv1.AddressTypeIPv4, readyEP(pod1a, "win-1"), readyEP(pod2a, "win-2")),
					service("gone-np", "10.96.5.61", asType(v1.ServiceTypeNodePort), nodePorts(30560)), sliceOf("gone-np", "gone-np-1", discoveryv1.AddressTypeIPv4, readyEP(pod2a, "win-2")),
				}, probes: probes},
				{name: "win-1's deleted behind its back", do: deletedBehindItsBack("win-1"), probes: probes},
				{name: "every node's deleted behind its back", do: deletedBehindItsBack("win-1", "win-2", "win-3"), probes: probes},
			},
		}
	}(),
	{
		report:    "kubernetes/kubernetes#115501 (fix #115503; 1.24 to 1.26: RequireDualStack got no IPv6 load balancers) and #136241 (1.33 to 1.35: IPv4 and IPv6 load balancers of a dual-stack Service shared, external and ingress IPs not split by family)",
		dualStack: true,
		steps: func() []conformanceStep {
			const v6a, v6b, v6c = "fd00:10:244:1::10", "fd00:10:244:2::10", "fd00:10:244:2::11"
			dual := func(policy v1.IPFamilyPolicy) *v1.Service {
				return service("dual", "10.96.5.70", asType(v1.ServiceTypeLoadBalancer), nodePorts(30570), func(s *v1.Service) {
					s.Spec.ClusterIPs = []string{"10.96.5.70", "fd00:10:96::70"}
					s.Spec.IPFamilies = []v1.IPFamily{v1.IPv4Protocol, v1.IPv6Protocol}
					s.Spec.IPFamilyPolicy = ptr.To(policy)
					s.Spec.ExternalIPs = []string{"192.0.2.91", "2001:db8::91"}
					s.Status.LoadBalancer.Ingress = []v1.LoadBalancerIngress{{IP: "192.0.2.90"}, {IP: "2001:db8::90"}}
				})
			}
			v4 := sliceOf("dual", "dual-v4", discoveryv1.AddressTypeIPv4, readyEP(pod1a, "win-1"), readyEP(pod2a, "win-2"))
			v6 := func(ips ...string) *discoveryv1.EndpointSlice {
				eps := make([]discoveryv1.Endpoint, len(ips))
				for i, ip := range ips {
					eps[i] = readyEP(ip, map[bool]string{true: "win-1", false: "win-2"}[strings.HasPrefix(ip, "fd00:10:244:1:")])
				}
				return sliceOf("dual", "dual-v6", discoveryv1.AddressTypeIPv6, eps...)
			}
			probes := func(v6Backends ...string) []probe {
				return []probe{
					{from: pod1b, to: "10.96.5.70:80", reach: at8080(pod1a, pod2a)},
					{from: extClient, to: "192.0.2.90:80", ingress: "win-2", reach: at8080(pod1a, pod2a)},
					{from: extClient, to: "192.0.2.91:80", ingress: "win-1", reach: at8080(pod1a, pod2a)},
					{from: "fd00:10:244:1::11", to: "[fd00:10:96::70]:80", reach: at8080(v6Backends...)},
					{from: "2001:db8::7", to: "[2001:db8::90]:80", ingress: "win-2", reach: at8080(v6Backends...)},
					{from: "2001:db8::7", to: "[2001:db8::91]:80", ingress: "win-1", reach: at8080(v6Backends...)},
					{from: "2001:db8::7", to: "[fd00::1]:30570", reach: at8080(v6Backends...)},
				}
			}
			return []conformanceStep{
				{name: "RequireDualStack", apply: []any{dual(v1.IPFamilyPolicyRequireDualStack), v4, v6(v6a, v6b)}, probes: probes(v6a, v6b)},
				{name: "PreferDualStack, IPv6 scaled", apply: []any{dual(v1.IPFamilyPolicyPreferDualStack), v6(v6b, v6c)}, probes: probes(v6b, v6c)},
				{name: "IPv6 without endpoints", apply: []any{v6()}, probes: probes()},
				{name: "IPv6 back", apply: []any{v6(v6a)}, probes: probes(v6a)},
			}
		}(),
	},
}

// churnAtScale is kubernetes/kubernetes#135144 as its report reproduced it:
// many replicas behind several Services, scaled up and down in quick
// succession. Three nodes of twelve pods each; six Services over the same
// pods; bursts of scale changes written without waiting for hnsproxy, so
// that its syncs meet them coalesced or halfway, then the last one waited
// for. Probes check the small end states; at every step no node keeps a
// remote endpoint nothing uses.
func churnAtScale() winkernelBug {
	const services, perNode = 6, 12
	pod := func(node, i int) string { return fmt.Sprintf("10.244.%d.%d", node, 10+i) }
	nodes := func() []nodeSpec {
		var out []nodeSpec
		for n := 1; n <= 3; n++ {
			ns := nodeSpec{name: fmt.Sprintf("win-%d", n), ips: []string{fmt.Sprintf("10.0.0.%d", n)}, podCIDRs: []string{fmt.Sprintf("10.244.%d.0/24", n)}}
			for i := range perNode {
				ns.pods = append(ns.pods, pod(n, i))
			}
			out = append(out, ns)
		}
		return out
	}
	// scaled is every Service's slice with the first k pods of each node.
	scaled := func(k int) []any {
		var eps []discoveryv1.Endpoint
		for n := 1; n <= 3; n++ {
			for i := range k {
				eps = append(eps, readyEP(pod(n, i), fmt.Sprintf("win-%d", n)))
			}
		}
		var out []any
		for s := range services {
			name := fmt.Sprintf("churn-%d", s)
			out = append(out, sliceOf(name, name+"-1", discoveryv1.AddressTypeIPv4, eps...))
		}
		return out
	}
	burst := func(ks ...int) func(c *simCluster) {
		return func(c *simCluster) {
			for _, k := range ks {
				c.apply(scaled(k)...)
			}
		}
	}
	reach := func(k int) []probe {
		var want []string
		for n := 1; n <= 3; n++ {
			for i := range k {
				want = append(want, pod(n, i))
			}
		}
		var out []probe
		for s := range services {
			out = append(out, probe{from: pod(1, perNode-1), to: fmt.Sprintf("10.96.6.%d:80", s+1), reach: at8080(want...)})
		}
		return out
	}
	var svcs []any
	for s := range services {
		svcs = append(svcs, service(fmt.Sprintf("churn-%d", s), fmt.Sprintf("10.96.6.%d", s+1)))
	}
	return winkernelBug{
		report: "kubernetes/kubernetes#135144 at scale: six Services over 36 pods scaled up and down in bursts",
		nodes:  nodes,
		steps: []conformanceStep{
			{name: "every pod", apply: append(svcs, scaled(perNode)...)},
			{name: "12, 1, 7, 0, 12 per node, then 1", do: burst(perNode, 1, 7, 0, perNode), apply: scaled(1), probes: reach(1)},
			{name: "5, 12, 2, 9 per node, then none", do: burst(5, perNode, 2, 9), apply: scaled(0), probes: reach(0)},
			{name: "12, 0, 3 per node, then 12", do: burst(perNode, 0, 3), apply: scaled(perNode)},
			{name: "then 1", apply: scaled(1), probes: reach(1)},
		},
	}
}

func TestWinkernelBugReportsReplayed(t *testing.T) {
	for _, v := range conformanceVariants {
		for _, bug := range winkernelBugs {
			if bug.dualStack && v.mode != desired.L2Bridge {
				continue
			}
			t.Run(fmt.Sprintf("%s/%s/%s", v.profile, v.mode, bug.report), func(t *testing.T) {
				t.Parallel()
				nodes := threeNodes()
				switch {
				case bug.dualStack:
					nodes = dualStackNodes()
				case bug.nodes != nil:
					nodes = bug.nodes()
				}
				c := newSimCluster(t, clusterSpec{profile: v.profile, mode: v.mode, nodes: nodes})
				c.replay(bug.steps)
			})
		}
	}
}
