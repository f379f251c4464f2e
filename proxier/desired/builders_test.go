package desired

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

// Small builders for Services, EndpointSlices and node configs.

var baseTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const (
	thisNode  = "node-a"
	otherNode = "node-b"
	nodeIPv4  = "192.168.0.10"
	nodeIPv6  = "fd00::10"
)

type svcOpt func(*v1.Service)

// service is a ClusterIP Service ns/name at 10.0.0.1 with port http 80/TCP.
func service(name string, opts ...svcOpt) *v1.Service {
	s := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, CreationTimestamp: metav1.NewTime(baseTime)},
		Spec: v1.ServiceSpec{
			Type:       v1.ServiceTypeClusterIP,
			ClusterIP:  "10.0.0.1",
			ClusterIPs: []string{"10.0.0.1"},
			Ports:      []v1.ServicePort{tcpPort("http", 80)},
		},
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

func tcpPort(name string, port int32) v1.ServicePort {
	return v1.ServicePort{Name: name, Port: port, Protocol: v1.ProtocolTCP}
}

func udpPort(name string, port int32) v1.ServicePort {
	return v1.ServicePort{Name: name, Port: port, Protocol: v1.ProtocolUDP}
}

func clusterIPs(ips ...string) svcOpt {
	return func(s *v1.Service) {
		s.Spec.ClusterIPs = ips
		s.Spec.ClusterIP = ips[0]
	}
}

func ports(ps ...v1.ServicePort) svcOpt { return func(s *v1.Service) { s.Spec.Ports = ps } }

// nodePorts makes the Service a NodePort one with node ports for its ports in order.
func nodePorts(nps ...int32) svcOpt {
	return func(s *v1.Service) {
		if s.Spec.Type == v1.ServiceTypeClusterIP {
			s.Spec.Type = v1.ServiceTypeNodePort
		}
		for i, np := range nps {
			s.Spec.Ports[i].NodePort = np
		}
	}
}

func loadBalancer(ingress ...v1.LoadBalancerIngress) svcOpt {
	return func(s *v1.Service) {
		s.Spec.Type = v1.ServiceTypeLoadBalancer
		s.Status.LoadBalancer.Ingress = ingress
	}
}

func ingressIP(ip string) v1.LoadBalancerIngress { return v1.LoadBalancerIngress{IP: ip} }

func externalIPs(ips ...string) svcOpt { return func(s *v1.Service) { s.Spec.ExternalIPs = ips } }

func etpLocal(hcPort int32) svcOpt {
	return func(s *v1.Service) {
		s.Spec.ExternalTrafficPolicy = v1.ServiceExternalTrafficPolicyLocal
		s.Spec.HealthCheckNodePort = hcPort
	}
}

func itpLocal(s *v1.Service) {
	p := v1.ServiceInternalTrafficPolicyLocal
	s.Spec.InternalTrafficPolicy = &p
}

func affinity(timeout int32) svcOpt {
	return func(s *v1.Service) {
		s.Spec.SessionAffinity = v1.ServiceAffinityClientIP
		s.Spec.SessionAffinityConfig = &v1.SessionAffinityConfig{ClientIP: &v1.ClientIPConfig{TimeoutSeconds: &timeout}}
	}
}

func annotate(k, v string) svcOpt {
	return func(s *v1.Service) { s.Annotations = map[string]string{k: v} }
}

func created(d time.Duration) svcOpt {
	return func(s *v1.Service) { s.CreationTimestamp = metav1.NewTime(baseTime.Add(d)) }
}

type epOpt func(*discoveryv1.Endpoint)

// ep is a ready endpoint on another node.
func ep(ip string, opts ...epOpt) discoveryv1.Endpoint {
	n := otherNode
	e := discoveryv1.Endpoint{Addresses: []string{ip}, NodeName: &n}
	for _, o := range opts {
		o(&e)
	}
	return e
}

func onNode(name string) epOpt { return func(e *discoveryv1.Endpoint) { e.NodeName = &name } }

var local = onNode(thisNode)

func conditions(ready, serving, terminating bool) epOpt {
	return func(e *discoveryv1.Endpoint) {
		e.Conditions = discoveryv1.EndpointConditions{Ready: &ready, Serving: &serving, Terminating: &terminating}
	}
}

var (
	notReady           = conditions(false, false, false)
	servingTerminating = conditions(false, true, true)
	goneTerminating    = conditions(false, false, true)
)

func zoneHints(zones ...string) epOpt {
	return func(e *discoveryv1.Endpoint) {
		for _, z := range zones {
			hints(e).ForZones = append(hints(e).ForZones, discoveryv1.ForZone{Name: z})
		}
	}
}

func nodeHints(nodes ...string) epOpt {
	return func(e *discoveryv1.Endpoint) {
		for _, n := range nodes {
			hints(e).ForNodes = append(hints(e).ForNodes, discoveryv1.ForNode{Name: n})
		}
	}
}

func hints(e *discoveryv1.Endpoint) *discoveryv1.EndpointHints {
	if e.Hints == nil {
		e.Hints = &discoveryv1.EndpointHints{}
	}
	return e.Hints
}

func slicePort(name string, port int32, proto v1.Protocol) discoveryv1.EndpointPort {
	return discoveryv1.EndpointPort{Name: &name, Port: &port, Protocol: &proto}
}

// slice is an IPv4 slice (IPv6 if the first endpoint is) with port http → port.
func slice(name string, port int32, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	return sliceWithPorts(name, []discoveryv1.EndpointPort{slicePort("http", port, v1.ProtocolTCP)}, eps...)
}

func sliceWithPorts(name string, ps []discoveryv1.EndpointPort, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	at := discoveryv1.AddressTypeIPv4
	if len(eps) > 0 && strings.Contains(eps[0].Addresses[0], ":") {
		at = discoveryv1.AddressTypeIPv6
	}
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "ns", Name: name},
		AddressType: at,
		Ports:       ps,
		Endpoints:   eps,
	}
}

// config is an l2bridge node with every HNS feature (HNS 15.5, cap 1024), dual-stack node IPs.
func config() Config {
	return Config{
		NodeName:    thisNode,
		Zone:        "zone-a",
		NodeIPs:     map[intent.IPFamily]netip.Addr{intent.IPv4: addr(nodeIPv4), intent.IPv6: addr(nodeIPv6)},
		Mode:        L2Bridge,
		HealthzPort: 10256,
		Features:    hnslb.FeaturesFor(hnslb.Version{Major: 15, Minor: 5}),
	}
}

// oldHNS is HNS 9.2: no DSR, no IPv6, no affinity, 64 backends.
func oldHNS(c *Config) { c.Features = hnslb.FeaturesFor(hnslb.Version{Major: 9, Minor: 2}) }

func addr(s string) netip.Addr { return netip.MustParseAddr(s) }

func remote(ip string) intent.Backend {
	return intent.Backend{IP: ip}
}

func localBE(ip string) intent.Backend { return intent.Backend{IP: ip, Local: true} }

func key(vip string, port uint16) intent.LBKey {
	fam := intent.IPv4
	if strings.Contains(vip, ":") {
		fam = intent.IPv6
	}
	return intent.LBKey{Family: fam, VIP: vip, Protocol: hnslb.ProtocolTCP, Port: port}
}

func nodePortKey(fam intent.IPFamily, port uint16) intent.LBKey {
	return intent.LBKey{Family: fam, Protocol: hnslb.ProtocolTCP, Port: port}
}

// lbByKey finds a result's load balancer or fails the test.
func lbByKey(t *testing.T, r ServiceResult, k intent.LBKey) intent.LB {
	t.Helper()
	for _, lb := range r.LBs {
		if lb.Key == k {
			return lb
		}
	}
	t.Fatalf("no load balancer %s; have %s", k, keysOf(r))
	return intent.LB{}
}

func keysOf(r ServiceResult) string {
	var ks []string
	for _, lb := range r.LBs {
		ks = append(ks, lb.Key.String())
	}
	return "[" + strings.Join(ks, " ") + "]"
}

func backendIPs(lb intent.LB) string {
	var ips []string
	for _, b := range lb.Backends {
		ips = append(ips, b.IP)
	}
	return strings.Join(ips, ",")
}

func reasons(ps []Problem) string {
	var rs []string
	for _, p := range ps {
		rs = append(rs, p.Reason)
	}
	return strings.Join(rs, ",")
}

func hasReason(ps []Problem, reason string) bool {
	for _, p := range ps {
		if p.Reason == reason {
			return true
		}
	}
	return false
}

func dump(r ServiceResult) string {
	var b strings.Builder
	for _, lb := range r.LBs {
		fmt.Fprintf(&b, "%s int=%d src=%s pf=%d f=%d d=%d be=[%s]\n", lb.Key, lb.InternalPort, lb.SourceVIP, lb.PortFlags, lb.Flags, lb.Distribution, backendIPs(lb))
	}
	fmt.Fprintf(&b, "problems=%s", reasons(r.Problems))
	return b.String()
}

// slicesOf is SliceOf for each of in (nil for nil): the inputs tests
// build from the API type.
func slicesOf(in ...*discoveryv1.EndpointSlice) []*EndpointSlice {
	out := make([]*EndpointSlice, len(in))
	for i, s := range in {
		if s != nil {
			c := SliceOf(s)
			out[i] = &c
		}
	}
	return out
}
