package desired

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

// TestHostileInput is the mapping's part of the bad-input table in
// docs/reliability.md: each hostile or broken Service or slice has an
// expected outcome, either load balancers or a Problem, never a panic.
func TestHostileInput(t *testing.T) {
	backends := slice("web-1", 8080, ep("10.1.0.5"), ep("10.1.0.6", local))
	cluster := key("10.0.0.1", 80)
	for _, c := range []struct {
		name string
		svc  *v1.Service
		// lbs are the keys wanted (sorted); problems the reasons (in order).
		lbs      []intent.LBKey
		problems string
	}{
		{"external IP is the node IP: programmed as kube-proxy does",
			service("web", externalIPs(nodeIPv4)), []intent.LBKey{cluster, key(nodeIPv4, 80)}, ""},
		{"external IP 0.0.0.0", service("web", externalIPs("0.0.0.0")), []intent.LBKey{cluster}, ReasonInvalidIP},
		{"external IP ::", service("web", clusterIPs("10.0.0.1", "fd00::1"), externalIPs("::")), []intent.LBKey{cluster}, ReasonInvalidIP},
		{"external IP loopback", service("web", externalIPs("127.0.0.1")), []intent.LBKey{cluster}, ReasonInvalidIP},
		{"external IP multicast", service("web", externalIPs("224.0.0.1", "239.1.2.3")), []intent.LBKey{cluster}, ReasonInvalidIP + "," + ReasonInvalidIP},
		{"external IP IPv6 multicast", service("web", clusterIPs("10.0.0.1", "fd00::1"), externalIPs("ff02::1")), []intent.LBKey{cluster}, ReasonInvalidIP},
		{"external IP link-local", service("web", externalIPs("169.254.1.1")), []intent.LBKey{cluster}, ReasonInvalidIP},
		{"external IP broadcast", service("web", externalIPs("255.255.255.255")), []intent.LBKey{cluster}, ReasonInvalidIP},
		{"external IP IPv4-mapped IPv6", service("web", externalIPs("::ffff:203.0.113.9")), []intent.LBKey{cluster}, ReasonInvalidIP},
		{"external IP with a zone", service("web", externalIPs("fe80::1%eth0")), []intent.LBKey{cluster}, ReasonInvalidIP},
		{"ingress IP of the wrong family", service("web", loadBalancer(ingressIP("2001:db8::7"))), []intent.LBKey{cluster}, ReasonIPFamilyMismatch},
		{"ingress IP loopback", service("web", loadBalancer(ingressIP("127.0.0.2"))), []intent.LBKey{cluster}, ReasonInvalidIP},
		{"ingress IP garbage", service("web", loadBalancer(ingressIP("lb.example.com"))), []intent.LBKey{cluster}, ReasonInvalidIP},
		{"cluster IP garbage", service("web", clusterIPs("10.0.0.300")), nil, ReasonInvalidIP},
		{"port 0 and port 70000", service("web", ports(tcpPort("a", 0), tcpPort("http", 80), tcpPort("b", 70000))), []intent.LBKey{cluster}, ReasonInvalidPort + "," + ReasonInvalidPort},
		{"SCTP", service("web", ports(v1.ServicePort{Name: "http", Port: 80, Protocol: v1.ProtocolSCTP})), nil, ReasonUnsupportedProtocol},
		{"two ports on one number", service("web", ports(tcpPort("http", 80), tcpPort("http", 80))), []intent.LBKey{cluster}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := ForService(ServiceInput{Service: c.svc, Slices: slicesOf(backends)}, config())
			var got []intent.LBKey
			for _, lb := range r.LBs {
				got = append(got, lb.Key)
				if lb.Key.VIP == nodeIPv4 && lb.PortFlags != hnslb.PortMappingFlagsVipExternalIP {
					t.Errorf("node-IP external load balancer flags %d", lb.PortFlags)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(c.lbs) || reasons(r.Problems) != c.problems {
				t.Errorf("got %v problems %q; want %v problems %q", got, reasons(r.Problems), c.lbs, c.problems)
			}
		})
	}
}

// TestTenThousandPorts: a Service with 10,000 ports (the API allows it) is
// mapped in full, one load balancer per port and family, without problems.
func TestTenThousandPorts(t *testing.T) {
	const n = 10000
	var sps []v1.ServicePort
	var eps []discoveryv1.EndpointPort
	for i := range n {
		name := fmt.Sprintf("p%d", i)
		sps = append(sps, tcpPort(name, int32(1+i)))
		eps = append(eps, slicePort(name, int32(20000+i), v1.ProtocolTCP))
	}
	svc := service("wide", clusterIPs("10.0.0.1", "fd00::1"), ports(sps...))
	in := ServiceInput{Service: svc, Slices: slicesOf(
		sliceWithPorts("wide-4", eps, ep("10.1.0.5"), ep("10.1.0.6", local)),
		sliceWithPorts("wide-6", eps, ep("fd01::5")),
	)}
	s := Compute([]ServiceInput{in}, config())
	r := s.Services[ForService(in, config()).Name]
	if len(r.LBs) != 2*n || len(s.LBs) != 2*n || len(r.Problems) != 0 {
		t.Fatalf("%d load balancers (%d in the state), problems %q; want %d and none", len(r.LBs), len(s.LBs), reasons(r.Problems), 2*n)
	}
	last := lbByKey(t, r, key("fd00::1", n))
	if last.InternalPort != 20000+n-1 || backendIPs(last) != "fd01::5" {
		t.Errorf("last IPv6 port: %d → %s", last.InternalPort, backendIPs(last))
	}
	if len(s.RemoteEndpoints) != 2 {
		t.Errorf("remote endpoints %v, want one per remote backend", s.RemoteEndpoints)
	}
}

// TestDuplicateEndpointsAcrossSlices: one address in several slices (an
// EndpointSlice controller mid-update, or an IP reused) is one backend, the
// best of its copies; or none, when the best is not ready.
func TestDuplicateEndpointsAcrossSlices(t *testing.T) {
	svc := service("web")
	for _, c := range []struct {
		name   string
		slices []*discoveryv1.EndpointSlice
		want   []intent.Backend
	}{
		{"same endpoint twice", []*discoveryv1.EndpointSlice{slice("a", 8080, ep("10.1.0.5")), slice("b", 8080, ep("10.1.0.5"))},
			[]intent.Backend{remote("10.1.0.5")}},
		{"ready copy wins over a terminating one", []*discoveryv1.EndpointSlice{slice("a", 8080, ep("10.1.0.5", goneTerminating)), slice("b", 8080, ep("10.1.0.5"), ep("10.1.0.6", notReady))},
			[]intent.Backend{remote("10.1.0.5")}},
		// A pod that took a terminating pod's IP, before it is ready
		// (kubernetes/kubernetes#135593): the ghost is not a backend.
		{"a not-ready copy wins over a serving-terminating one", []*discoveryv1.EndpointSlice{slice("a", 8080, ep("10.1.0.5", servingTerminating)), slice("b", 8080, ep("10.1.0.5", notReady))},
			nil},
		{"a serving-terminating copy wins over a gone one", []*discoveryv1.EndpointSlice{slice("a", 8080, ep("10.1.0.5", goneTerminating)), slice("b", 8080, ep("10.1.0.5", servingTerminating))},
			[]intent.Backend{remote("10.1.0.5")}},
		{"local copy wins over a remote one", []*discoveryv1.EndpointSlice{slice("a", 8080, ep("10.1.0.5")), slice("b", 8080, ep("10.1.0.5", local))},
			[]intent.Backend{localBE("10.1.0.5")}},
		// As kube-proxy's endpointSliceCache: slices in name order, the
		// first copy kept unless a later one is better; never the informer's
		// order. Here b's copy places the pod on no node.
		{"equally ranked copies: the first slice's by name", []*discoveryv1.EndpointSlice{slice("b", 8080, func() discoveryv1.Endpoint {
			e := ep("10.1.0.5")
			e.NodeName = nil
			return e
		}()), slice("a", 8080, ep("10.1.0.5"))},
			[]intent.Backend{remote("10.1.0.5")}},
		{"a slice listing one address twice", []*discoveryv1.EndpointSlice{slice("a", 8080, ep("10.1.0.5"), ep("10.1.0.5"), ep("10.1.0.6"))},
			[]intent.Backend{remote("10.1.0.5"), remote("10.1.0.6")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := ForService(ServiceInput{Service: svc, Slices: slicesOf(c.slices...)}, config())
			if c.want == nil && len(r.LBs) != 0 {
				t.Fatalf("want no load balancer (no backend), got %s", dump(r))
			}
			if c.want != nil && (len(r.LBs) != 1 || fmt.Sprint(r.LBs[0].Backends) != fmt.Sprint(c.want)) {
				t.Fatalf("got %s", dump(r))
			}
		})
	}
}

// TestHugeSliceIsCapped: 20,000 endpoints under a 64-backend cap give 64
// backends and a BackendsTruncated warning.
func TestHugeSliceIsCapped(t *testing.T) {
	var eps []discoveryv1.Endpoint
	for i := range 20000 {
		eps = append(eps, ep(fmt.Sprintf("10.%d.%d.%d", 1+i>>16, i>>8&255, i&255)))
	}
	cfg := config()
	oldHNS(&cfg)
	r := ForService(ServiceInput{Service: service("big"), Slices: slicesOf(slice("big-1", 8080, eps...))}, cfg)
	if len(r.LBs) != 1 || len(r.LBs[0].Backends) != 64 || r.Truncated != 20000-64 || !hasReason(r.Problems, ReasonBackendsTruncated) {
		t.Fatalf("%d load balancers, truncated %d, problems %q", len(r.LBs), r.Truncated, reasons(r.Problems))
	}
}
