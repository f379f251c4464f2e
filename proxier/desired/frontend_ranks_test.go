package desired

import (
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/hnsproxy/hnsproxy/intent"
)

// victim has cluster IP 10.0.0.7 and ports 80 and 443; it is the youngest
// Service, so "older wins" alone would give its frontend away.
func victim() ServiceInput {
	return ServiceInput{
		Service: service("victim", clusterIPs("10.0.0.7"), ports(tcpPort("http", 80), tcpPort("https", 443)), created(time.Hour)),
		Slices:  slicesOf(slice("victim-1", 8080, ep("10.1.0.7"))),
	}
}

// tenant sets an external IP equal to victim's cluster IP, on port 80 only,
// and is older.
func tenant(extIP string) ServiceInput {
	return ServiceInput{
		Service: service("tenant", clusterIPs("10.0.0.8"), externalIPs(extIP)),
		Slices:  slicesOf(slice("tenant-1", 8080, ep("10.1.0.66"))),
	}
}

func TestExternalIPNeverTakesAClusterIP(t *testing.T) {
	cfg := config()
	for _, order := range []string{"victim first", "tenant first"} {
		t.Run(order, func(t *testing.T) {
			s := NewState(cfg)
			v, tn := ForService(victim(), cfg), ForService(tenant("10.0.0.7"), cfg)
			first, second := v, tn
			if order == "tenant first" {
				first, second = tn, v
			}
			s.Set(first)
			ch := s.Set(second)
			if got := s.LBs[key("10.0.0.7", 80)]; got.Owner != "ns/victim:http" || backendIPs(*got) != "10.1.0.7" {
				t.Fatalf("the cluster IP went to %+v", got)
			}
			if !slices.Contains(ch.Conflicted, nsName("ns", "tenant")) {
				t.Errorf("tenant not re-reported: %+v", ch.Conflicted)
			}
			p := s.Conflicts(nsName("ns", "tenant"))
			if reasons(p) != ReasonExternalIPRefused || !strings.Contains(p[0].Message, "ns/victim") || !p[0].Warning {
				t.Errorf("tenant problems = %+v", p)
			}
			if p := s.Conflicts(nsName("ns", "victim")); len(p) != 0 {
				t.Errorf("victim problems = %+v", p)
			}
			// The tenant's other frontends are untouched.
			if got := s.LBs[key("10.0.0.8", 80)]; got.Owner != "ns/tenant:http" {
				t.Errorf("tenant's own cluster IP: %+v", got)
			}
		})
	}
}

func TestExternalIPRefusedOnEveryPortOfAClusterIP(t *testing.T) {
	cfg := config()
	// The tenant's port 8443 is a port the victim does not serve: still refused.
	tn := tenant("10.0.0.7")
	tn.Service.Spec.Ports = []v1.ServicePort{tcpPort("http", 8443)}
	s := Compute([]ServiceInput{victim(), tn}, cfg)
	if lb, ok := s.LBs[key("10.0.0.7", 8443)]; ok {
		t.Fatalf("an external IP on a cluster IP was programmed: %+v", lb)
	}
	if p := s.Conflicts(nsName("ns", "tenant")); reasons(p) != ReasonExternalIPRefused {
		t.Errorf("tenant problems = %+v", p)
	}
	// The victim goes: the IP is nobody's cluster IP any more, the external IP works.
	ch := s.Delete(nsName("ns", "victim"))
	if lb := s.LBs[key("10.0.0.7", 8443)]; lb.Owner != "ns/tenant:http" || lb.Origin != intent.OriginExternalIP {
		t.Fatalf("after the victim left: %+v", lb)
	}
	if !slices.Contains(ch.LBs, key("10.0.0.7", 8443)) || !slices.Contains(ch.Conflicted, nsName("ns", "tenant")) {
		t.Errorf("change = %+v", ch)
	}
	if p := s.Conflicts(nsName("ns", "tenant")); len(p) != 0 {
		t.Errorf("no problem left: %+v", p)
	}
	// It comes back: refused again.
	ch = s.Set(ForService(victim(), cfg))
	if lb, ok := s.LBs[key("10.0.0.7", 8443)]; ok || !slices.Contains(ch.LBs, key("10.0.0.7", 8443)) {
		t.Errorf("victim back: %+v, change %+v", lb, ch)
	}
}

func TestIngressIPOutranksAnOlderExternalIP(t *testing.T) {
	s := Compute(externalIPAndYoungerIngressIP("10.1.0.3"), config())
	if got := s.LBs[key("198.51.100.7", 80)]; got.Owner != "ns/b-lb:http" {
		t.Fatalf("ingress IP lost to an older external IP: %+v", got)
	}
	p := s.Conflicts(nsName("ns", "a-ext"))
	if reasons(p) != ReasonLoadBalancerConflict || !strings.Contains(p[0].Message, "outranks") {
		t.Errorf("loser problems = %+v", p)
	}
}

// TestAnExternalIPIdenticalToTheIngressIPThatOutranksItIsNoConflict: two
// Services of the same pods, one with the address as its external IP and
// one with it as its ingress IP, want the same load balancer but for whose
// it is (owner and origin): the ingress IP carries it, and the other
// Service loses nothing, so no LoadBalancerConflict is raised.
func TestAnExternalIPIdenticalToTheIngressIPThatOutranksItIsNoConflict(t *testing.T) {
	s := Compute(externalIPAndYoungerIngressIP("10.1.0.2"), config())
	if got := s.LBs[key("198.51.100.7", 80)]; got.Owner != "ns/b-lb:http" || got.Origin != intent.OriginIngress {
		t.Fatalf("ingress IP lost to an older external IP: %+v", got)
	}
	if p := s.Conflicts(nsName("ns", "a-ext")); len(p) != 0 {
		t.Errorf("loser problems = %+v, want none: the load balancer it wants is there", p)
	}
}

func TestRefuseExternalIPsOnNodeAddresses(t *testing.T) {
	in := ServiceInput{Service: service("web", externalIPs(nodeIPv4, "203.0.113.5")), Slices: slicesOf(twoEndpoints()...)}
	cfg := config()
	r := ForService(in, cfg)
	if len(r.Problems) != 0 || lbByKey(t, r, key(nodeIPv4, 80)).Origin != intent.OriginExternalIP {
		t.Fatalf("default: an external IP on the node address works as in kube-proxy: %s", dump(r))
	}
	cfg.RefuseExternalIPsOnNodeAddresses = true
	r = ForService(in, cfg)
	if reasons(r.Problems) != ReasonExternalIPRefused || !strings.Contains(keysOf(r), "203.0.113.5:80") || strings.Contains(keysOf(r), nodeIPv4+":80") {
		t.Errorf("hardened: %s", dump(r))
	}
}

// externalIPAndYoungerIngressIP are two Services on one address: a-ext's
// external IP, backed by 10.1.0.2, and the ingress IP of b-lb, younger by
// an hour, backed by ingressBackend.
func externalIPAndYoungerIngressIP(ingressBackend string) []ServiceInput {
	return []ServiceInput{{
		Service: service("a-ext", clusterIPs("10.0.0.2"), externalIPs("198.51.100.7")),
		Slices:  slicesOf(slice("a-ext-1", 8080, ep("10.1.0.2"))),
	}, {
		Service: service("b-lb", clusterIPs("10.0.0.3"), loadBalancer(ingressIP("198.51.100.7")), created(time.Hour)),
		Slices:  slicesOf(slice("b-lb-1", 8080, ep(ingressBackend))),
	}}
}

// TestExternalIPRefusedIsReportedOncePerIP: the refusal names the IP,
// "refused on every port", once, however many ports the Service has.
func TestExternalIPRefusedIsReportedOncePerIP(t *testing.T) {
	tn := tenant("10.0.0.7")
	tn.Service.Spec.Ports = []v1.ServicePort{tcpPort("http", 80), tcpPort("https", 443)}
	tn.Slices = slicesOf(sliceWithPorts("tenant-1",
		[]discoveryv1.EndpointPort{slicePort("http", 8080, v1.ProtocolTCP), slicePort("https", 8443, v1.ProtocolTCP)}, ep("10.1.0.66")))
	s := Compute([]ServiceInput{victim(), tn}, config())
	if p := s.Conflicts(nsName("ns", "tenant")); reasons(p) != ReasonExternalIPRefused {
		t.Errorf("tenant problems = %+v, want one ExternalIPRefused", p)
	}
}
