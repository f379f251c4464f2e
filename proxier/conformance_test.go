package proxier

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
	"github.com/hnsproxy/hnsproxy/vfp"
)

// Upstream's Service e2e cases that run on Windows nodes
// (kubernetes/kubernetes test/e2e/network/service.go and endpointslice.go,
// the cases not tagged LinuxOnly), the session affinity ones upstream tags
// LinuxOnly ("Windows does not support session affinity"; HNS load
// balancers carry it), and sequences no e2e case has (their upstream field
// starts in lower case and names the nearest case, if any), replayed as
// sequences of API objects through the real proxiers of three simulated
// nodes. After every step a
// packet to each frontend is traced with the VFP model and must reach
// exactly the backends (address and target port) Kubernetes promises, and
// no node may keep a remote endpoint that nothing uses; after the last step every Service is deleted and no node may keep a load
// balancer or a remote endpoint. Where winkernel differs from Linux the
// sequence follows winkernel: a frontend without endpoints has no load
// balancer, so its packets are not rejected but find nothing (they drop,
// or a node address takes them as its own).

// conformanceStep is one change through the API and what must hold after it.
type conformanceStep struct {
	name   string
	apply  []any
	remove []any               // objects to delete (only their kind, namespace and name count)
	do     func(c *simCluster) // a change outside the API (a pod's endpoint, HNS's faults), before apply
	// wait replaces converge for a step after which HNS cannot settle (it
	// refuses a write the proxier retries); it waits for what the step is about.
	wait   func(c *simCluster)
	probes []probe
}

// probe is one frontend traced from many source ports.
type probe struct {
	from, to string // a pod IP, a node name or extClient; ip:port
	ingress  string // where an external packet enters (default: the owner of to)
	udp      bool
	// reach is every backend ip:port the receiver must see as destination,
	// over all source ports; none means no load balancer may match and no
	// pod may receive the packet.
	reach  []string
	pinned bool // every source port reaches the same one of reach
}

type conformanceCase struct {
	upstream string // the e2e case it mirrors
	steps    []conformanceStep
}

// A Service with two named ports whose pods each expose only one of them:
// the EndpointSlice controller makes one slice per set of ports.
func namedPortsSlice(svc, name string, ports map[string]int32, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	s := sliceOf(svc, name, discoveryv1.AddressTypeIPv4, eps...)
	s.Ports = nil
	names := make([]string, 0, len(ports))
	for n := range ports {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		s.Ports = append(s.Ports, discoveryv1.EndpointPort{Name: ptr.To(n), Port: ptr.To(ports[n]), Protocol: ptr.To(v1.ProtocolTCP)})
	}
	return s
}

func withPorts(ports ...v1.ServicePort) func(*v1.Service) {
	return func(s *v1.Service) { s.Spec.Ports = ports }
}

func tcpPort(name string, port int32, target intstr.IntOrString, nodePort int32) v1.ServicePort {
	return v1.ServicePort{Name: name, Protocol: v1.ProtocolTCP, Port: port, TargetPort: target, NodePort: nodePort}
}

func asType(t v1.ServiceType) func(*v1.Service) {
	return func(s *v1.Service) {
		s.Spec.Type = t
		if t == v1.ServiceTypeExternalName {
			s.Spec.ExternalName = "example.com"
			s.Spec.ClusterIP, s.Spec.ClusterIPs, s.Spec.IPFamilies = "", nil, nil
		}
	}
}

func nodePorts(ports ...int32) func(*v1.Service) {
	return func(s *v1.Service) {
		for i := range ports {
			s.Spec.Ports[i].NodePort = ports[i]
		}
	}
}

func ingressIP(ip string) func(*v1.Service) {
	return func(s *v1.Service) { s.Status.LoadBalancer.Ingress = []v1.LoadBalancerIngress{{IP: ip}} }
}

func affinity(timeout *int32) func(*v1.Service) {
	return func(s *v1.Service) {
		s.Spec.SessionAffinity = v1.ServiceAffinityClientIP
		if timeout != nil {
			s.Spec.SessionAffinityConfig = &v1.SessionAffinityConfig{ClientIP: &v1.ClientIPConfig{TimeoutSeconds: timeout}}
		}
	}
}

func at(ip string, port int) string { return fmt.Sprintf("%s:%d", ip, port) }

var conformanceCases = []conformanceCase{
	{
		upstream: "[sig-network] Services should serve a basic endpoint from pods [Conformance]",
		steps: []conformanceStep{
			{name: "no pods", apply: []any{service("basic", "10.96.1.10"), sliceOf("basic", "basic-1", discoveryv1.AddressTypeIPv4)},
				probes: []probe{{from: pod3a, to: "10.96.1.10:80"}}},
			{name: "pod1", apply: []any{sliceOf("basic", "basic-1", discoveryv1.AddressTypeIPv4, readyEP(pod1a, "win-1"))},
				probes: []probe{{from: pod3a, to: "10.96.1.10:80", reach: []string{at(pod1a, 8080)}}}},
			{name: "pod1 and pod2", apply: []any{sliceOf("basic", "basic-1", discoveryv1.AddressTypeIPv4, readyEP(pod1a, "win-1"), readyEP(pod2a, "win-2"))},
				probes: []probe{{from: pod3a, to: "10.96.1.10:80", reach: []string{at(pod1a, 8080), at(pod2a, 8080)}}}},
			{name: "pod1 deleted", apply: []any{sliceOf("basic", "basic-1", discoveryv1.AddressTypeIPv4, readyEP(pod2a, "win-2"))},
				probes: []probe{{from: pod3a, to: "10.96.1.10:80", reach: []string{at(pod2a, 8080)}}, {from: pod1b, to: "10.96.1.10:80", reach: []string{at(pod2a, 8080)}}}},
			{name: "pod2 deleted", apply: []any{sliceOf("basic", "basic-1", discoveryv1.AddressTypeIPv4)},
				probes: []probe{{from: pod3a, to: "10.96.1.10:80"}, {from: pod1b, to: "10.96.1.10:80"}}},
		},
	},
	{
		upstream: "[sig-network] Services should serve multiport endpoints from pods [Conformance]",
		steps: func() []conformanceStep {
			svc := service("multi", "10.96.1.20", withPorts(
				tcpPort("portname1", 80, intstr.FromString("svc1"), 0),
				tcpPort("portname2", 81, intstr.FromString("svc2"), 0)))
			p1 := func(eps ...discoveryv1.Endpoint) any {
				return namedPortsSlice("multi", "multi-1", map[string]int32{"portname1": 100}, eps...)
			}
			p2 := func(eps ...discoveryv1.Endpoint) any {
				return namedPortsSlice("multi", "multi-2", map[string]int32{"portname2": 101}, eps...)
			}
			return []conformanceStep{
				{name: "no pods", apply: []any{svc, p1()},
					probes: []probe{{from: pod3a, to: "10.96.1.20:80"}, {from: pod3a, to: "10.96.1.20:81"}}},
				{name: "pod1 exposes svc1", apply: []any{p1(readyEP(pod1a, "win-1"))},
					probes: []probe{{from: pod3a, to: "10.96.1.20:80", reach: []string{at(pod1a, 100)}}, {from: pod3a, to: "10.96.1.20:81"}}},
				{name: "pod2 exposes svc2", apply: []any{p2(readyEP(pod2a, "win-2"))},
					probes: []probe{
						{from: pod3a, to: "10.96.1.20:80", reach: []string{at(pod1a, 100)}},
						{from: pod3a, to: "10.96.1.20:81", reach: []string{at(pod2a, 101)}},
						{from: pod1b, to: "10.96.1.20:81", reach: []string{at(pod2a, 101)}},
					}},
				{name: "pod1 deleted", apply: []any{p1()},
					probes: []probe{{from: pod3a, to: "10.96.1.20:80"}, {from: pod3a, to: "10.96.1.20:81", reach: []string{at(pod2a, 101)}}}},
				{name: "pod2 deleted", remove: []any{p2()},
					probes: []probe{{from: pod3a, to: "10.96.1.20:80"}, {from: pod3a, to: "10.96.1.20:81"}}},
			}
		}(),
	},
	{
		upstream: "[sig-network] EndpointSlice should support a Service with multiple ports specified in multiple EndpointSlices [Conformance]",
		steps: func() []conformanceStep {
			svc := service("multi", "10.96.1.30", withPorts(
				tcpPort("example-no-match", 80, intstr.FromInt32(8090), 0),
				tcpPort("example-int", 81, intstr.FromInt32(3001), 0)))
			one := namedPortsSlice("multi", "multi-1", map[string]int32{"example-no-match": 8090}, readyEP(pod1a, "win-1"))
			two := namedPortsSlice("multi", "multi-2", map[string]int32{"example-int": 3001}, readyEP(pod2a, "win-2"))
			merged := namedPortsSlice("multi", "multi-1", map[string]int32{"example-no-match": 8090, "example-int": 3001}, readyEP(pod1a, "win-1"), readyEP(pod2a, "win-2"))
			return []conformanceStep{
				{name: "split over two slices", apply: []any{svc, one, two},
					probes: []probe{{from: pod3a, to: "10.96.1.30:80", reach: []string{at(pod1a, 8090)}}, {from: pod3a, to: "10.96.1.30:81", reach: []string{at(pod2a, 3001)}}}},
				{name: "merged into one", apply: []any{merged}, remove: []any{two},
					probes: []probe{
						{from: pod3a, to: "10.96.1.30:80", reach: []string{at(pod1a, 8090), at(pod2a, 8090)}},
						{from: pod3a, to: "10.96.1.30:81", reach: []string{at(pod1a, 3001), at(pod2a, 3001)}},
					}},
				{name: "split again", apply: []any{one, two},
					probes: []probe{{from: pod3a, to: "10.96.1.30:80", reach: []string{at(pod1a, 8090)}}, {from: pod3a, to: "10.96.1.30:81", reach: []string{at(pod2a, 3001)}}}},
			}
		}(),
	},
	{
		upstream: "[sig-network] EndpointSlice should support a Service with multiple endpoint IPs specified in multiple EndpointSlices [Conformance]",
		steps: []conformanceStep{
			{name: "one endpoint per slice", apply: []any{service("spread", "10.96.1.40"),
				sliceOf("spread", "spread-1", discoveryv1.AddressTypeIPv4, readyEP(pod1a, "win-1")),
				sliceOf("spread", "spread-2", discoveryv1.AddressTypeIPv4, readyEP(pod2a, "win-2"))},
				probes: []probe{{from: pod3a, to: "10.96.1.40:80", reach: []string{at(pod1a, 8080), at(pod2a, 8080)}}}},
			{name: "an endpoint moves to the other slice", apply: []any{
				sliceOf("spread", "spread-1", discoveryv1.AddressTypeIPv4),
				sliceOf("spread", "spread-2", discoveryv1.AddressTypeIPv4, readyEP(pod2a, "win-2"), readyEP(pod1a, "win-1"))},
				probes: []probe{{from: pod3a, to: "10.96.1.40:80", reach: []string{at(pod1a, 8080), at(pod2a, 8080)}}}},
			{name: "the emptied slice deleted", remove: []any{sliceOf("spread", "spread-1", discoveryv1.AddressTypeIPv4)},
				probes: []probe{{from: pod3a, to: "10.96.1.40:80", reach: []string{at(pod1a, 8080), at(pod2a, 8080)}}}},
		},
	},
	{
		upstream: "[sig-network] Services should be able to change the type from ExternalName to ClusterIP / NodePort, ClusterIP / NodePort to ExternalName [Conformance]; should be able to create a functioning NodePort service [Conformance]",
		steps: func() []conformanceStep {
			sl := sliceOf("typed", "typed-1", discoveryv1.AddressTypeIPv4, readyEP(pod1a, "win-1"), readyEP(pod2a, "win-2"))
			both := []string{at(pod1a, 8080), at(pod2a, 8080)}
			svc := func(m ...func(*v1.Service)) *v1.Service { return service("typed", "10.96.1.50", m...) }
			return []conformanceStep{
				{name: "ExternalName", apply: []any{svc(asType(v1.ServiceTypeExternalName)), sl},
					probes: []probe{{from: pod3a, to: "10.96.1.50:80"}, {from: extClient, to: ip1 + ":30150"}}},
				{name: "ClusterIP", apply: []any{svc()},
					probes: []probe{{from: pod3a, to: "10.96.1.50:80", reach: both}, {from: extClient, to: ip1 + ":30150"}}},
				{name: "NodePort", apply: []any{svc(asType(v1.ServiceTypeNodePort), nodePorts(30150))},
					probes: []probe{
						{from: pod3a, to: "10.96.1.50:80", reach: both},
						{from: extClient, to: ip1 + ":30150", reach: both},
						{from: extClient, to: ip3 + ":30150", reach: both},
					}},
				{name: "LoadBalancer", apply: []any{svc(asType(v1.ServiceTypeLoadBalancer), nodePorts(30150), ingressIP("192.0.2.50"))},
					probes: []probe{
						{from: pod3a, to: "10.96.1.50:80", reach: both},
						{from: extClient, to: ip3 + ":30150", reach: both},
						{from: extClient, to: "192.0.2.50:80", ingress: "win-3", reach: both},
					}},
				{name: "back to NodePort", apply: []any{svc(asType(v1.ServiceTypeNodePort), nodePorts(30150))},
					probes: []probe{
						{from: extClient, to: ip3 + ":30150", reach: both},
						{from: extClient, to: "192.0.2.50:80", ingress: "win-3"},
					}},
				{name: "nodePort changed", apply: []any{svc(asType(v1.ServiceTypeNodePort), nodePorts(30151))},
					probes: []probe{
						{from: extClient, to: ip3 + ":30151", reach: both},
						{from: extClient, to: ip3 + ":30150"},
					}},
				{name: "back to ExternalName", apply: []any{svc(asType(v1.ServiceTypeExternalName))},
					probes: []probe{{from: pod3a, to: "10.96.1.50:80"}, {from: extClient, to: ip3 + ":30151"}}},
			}
		}(),
	},
	{
		upstream: "[sig-network] Services should serve endpoints on same port and different protocols [Conformance]; should be able to update service type to NodePort listening on same port number but different protocols; should be able to update NodePorts with two same port numbers but different protocols",
		steps: func() []conformanceStep {
			both := func(s *v1.Service) {
				s.Spec.Ports = []v1.ServicePort{
					tcpPort("tcp-port", 53, intstr.FromInt32(5353), 0),
					{Name: "udp-port", Protocol: v1.ProtocolUDP, Port: 53, TargetPort: intstr.FromInt32(5353)},
				}
			}
			sl := sliceOf("dns", "dns-1", discoveryv1.AddressTypeIPv4, readyEP(pod1a, "win-1"), readyEP(pod2a, "win-2"))
			sl.Ports = []discoveryv1.EndpointPort{
				{Name: ptr.To("tcp-port"), Port: ptr.To[int32](5353), Protocol: ptr.To(v1.ProtocolTCP)},
				{Name: ptr.To("udp-port"), Port: ptr.To[int32](5353), Protocol: ptr.To(v1.ProtocolUDP)},
			}
			pods := []string{at(pod1a, 5353), at(pod2a, 5353)}
			return []conformanceStep{
				{name: "TCP and UDP on one port", apply: []any{service("dns", "10.96.1.60", both), sl},
					probes: []probe{{from: pod3a, to: "10.96.1.60:53", reach: pods}, {from: pod3a, to: "10.96.1.60:53", udp: true, reach: pods}}},
				{name: "NodePort, one node port for both protocols", apply: []any{service("dns", "10.96.1.60", both, asType(v1.ServiceTypeNodePort), nodePorts(30053, 30053))},
					probes: []probe{
						{from: extClient, to: ip3 + ":30053", reach: pods},
						{from: extClient, to: ip3 + ":30053", udp: true, reach: pods},
						{from: pod3a, to: "10.96.1.60:53", udp: true, reach: pods},
					}},
				{name: "UDP port removed", apply: []any{service("dns", "10.96.1.60", both, asType(v1.ServiceTypeNodePort), nodePorts(30053, 30053),
					func(s *v1.Service) { s.Spec.Ports = s.Spec.Ports[:1] })},
					probes: []probe{
						{from: extClient, to: ip3 + ":30053", reach: pods},
						{from: extClient, to: ip3 + ":30053", udp: true},
						{from: pod3a, to: "10.96.1.60:53", udp: true},
					}},
			}
		}(),
	},
	{
		upstream: "[sig-network] Services should have session affinity work for service with type clusterIP [LinuxOnly]; should be able to switch session affinity for service with type clusterIP [LinuxOnly] (LinuxOnly upstream: Windows was taken to have no affinity; HNS has it, without a timeout)",
		steps: func() []conformanceStep {
			sl := sliceOf("sticky", "sticky-1", discoveryv1.AddressTypeIPv4, readyEP(pod1a, "win-1"), readyEP(pod1b, "win-1"), readyEP(pod2a, "win-2"))
			all := []string{at(pod1a, 8080), at(pod1b, 8080), at(pod2a, 8080)}
			return []conformanceStep{
				{name: "affinity on", apply: []any{service("sticky", "10.96.1.70", affinity(nil)), sl},
					probes: []probe{{from: pod3a, to: "10.96.1.70:80", reach: all, pinned: true}}},
				{name: "affinity off", apply: []any{service("sticky", "10.96.1.70")},
					probes: []probe{{from: pod3a, to: "10.96.1.70:80", reach: all}}},
				{name: "affinity on with a timeout", apply: []any{service("sticky", "10.96.1.70", affinity(ptr.To[int32](10)))},
					probes: []probe{{from: pod3a, to: "10.96.1.70:80", reach: all, pinned: true}}},
				{name: "affinity off again", apply: []any{service("sticky", "10.96.1.70")},
					probes: []probe{{from: pod3a, to: "10.96.1.70:80", reach: all}}},
			}
		}(),
	},
	{
		upstream: "[sig-network] Services should work after the service has been recreated; should be updated after adding or deleting ports [Conformance: should test the lifecycle of a Service]",
		steps: func() []conformanceStep {
			sl := sliceOf("again", "again-1", discoveryv1.AddressTypeIPv4, readyEP(pod2a, "win-2"))
			two := sliceOf("again", "again-1", discoveryv1.AddressTypeIPv4, readyEP(pod2a, "win-2"))
			two.Ports = append(two.Ports, discoveryv1.EndpointPort{Name: ptr.To("admin"), Port: ptr.To[int32](9090), Protocol: ptr.To(v1.ProtocolTCP)})
			admin := func(s *v1.Service) {
				s.Spec.Ports = append(s.Spec.Ports, tcpPort("admin", 90, intstr.FromString("admin"), 0))
			}
			return []conformanceStep{
				{name: "created", apply: []any{service("again", "10.96.1.80"), sl},
					probes: []probe{{from: pod1a, to: "10.96.1.80:80", reach: []string{at(pod2a, 8080)}}}},
				{name: "port added", apply: []any{service("again", "10.96.1.80", admin), two},
					probes: []probe{{from: pod1a, to: "10.96.1.80:80", reach: []string{at(pod2a, 8080)}}, {from: pod1a, to: "10.96.1.80:90", reach: []string{at(pod2a, 9090)}}}},
				{name: "port removed", apply: []any{service("again", "10.96.1.80"), sl},
					probes: []probe{{from: pod1a, to: "10.96.1.80:80", reach: []string{at(pod2a, 8080)}}, {from: pod1a, to: "10.96.1.80:90"}}},
				{name: "deleted", remove: []any{service("again", "10.96.1.80")},
					probes: []probe{{from: pod1a, to: "10.96.1.80:80"}}},
				{name: "recreated with the same cluster IP", apply: []any{service("again", "10.96.1.80")},
					probes: []probe{{from: pod1a, to: "10.96.1.80:80", reach: []string{at(pod2a, 8080)}}}},
			}
		}(),
	},
	{
		upstream: "external IPs added and removed (no e2e case; nearest: [sig-network] Services should be possible to connect to a service via ExternalIP when the external IP is not assigned to a node)",
		steps: func() []conformanceStep {
			sl := sliceOf("ext", "ext-1", discoveryv1.AddressTypeIPv4, readyEP(pod1a, "win-1"))
			ext := func(ips ...string) func(*v1.Service) { return func(s *v1.Service) { s.Spec.ExternalIPs = ips } }
			pod := []string{at(pod1a, 8080)}
			return []conformanceStep{
				{name: "ClusterIP", apply: []any{service("ext", "10.96.1.90"), sl},
					probes: []probe{{from: extClient, to: "192.0.2.90:80", ingress: "win-2"}}},
				{name: "external IP added", apply: []any{service("ext", "10.96.1.90", ext("192.0.2.90"))},
					probes: []probe{{from: extClient, to: "192.0.2.90:80", ingress: "win-2", reach: pod}, {from: pod3a, to: "192.0.2.90:80", reach: pod}}},
				{name: "second external IP", apply: []any{service("ext", "10.96.1.90", ext("192.0.2.90", "192.0.2.91"))},
					probes: []probe{{from: extClient, to: "192.0.2.90:80", ingress: "win-2", reach: pod}, {from: extClient, to: "192.0.2.91:80", ingress: "win-3", reach: pod}}},
				{name: "first external IP removed", apply: []any{service("ext", "10.96.1.90", ext("192.0.2.91"))},
					probes: []probe{{from: extClient, to: "192.0.2.90:80", ingress: "win-2"}, {from: extClient, to: "192.0.2.91:80", ingress: "win-3", reach: pod}}},
			}
		}(),
	},
	{
		upstream: "endpoints that move between nodes (pods rescheduled; [sig-network] Networking Granular Checks: Services should update endpoints: http)",
		steps: []conformanceStep{
			{name: "on win-1", apply: []any{service("mover", "10.96.2.10", asType(v1.ServiceTypeNodePort), nodePorts(30210)),
				sliceOf("mover", "mover-1", discoveryv1.AddressTypeIPv4, readyEP(pod1a, "win-1"))},
				probes: []probe{{from: pod3a, to: "10.96.2.10:80", reach: []string{at(pod1a, 8080)}}, {from: extClient, to: ip2 + ":30210", reach: []string{at(pod1a, 8080)}}}},
			{name: "moved to win-2", apply: []any{sliceOf("mover", "mover-1", discoveryv1.AddressTypeIPv4, readyEP(pod2b, "win-2"))},
				probes: []probe{
					{from: pod3a, to: "10.96.2.10:80", reach: []string{at(pod2b, 8080)}},
					{from: pod1b, to: "10.96.2.10:80", reach: []string{at(pod2b, 8080)}},
					{from: extClient, to: ip1 + ":30210", reach: []string{at(pod2b, 8080)}},
				}},
			{name: "moved to win-3", apply: []any{sliceOf("mover", "mover-1", discoveryv1.AddressTypeIPv4, readyEP(pod3a, "win-3"))},
				probes: []probe{{from: pod2a, to: "10.96.2.10:80", reach: []string{at(pod3a, 8080)}}, {from: extClient, to: ip2 + ":30210", reach: []string{at(pod3a, 8080)}}}},
		},
	},
	{
		upstream: "terminating endpoints during a rolling update (KEP-1669; [sig-network] Services should fallback to terminating endpoints when there are no ready endpoints)",
		steps: []conformanceStep{
			{name: "old pods ready", apply: []any{service("roll", "10.96.2.20"),
				sliceOf("roll", "roll-1", discoveryv1.AddressTypeIPv4, readyEP(pod1a, "win-1"), readyEP(pod2a, "win-2"))},
				probes: []probe{{from: pod3a, to: "10.96.2.20:80", reach: []string{at(pod1a, 8080), at(pod2a, 8080)}}}},
			{name: "one old pod terminating, new pod ready", apply: []any{
				sliceOf("roll", "roll-1", discoveryv1.AddressTypeIPv4, terminatingEP(pod1a, "win-1", true), readyEP(pod2a, "win-2"), readyEP(pod1b, "win-1"))},
				probes: []probe{{from: pod3a, to: "10.96.2.20:80", reach: []string{at(pod1b, 8080), at(pod2a, 8080)}}}},
			{name: "every pod terminating, new ones not ready", apply: []any{
				sliceOf("roll", "roll-1", discoveryv1.AddressTypeIPv4, terminatingEP(pod1a, "win-1", false), terminatingEP(pod2a, "win-2", true),
					discoveryv1.Endpoint{Addresses: []string{pod2b}, NodeName: ptr.To("win-2"),
						Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(false), Serving: ptr.To(false), Terminating: ptr.To(false)}})},
				probes: []probe{{from: pod3a, to: "10.96.2.20:80", reach: []string{at(pod2a, 8080)}}}},
			{name: "new pod ready", apply: []any{
				sliceOf("roll", "roll-1", discoveryv1.AddressTypeIPv4, terminatingEP(pod2a, "win-2", true), readyEP(pod2b, "win-2"))},
				probes: []probe{{from: pod3a, to: "10.96.2.20:80", reach: []string{at(pod2b, 8080)}}}},
			{name: "old pods gone", apply: []any{sliceOf("roll", "roll-1", discoveryv1.AddressTypeIPv4, readyEP(pod2b, "win-2"))},
				probes: []probe{{from: pod3a, to: "10.96.2.20:80", reach: []string{at(pod2b, 8080)}}}},
		},
	},
	{
		upstream: "[sig-network] Services should allow pods to hairpin back to themselves through services",
		steps: []conformanceStep{
			{name: "the only backend calls its own Service", apply: []any{service("hairpin", "10.96.2.30"),
				sliceOf("hairpin", "hairpin-1", discoveryv1.AddressTypeIPv4, readyEP(pod1a, "win-1"))},
				probes: []probe{{from: pod1a, to: "10.96.2.30:80", reach: []string{at(pod1a, 8080)}}}},
		},
	},
	{
		upstream: "a named targetPort that pods resolve to different numbers (a rollout changing the containerPort behind the name; winkernel: one port per load balancer)",
		steps: func() []conformanceStep {
			svc := service("renum", "10.96.2.40", withPorts(tcpPort("http", 80, intstr.FromString("http"), 0)))
			old := func(eps ...discoveryv1.Endpoint) any {
				return namedPortsSlice("renum", "renum-old", map[string]int32{"http": 8080}, eps...)
			}
			cur := func(eps ...discoveryv1.Endpoint) any {
				return namedPortsSlice("renum", "renum-new", map[string]int32{"http": 9090}, eps...)
			}
			return []conformanceStep{
				{name: "old pods on 8080", apply: []any{svc, old(readyEP(pod1a, "win-1"), readyEP(pod2a, "win-2"))},
					probes: []probe{{from: pod3a, to: "10.96.2.40:80", reach: []string{at(pod1a, 8080), at(pod2a, 8080)}}}},
				{name: "one new pod on 9090", apply: []any{cur(readyEP(pod1b, "win-1"))},
					probes: []probe{{from: pod3a, to: "10.96.2.40:80", reach: []string{at(pod1a, 8080), at(pod2a, 8080)}}}},
				{name: "old pods terminating, new pods ready", apply: []any{
					old(terminatingEP(pod1a, "win-1", true), terminatingEP(pod2a, "win-2", true)),
					cur(readyEP(pod1b, "win-1"), readyEP(pod2b, "win-2"))},
					probes: []probe{{from: pod3a, to: "10.96.2.40:80", reach: []string{at(pod1b, 9090), at(pod2b, 9090)}}}},
				{name: "old slice gone", remove: []any{old()},
					probes: []probe{{from: pod3a, to: "10.96.2.40:80", reach: []string{at(pod1b, 9090), at(pod2b, 9090)}}}},
			}
		}(),
	},
	{
		upstream: "[sig-network] Services should fallback to local terminating endpoints when there are no ready endpoints with externalTrafficPolicy=Local",
		steps: func() []conformanceStep {
			local := func(s *v1.Service) { s.Spec.ExternalTrafficPolicy = v1.ServiceExternalTrafficPolicyLocal }
			svc := service("etp", "10.96.2.50", asType(v1.ServiceTypeNodePort), nodePorts(30250), local)
			return []conformanceStep{
				{name: "ready on both nodes", apply: []any{svc, sliceOf("etp", "etp-1", discoveryv1.AddressTypeIPv4, readyEP(pod1a, "win-1"), readyEP(pod2a, "win-2"))},
					probes: []probe{
						{from: extClient, to: ip1 + ":30250", reach: []string{at(pod1a, 8080)}},
						{from: extClient, to: ip2 + ":30250", reach: []string{at(pod2a, 8080)}},
						{from: extClient, to: ip3 + ":30250"},
					}},
				{name: "win-1's pod terminating", apply: []any{sliceOf("etp", "etp-1", discoveryv1.AddressTypeIPv4, terminatingEP(pod1a, "win-1", true), readyEP(pod2a, "win-2"))},
					probes: []probe{
						{from: extClient, to: ip1 + ":30250", reach: []string{at(pod1a, 8080)}},
						{from: extClient, to: ip2 + ":30250", reach: []string{at(pod2a, 8080)}},
						{from: pod3a, to: "10.96.2.50:80", reach: []string{at(pod2a, 8080)}},
					}},
				{name: "win-1's pod no longer serving", apply: []any{sliceOf("etp", "etp-1", discoveryv1.AddressTypeIPv4, terminatingEP(pod1a, "win-1", false), readyEP(pod2a, "win-2"))},
					probes: []probe{{from: extClient, to: ip1 + ":30250"}, {from: extClient, to: ip2 + ":30250", reach: []string{at(pod2a, 8080)}}}},
			}
		}(),
	},
	{
		upstream: "a type changed ClusterIP to ExternalName and back with a new cluster IP (no e2e case; nearest: [sig-network] Services should be able to change the type from ClusterIP to ExternalName [Conformance])",
		steps: []conformanceStep{
			{name: "ClusterIP", apply: []any{service("renew", "10.96.2.60"), sliceOf("renew", "renew-1", discoveryv1.AddressTypeIPv4, readyEP(pod2a, "win-2"))},
				probes: []probe{{from: pod1a, to: "10.96.2.60:80", reach: []string{at(pod2a, 8080)}}}},
			{name: "ExternalName", apply: []any{service("renew", "10.96.2.60", asType(v1.ServiceTypeExternalName))},
				probes: []probe{{from: pod1a, to: "10.96.2.60:80"}}},
			{name: "ClusterIP with a new IP", apply: []any{service("renew", "10.96.2.61")},
				probes: []probe{{from: pod1a, to: "10.96.2.61:80", reach: []string{at(pod2a, 8080)}}, {from: pod1a, to: "10.96.2.60:80"}}},
		},
	},
	{
		upstream: "a cluster IP and a node port freed by one Service and taken by another in the same sync (apiserver reuses released allocations)",
		steps: func() []conformanceStep {
			np := func(p int32) func(*v1.Service) {
				return func(s *v1.Service) { asType(v1.ServiceTypeNodePort)(s); nodePorts(p)(s) }
			}
			old := service("first", "10.96.3.10", np(30310))
			return []conformanceStep{
				{name: "first", apply: []any{old, sliceOf("first", "first-1", discoveryv1.AddressTypeIPv4, readyEP(pod1a, "win-1")),
					sliceOf("second", "second-1", discoveryv1.AddressTypeIPv4, readyEP(pod2a, "win-2"))},
					probes: []probe{{from: pod3a, to: "10.96.3.10:80", reach: []string{at(pod1a, 8080)}}, {from: extClient, to: ip3 + ":30310", reach: []string{at(pod1a, 8080)}}}},
				{name: "first deleted, second takes its IP and node port", remove: []any{old}, apply: []any{service("second", "10.96.3.10", np(30310))},
					probes: []probe{{from: pod3a, to: "10.96.3.10:80", reach: []string{at(pod2a, 8080)}}, {from: extClient, to: ip3 + ":30310", reach: []string{at(pod2a, 8080)}}}},
			}
		}(),
	},
	{
		upstream: "[sig-network] Services should implement NodePort and HealthCheckNodePort correctly when ExternalTrafficPolicy changes; internalTrafficPolicy Local switched on and off",
		steps: func() []conformanceStep {
			svc := func(m ...func(*v1.Service)) *v1.Service {
				return service("policy", "10.96.3.20", append([]func(*v1.Service){asType(v1.ServiceTypeNodePort), nodePorts(30320)}, m...)...)
			}
			etpLocal := func(s *v1.Service) { s.Spec.ExternalTrafficPolicy = v1.ServiceExternalTrafficPolicyLocal }
			itpLocal := func(s *v1.Service) { s.Spec.InternalTrafficPolicy = ptr.To(v1.ServiceInternalTrafficPolicyLocal) }
			both := []string{at(pod1a, 8080), at(pod2a, 8080)}
			return []conformanceStep{
				{name: "Cluster", apply: []any{svc(), sliceOf("policy", "policy-1", discoveryv1.AddressTypeIPv4, readyEP(pod1a, "win-1"), readyEP(pod2a, "win-2"))},
					probes: []probe{{from: extClient, to: ip3 + ":30320", reach: both}, {from: pod3a, to: "10.96.3.20:80", reach: both}}},
				{name: "externalTrafficPolicy Local", apply: []any{svc(etpLocal)},
					probes: []probe{
						{from: extClient, to: ip3 + ":30320"},
						{from: extClient, to: ip1 + ":30320", reach: []string{at(pod1a, 8080)}},
						{from: pod3a, to: "10.96.3.20:80", reach: both},
					}},
				{name: "internalTrafficPolicy Local too", apply: []any{svc(etpLocal, itpLocal)},
					probes: []probe{
						{from: pod3a, to: "10.96.3.20:80"},
						{from: pod1b, to: "10.96.3.20:80", reach: []string{at(pod1a, 8080)}},
						{from: extClient, to: ip2 + ":30320", reach: []string{at(pod2a, 8080)}},
					}},
				{name: "both Cluster again", apply: []any{svc()},
					probes: []probe{{from: extClient, to: ip3 + ":30320", reach: both}, {from: pod3a, to: "10.96.3.20:80", reach: both}, {from: pod1b, to: "10.96.3.20:80", reach: both}}},
			}
		}(),
	},
	{
		upstream: "a LoadBalancer's ingress IP changed by the cloud, its ipMode set to Proxy, its node ports no longer allocated (no e2e case)",
		steps: func() []conformanceStep {
			sl := sliceOf("cloud", "cloud-1", discoveryv1.AddressTypeIPv4, readyEP(pod1a, "win-1"))
			pod := []string{at(pod1a, 8080)}
			lb := func(m ...func(*v1.Service)) *v1.Service {
				return service("cloud", "10.96.3.30", append([]func(*v1.Service){asType(v1.ServiceTypeLoadBalancer), nodePorts(30330)}, m...)...)
			}
			return []conformanceStep{
				{name: "ingress IP assigned", apply: []any{lb(ingressIP("192.0.2.60")), sl},
					probes: []probe{{from: extClient, to: "192.0.2.60:80", ingress: "win-2", reach: pod}, {from: extClient, to: ip2 + ":30330", reach: pod}}},
				{name: "ingress IP changed", apply: []any{lb(ingressIP("192.0.2.61"))},
					probes: []probe{{from: extClient, to: "192.0.2.60:80", ingress: "win-2"}, {from: extClient, to: "192.0.2.61:80", ingress: "win-2", reach: pod}}},
				{name: "ipMode Proxy", apply: []any{lb(ingressIP("192.0.2.61"), func(s *v1.Service) {
					s.Status.LoadBalancer.Ingress[0].IPMode = ptr.To(v1.LoadBalancerIPModeProxy)
				})},
					probes: []probe{{from: extClient, to: "192.0.2.61:80", ingress: "win-2"}, {from: extClient, to: ip2 + ":30330", reach: pod}}},
				{name: "no node ports", apply: []any{lb(ingressIP("192.0.2.61"), func(s *v1.Service) {
					s.Spec.AllocateLoadBalancerNodePorts = ptr.To(false)
					s.Spec.Ports[0].NodePort = 0
				})},
					probes: []probe{{from: extClient, to: "192.0.2.61:80", ingress: "win-2", reach: pod}, {from: extClient, to: ip2 + ":30330"}}},
			}
		}(),
	},
	{
		upstream: "a pod recreated on its node with the same IP (a new HNS endpoint behind the address)",
		steps: []conformanceStep{
			{name: "served", apply: []any{service("reborn", "10.96.2.70"), sliceOf("reborn", "reborn-1", discoveryv1.AddressTypeIPv4, readyEP(pod1a, "win-1"), readyEP(pod2a, "win-2"))},
				probes: []probe{{from: pod3a, to: "10.96.2.70:80", reach: []string{at(pod1a, 8080), at(pod2a, 8080)}}}},
			{name: "pod deleted", apply: []any{sliceOf("reborn", "reborn-1", discoveryv1.AddressTypeIPv4, readyEP(pod2a, "win-2"))},
				do:     func(c *simCluster) { c.node("win-1").replacePod(pod1a, false) },
				probes: []probe{{from: pod3a, to: "10.96.2.70:80", reach: []string{at(pod2a, 8080)}}}},
			{name: "recreated with the same IP", apply: []any{sliceOf("reborn", "reborn-1", discoveryv1.AddressTypeIPv4, readyEP(pod1a, "win-1"), readyEP(pod2a, "win-2"))},
				do:     func(c *simCluster) { c.node("win-1").replacePod(pod1a, true) },
				probes: []probe{{from: pod3a, to: "10.96.2.70:80", reach: []string{at(pod1a, 8080), at(pod2a, 8080)}}}},
		},
	},
}

// conformanceVariants: l2bridge and overlay where updates are delete and
// create (ws2022), and l2bridge where HNS modifies in place (ws2025).
var conformanceVariants = []struct {
	profile string
	mode    desired.NetworkMode
}{{"ws2022", desired.L2Bridge}, {"ws2022", desired.Overlay}, {"ws2025", desired.L2Bridge}}

func TestUpstreamServiceConformanceSequences(t *testing.T) {
	for _, v := range conformanceVariants {
		for _, cc := range conformanceCases {
			t.Run(fmt.Sprintf("%s/%s/%s", v.profile, v.mode, cc.upstream), func(t *testing.T) {
				t.Parallel() // each case has its own cluster; most of a step is waiting for quiet
				c := newSimCluster(t, clusterSpec{profile: v.profile, mode: v.mode, nodes: threeNodes()})
				c.replay(cc.steps)
			})
		}
	}
}

// replay makes each step's changes and waits for them, traces its probes
// and checks that no node keeps a remote endpoint nothing uses; after the
// last step it deletes every Service, and no node may keep a load balancer
// or a remote endpoint.
func (c *simCluster) replay(steps []conformanceStep) {
	c.t.Helper()
	for _, st := range steps {
		c.remove(st.remove...)
		if st.do != nil {
			st.do(c)
		}
		c.apply(st.apply...)
		if st.wait != nil {
			st.wait(c)
		} else {
			c.converge()
		}
		vc := c.vfp()
		for _, p := range st.probes {
			if err := c.checkProbe(vc, p); err != nil {
				c.t.Fatalf("after %q: %v", st.name, err)
			}
		}
		for _, n := range c.nodes {
			if err := remoteEndpointsBackSomething(n); err != nil {
				c.t.Fatalf("after %q, on %s: %v", st.name, n.name, err)
			}
		}
	}
	c.removeServices()
	c.converge()
	for _, n := range c.nodes {
		if lbs, eps := n.lbs(), n.remoteEndpointIPs(); len(lbs) > 0 || len(eps) > 0 {
			c.t.Fatalf("%s keeps load balancers %+v and remote endpoints %v after every Service was deleted", n.name, lbs, eps)
		}
	}
}

// checkProbe traces p from many source ports: every delivered packet must
// reach one of p.reach at its target port, and all of p.reach must be reached.
func (c *simCluster) checkProbe(vc *vfp.Cluster, p probe) error {
	dst := netip.MustParseAddrPort(p.to)
	reached := map[string]bool{}
	for i := range sourcePorts {
		pkt := vfp.Packet{Src: netip.AddrPortFrom(c.addr(p.from), uint16(40000+i)), Dst: dst, Protocol: hnslb.ProtocolTCP}
		if p.udp {
			pkt.Protocol = hnslb.ProtocolUDP
		}
		v, err := vc.Trace(pkt, vfp.Options{Ingress: p.ingress})
		if err != nil {
			return fmt.Errorf("Trace(%s): %w", pkt, err)
		}
		if len(p.reach) == 0 {
			if v.LoadBalancerID != "" || v.Outcome == vfp.DeliveredToPod {
				return fmt.Errorf("%s: %s through load balancer %q on %s, want no load balancer and no pod\n%s", pkt, v.Outcome, v.LoadBalancerID, v.LBNode, v)
			}
			continue
		}
		if v.Outcome != vfp.DeliveredToPod {
			return fmt.Errorf("%s: %s, want delivered to one of %v\n%s", pkt, v.Outcome, p.reach, v)
		}
		got := v.SeenDst.String()
		if v.SeenDst.Addr() != v.Backend.Addr() {
			got = v.Backend.String()
		}
		if !slices.Contains(p.reach, got) {
			return fmt.Errorf("%s reached %s, want one of %v\n%s", pkt, got, p.reach, v)
		}
		reached[got] = true
	}
	if len(p.reach) == 0 {
		return nil
	}
	got := sortedKeys(reached)
	if p.pinned {
		if len(got) != 1 {
			return fmt.Errorf("%s from %s reached %v over %d source ports, want one of %v", p.to, p.from, got, sourcePorts, p.reach)
		}
		return nil
	}
	want := slices.Clone(p.reach)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		return fmt.Errorf("%s from %s reached %v, want %v", p.to, p.from, got, want)
	}
	return nil
}

// remove deletes objects through the shared clientset and forgets them.
func (c *simCluster) remove(objs ...any) {
	c.t.Helper()
	ctx := context.Background()
	for _, o := range objs {
		var err error
		switch o := o.(type) {
		case *v1.Service:
			err = c.client.CoreV1().Services(o.Namespace).Delete(ctx, o.Name, metav1.DeleteOptions{})
		case *discoveryv1.EndpointSlice:
			err = c.client.DiscoveryV1().EndpointSlices(o.Namespace).Delete(ctx, o.Name, metav1.DeleteOptions{})
		default:
			c.t.Fatalf("remove: unexpected %T", o)
		}
		if err != nil {
			c.t.Fatal(err)
		}
		m := o.(metav1.Object)
		delete(c.applied, fmt.Sprintf("%T/%s/%s", o, m.GetNamespace(), m.GetName()))
	}
	for _, n := range c.nodes {
		n.eventually("informers forgetting the deleted objects", func() bool { return n.forgot(objs) })
	}
}

// removeServices deletes every Service the test applied.
func (c *simCluster) removeServices() {
	c.t.Helper()
	var svcs []any
	for k, o := range c.applied {
		if strings.HasPrefix(k, "*v1.Service/") {
			svcs = append(svcs, o)
		}
	}
	c.remove(svcs...)
}

// forgot reports whether the node's informer caches hold none of objs.
func (n *testNode) forgot(objs []any) bool {
	for _, o := range objs {
		switch o := o.(type) {
		case *v1.Service:
			if _, err := n.proxier.services.Services(o.Namespace).Get(o.Name); err == nil {
				return false
			}
		case *discoveryv1.EndpointSlice:
			if _, exists, _ := n.proxier.slices.GetByKey(o.Namespace + "/" + o.Name); exists {
				return false
			}
		}
	}
	return true
}

// replacePod deletes the local endpoint holding ip, as the CNI's DEL does,
// and with create makes a new one at the same address, as its next ADD does.
func (n *testNode) replacePod(ip string, create bool) {
	n.t.Helper()
	ctx := context.Background()
	if !create {
		eps, err := n.hns.ListEndpoints(ctx)
		if err != nil {
			n.t.Fatal(err)
		}
		for _, e := range eps {
			if !e.IsRemote() && e.IP() == ip {
				if err := n.hns.DeleteEndpoint(ctx, e.ID); err != nil {
					n.t.Fatal(err)
				}
			}
		}
		return
	}
	if _, err := n.hns.CreateEndpoint(ctx, n.networkID, podEndpoint(ip)); err != nil {
		n.t.Fatal(err)
	}
}
