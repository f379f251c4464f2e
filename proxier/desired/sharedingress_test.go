package desired

import (
	"net/netip"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/hnsproxy/hnsproxy/intent"
)

// TestServicesSharingAnIngressIPShareItsHealthCheck: Services that share a
// load-balancer ingress IP (one IP for DNS over TCP in one Service and UDP
// in another, as cloud providers and MetalLB allow) each ask, with
// --forward-healthcheck-vip, for the same load balancer: the ingress IP's
// healthz port to the node's gateway endpoint. One carries it for all; the
// others lose nothing, so no LoadBalancerConflict is raised (winkernel
// reuses the identical load balancer it already made, silently). A health
// load balancer that differs (preserve-destination adds mux flags) is a
// real conflict and is still reported.
func TestServicesSharingAnIngressIPShareItsHealthCheck(t *testing.T) {
	cfg := config()
	cfg.ForwardHealthCheckVIP = true
	cfg.HealthCheckGateway = map[intent.IPFamily]netip.Addr{intent.IPv4: addr("10.1.0.1")}
	shared := loadBalancer(ingressIP("198.51.100.53"))
	tcp := ServiceInput{
		Service: service("dns-tcp", clusterIPs("10.0.0.1"), ports(tcpPort("dns", 53)), shared),
		Slices:  slicesOf(sliceWithPorts("dns-tcp-1", []discoveryv1.EndpointPort{slicePort("dns", 5353, v1.ProtocolTCP)}, ep("10.1.0.3", local))),
	}
	udp := ServiceInput{
		Service: service("dns-udp", clusterIPs("10.0.0.2"), ports(udpPort("dns", 53)), shared, created(time.Second)),
		Slices:  slicesOf(sliceWithPorts("dns-udp-1", []discoveryv1.EndpointPort{slicePort("dns", 5353, v1.ProtocolUDP)}, ep("10.1.0.3", local))),
	}
	health := key("198.51.100.53", 10256)
	for _, in := range []ServiceInput{tcp, udp} {
		if r := ForService(in, cfg); len(r.LBs) != 3 {
			t.Fatalf("%s: want cluster IP, ingress IP and health check: %s", in.Service.Name, dump(r))
		}
	}

	s := Compute([]ServiceInput{tcp, udp}, cfg)
	if got, ok := s.LBs[health]; !ok || backendIPs(*got) != "10.1.0.1" {
		t.Fatalf("health-check load balancer = %+v", got)
	}
	for _, in := range []ServiceInput{tcp, udp} {
		if p := s.Conflicts(nsName("ns", in.Service.Name)); len(p) != 0 {
			t.Errorf("%s: %+v, want no conflict: the health-check load balancer it wants is there", in.Service.Name, p)
		}
	}

	// The holder goes: the other Service's own claim carries it on.
	s.Delete(nsName("ns", "dns-tcp"))
	if got, ok := s.LBs[health]; !ok || got.Owner != "ns/dns-udp:healthcheck" {
		t.Errorf("after the holder's deletion: %+v", got)
	}

	// preserve-destination (with DSR) makes the UDP Service's health load
	// balancer another one: a real conflict, reported.
	udp.Service = udp.Service.DeepCopy()
	udp.Service.Annotations = map[string]string{PreserveDestinationAnnotation: "true"}
	s = Compute([]ServiceInput{tcp, udp}, cfg)
	if p := s.Conflicts(nsName("ns", "dns-udp")); reasons(p) != ReasonLoadBalancerConflict {
		t.Errorf("a different health-check load balancer: problems %+v, want a conflict", p)
	}
}
