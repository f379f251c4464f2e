package desired

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// FuzzForService feeds arbitrary addresses and ports through the whole
// mapping: bad input must come out as problems, never as a panic or as a
// load balancer with an unparsable frontend or backend.
func FuzzForService(f *testing.F) {
	f.Add("10.0.0.1", "203.0.113.5", "198.51.100.7", "10.1.0.2", int32(80), int32(30080), int32(8080), "TCP")
	f.Add("fd00::1", "2001:db8::1", "", "fd01::2", int32(0), int32(-1), int32(70000), "SCTP")
	f.Add("None", "x", "1.2.3.4.5", "::ffff:1.2.3.4", int32(65535), int32(65536), int32(0), "")
	f.Fuzz(func(t *testing.T, clusterIP, extIP, ingress, epIP string, port, np, target int32, proto string) {
		svc := service("web", clusterIPs(clusterIP, extIP), externalIPs(extIP, clusterIP),
			loadBalancer(ingressIP(ingress), ingressIP(epIP)), etpLocal(np), annotate(PreserveDestinationAnnotation, "true"),
			ports(v1.ServicePort{Name: "http", Port: port, NodePort: np, Protocol: v1.Protocol(proto)}), affinity(port))
		sl := sliceWithPorts("web-1", []discoveryv1.EndpointPort{slicePort("http", target, v1.Protocol(proto))},
			ep(epIP), ep(clusterIP, local), ep(ingress, servingTerminating))
		sl.AddressType = discoveryv1.AddressType(proto)
		for _, mode := range []func(*Config){func(*Config) {}, overlay, oldHNS} {
			cfg := config()
			mode(&cfg)
			cfg.MaxBackends = 1
			cfg.ForwardHealthCheckVIP = true
			s := Compute([]ServiceInput{{Service: svc, Slices: slicesOf(sl, slice("web-2", target, ep(epIP, local)))}}, cfg)
			for k, lb := range s.LBs {
				if _, ok := parseIP(k.VIP); k.VIP != "" && !ok {
					t.Fatalf("frontend %q", k.VIP)
				}
				for _, b := range lb.Backends {
					if _, ok := parseIP(b.IP); !ok {
						t.Fatalf("backend %q", b.IP)
					}
				}
			}
		}
	})
}
