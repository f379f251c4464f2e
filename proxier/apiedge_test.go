package proxier

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// TestObjectsAtTheAPILimitsServeBesideTheirSiblings feeds the proxier, through
// the informers, Services and EndpointSlices at the API's limits and edges at
// once: each is served as kube-proxy serves it (or not at all, where
// kube-proxy programs nothing), and none costs another Service its load
// balancers.
func TestObjectsAtTheAPILimitsServeBesideTheirSiblings(t *testing.T) {
	n := newTestNode(t, "ws2022", "10.244.1.5")
	n.start()
	long := strings.Repeat("n", 63) // a namespace and a Service name at the API's 63
	svcName := "s" + strings.Repeat("x", 62)

	// 100 named ports (one with an appProtocol), 5 external IPs, a node port each.
	many := service(svcName, "10.96.1.1", func(s *v1.Service) {
		s.Namespace = long
		s.Spec.Type = v1.ServiceTypeNodePort
		s.Spec.Ports = nil
		for i := range 100 {
			s.Spec.Ports = append(s.Spec.Ports, v1.ServicePort{
				Name: fmt.Sprintf("p-%d-x9", i), Protocol: v1.ProtocolTCP, Port: int32(1000 + i),
				TargetPort: intstr.FromInt32(int32(2000 + i)), NodePort: int32(31000 + i),
				AppProtocol: ptr.To("kubernetes.io/h2c"),
			})
		}
		for i := range 5 {
			s.Spec.ExternalIPs = append(s.Spec.ExternalIPs, fmt.Sprintf("192.0.2.%d", 10+i))
		}
	})
	manySlice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: long, Name: svcName + "-abcde",
			Labels: map[string]string{discoveryv1.LabelServiceName: svcName}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.244.1.5"}, NodeName: ptr.To(nodeName),
			Conditions: discoveryv1.EndpointConditions{}}}, // unset conditions: ready
	}
	for i := range 100 {
		manySlice.Ports = append(manySlice.Ports, discoveryv1.EndpointPort{Name: ptr.To(fmt.Sprintf("p-%d-x9", i)),
			Port: ptr.To(int32(2000 + i)), Protocol: ptr.To(v1.ProtocolTCP), AppProtocol: ptr.To("kubernetes.io/h2c")})
	}

	// 1000 endpoints in one slice, the API's maximum.
	big := slice("big")
	for i := range 1000 {
		big.Endpoints = append(big.Endpoints, discoveryv1.Endpoint{
			Addresses: []string{fmt.Sprintf("10.244.%d.%d", 2+i/250, 1+i%250)}, NodeName: ptr.To("win-2"),
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
		})
	}

	// DNS: port 53 over TCP and UDP, the same node port for both.
	dns := service("dns", "10.96.0.53", func(s *v1.Service) {
		s.Spec.Type = v1.ServiceTypeNodePort
		s.Spec.Ports = []v1.ServicePort{
			{Name: "dns-tcp", Protocol: v1.ProtocolTCP, Port: 53, NodePort: 30053},
			{Name: "dns", Protocol: v1.ProtocolUDP, Port: 53, NodePort: 30053},
			{Name: "sig", Protocol: v1.ProtocolSCTP, Port: 53, NodePort: 30053},
		}
	})
	dnsSlice := slice("dns", endpoint{"10.244.1.5", nodeName})
	dnsSlice.Ports = []discoveryv1.EndpointPort{
		{Name: ptr.To("dns-tcp"), Port: ptr.To(int32(5353)), Protocol: ptr.To(v1.ProtocolTCP)},
		{Name: ptr.To("dns"), Port: ptr.To(int32(5353)), Protocol: ptr.To(v1.ProtocolUDP)},
		{Name: ptr.To("sig"), Port: ptr.To(int32(5353)), Protocol: ptr.To(v1.ProtocolSCTP)},
	}

	// A LoadBalancer Service whose node port is not allocated, whose ingress is
	// a hostname, an ipMode Proxy IP and a VIP IP, with ETP Local and no
	// health-check node port.
	lb := service("lb", "10.96.0.80", func(s *v1.Service) {
		s.Spec.Type = v1.ServiceTypeLoadBalancer
		s.Spec.ExternalTrafficPolicy = v1.ServiceExternalTrafficPolicyLocal
		s.Status.LoadBalancer.Ingress = []v1.LoadBalancerIngress{
			{Hostname: "abc.elb.example.com"},
			{IP: "198.51.100.8", IPMode: ptr.To(v1.LoadBalancerIPModeProxy)},
			{IP: "198.51.100.9", IPMode: ptr.To(v1.LoadBalancerIPModeVIP)},
		}
	})
	headless := service("headless", v1.ClusterIPNone)
	extName := service("ext", "", func(s *v1.Service) {
		s.Spec.Type, s.Spec.ExternalName, s.Spec.ClusterIP, s.Spec.ClusterIPs = v1.ServiceTypeExternalName, "example.com", "", nil
	})
	pending := service("pending", "", func(s *v1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "", nil })

	n.apply(service("web", "10.96.0.10"), slice("web", endpoint{"10.244.1.5", nodeName}),
		many, manySlice, service("big", "10.96.0.20"), big, dns, dnsSlice,
		lb, slice("lb", endpoint{"10.244.1.5", nodeName}),
		headless, slice("headless", endpoint{"10.244.1.5", nodeName}),
		extName, slice("ext", endpoint{"10.244.1.5", nodeName}),
		pending, slice("pending", endpoint{"10.244.1.5", nodeName}))
	n.settle()

	byFrontend := map[string][]lbView{}
	for _, l := range n.lbs() {
		byFrontend[l.Frontend] = append(byFrontend[l.Frontend], l)
	}
	if got := byFrontend["10.96.0.10"]; len(got) != 1 || strings.Join(got[0].Backends, ",") != "10.244.1.5" {
		t.Errorf("sibling web: %+v", got)
	}
	if got := byFrontend["10.96.1.1"]; len(got) != 100 {
		t.Errorf("100-port Service: %d cluster-IP load balancers, want 100", len(got))
	}
	for i := range 5 {
		if got := byFrontend[fmt.Sprintf("192.0.2.%d", 10+i)]; len(got) != 100 {
			t.Errorf("external IP %d: %d load balancers, want 100", i, len(got))
		}
	}
	if got := byFrontend["10.96.0.20"]; len(got) != 1 || len(got[0].Backends) == 0 {
		t.Errorf("1000-endpoint Service: %+v", len(got))
	} else if max := n.hns.Profile().Features().MaxBackends; len(got[0].Backends) != min(1000, max) {
		t.Errorf("1000-endpoint Service: %d backends, want %d", len(got[0].Backends), min(1000, max))
	}
	if got := byFrontend["10.96.0.53"]; len(got) != 2 {
		t.Errorf("DNS: %+v, want TCP and UDP", got)
	}
	dnsNodePorts := 0
	for _, l := range byFrontend[""] {
		if l.Port == 30053 {
			dnsNodePorts++
		}
	}
	if dnsNodePorts != 2 {
		t.Errorf("DNS node port 30053: %d load balancers, want TCP and UDP", dnsNodePorts)
	}
	if got := byFrontend["10.96.0.80"]; len(got) != 1 {
		t.Errorf("LoadBalancer cluster IP: %+v", got)
	}
	if got := byFrontend["198.51.100.9"]; len(got) != 1 || got[0].Flags&hnslb.LoadBalancerFlagsDSR == 0 {
		t.Errorf("VIP ingress with ETP Local: %+v", got)
	}
	for _, skipped := range []string{"198.51.100.8", "10.96.0.30"} {
		if got := byFrontend[skipped]; len(got) != 0 {
			t.Errorf("%s: %+v, want none", skipped, got)
		}
	}
	events := n.drainEvents()
	for _, want := range []string{"UnsupportedProtocol port sig: protocol SCTP", "InvalidPort externalTrafficPolicy Local: the Service has no health-check node port"} {
		if !slices.ContainsFunc(events, func(e string) bool { return strings.Contains(e, want) }) {
			t.Errorf("no event %q in %q", want, events)
		}
	}
	if want := 1 + 100 + 5*100 + 1 + 2 + 1 + 1 + 100 + 2; len(n.lbs()) != want {
		t.Errorf("%d load balancers, want %d: %s", len(n.lbs()), want, dumpFrontends(n))
	}
}

func dumpFrontends(n *testNode) string {
	c := map[string]int{}
	for _, l := range n.lbs() {
		c[l.Frontend]++
	}
	return fmt.Sprint(c)
}
