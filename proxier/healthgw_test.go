package proxier

import (
	"context"
	"net/netip"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/vfp"
)

// The CNI makes the root endpoint (flannel's cbr0_ep) after the network
// hnsproxy waited for at start: health checks on an ingress IP are
// forwarded to it once it exists, as kube-proxy looks it up on every sync,
// not only after a restart.
func TestRootEndpointMadeAfterStartGetsHealthChecksForwarded(t *testing.T) {
	n := newTestNode(t, "ws2022", "10.244.1.5")
	n.config.ForwardHealthCheckVIP = true
	n.healthCheckGateway = func(ctx context.Context) (map[intent.IPFamily]netip.Addr, error) {
		ep, err := n.hns.GetEndpointByName(ctx, "cbr0_ep")
		if err != nil {
			return nil, err
		}
		return map[intent.IPFamily]netip.Addr{intent.IPv4: netip.MustParseAddr(ep.IP())}, nil
	}
	n.start()
	lb := func(name, clusterIP, ingress string, hcPort int32) *v1.Service {
		return service(name, clusterIP, func(s *v1.Service) {
			s.Spec.Type = v1.ServiceTypeLoadBalancer
			s.Spec.ExternalTrafficPolicy = v1.ServiceExternalTrafficPolicyLocal
			s.Spec.Ports[0].NodePort = 30000 + hcPort%100
			s.Spec.HealthCheckNodePort = hcPort
			s.Status.LoadBalancer.Ingress = []v1.LoadBalancerIngress{{IP: ingress}}
		})
	}
	n.apply(lb("web", "10.96.0.10", "198.51.100.7", 32001), slice("web", endpoint{"10.244.1.5", nodeName}))
	healthLB := func(ingress string, port uint16) func() bool {
		return func() bool {
			return slices.ContainsFunc(n.lbs(), func(v lbView) bool {
				return v.Frontend == ingress && v.Port == port && slices.Equal(v.Backends, []string{"10.244.1.2"})
			})
		}
	}
	n.eventually("the ingress load balancer", func() bool {
		return slices.ContainsFunc(n.lbs(), func(v lbView) bool { return v.Frontend == "198.51.100.7" && v.Port == 80 })
	})
	n.settle()
	if healthLB("198.51.100.7", 32001)() {
		t.Fatal("a health-check load balancer without a root endpoint")
	}

	nw, err := n.hns.GetNetworkByID(context.Background(), n.networkID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.hns.CreateEndpoint(context.Background(), nw.ID, &hnslb.Endpoint{Name: "cbr0_ep",
		IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.1.2", PrefixLength: 24}}}); err != nil {
		t.Fatal(err)
	}
	// A change alone does not read it again within the sync period (an
	// hour here); the next drift repair does.
	n.apply(lb("api", "10.96.0.11", "198.51.100.8", 32002), slice("api", endpoint{"10.244.1.5", nodeName}))
	n.eventually("the second ingress load balancer", func() bool {
		return slices.ContainsFunc(n.lbs(), func(v lbView) bool { return v.Frontend == "198.51.100.8" && v.Port == 80 })
	})
	if healthLB("198.51.100.8", 32002)() {
		t.Error("the root endpoint was read again for a change within the sync period")
	}
	n.repairNow()
	n.eventually("health checks on both ingress IPs forwarded to the root endpoint", func() bool {
		return healthLB("198.51.100.7", 32001)() && healthLB("198.51.100.8", 32002)()
	})
	// The cloud's probe arrives from outside addressed to the ingress IP
	// (kubernetes/kubernetes#99287) and reaches the root endpoint; the
	// Service's own port keeps DSR to its local backend.
	vc, err := vfp.NewCluster(vfp.Node{Name: nodeName, IPs: []netip.Addr{netip.MustParseAddr(nodeIP)}, HNS: n.hns.Snapshot(), NetworkName: "cbr0"})
	if err != nil {
		t.Fatal(err)
	}
	for dst, want := range map[string]string{"198.51.100.7:32001": "10.244.1.2:32001", "198.51.100.8:80": "10.244.1.5:8080"} {
		v, err := vc.Trace(vfp.Packet{Src: netip.MustParseAddrPort("203.0.113.9:5555"), Dst: netip.MustParseAddrPort(dst), Protocol: hnslb.ProtocolTCP}, vfp.Options{Ingress: nodeName})
		if err != nil {
			t.Fatal(err)
		}
		if v.Outcome != vfp.DeliveredToPod || v.SeenDst.String() != want {
			t.Errorf("a probe from outside to %s: %s, want delivered to %s", dst, v, want)
		}
	}
}
