package nodeconfig

import (
	"context"
	"net/netip"
	"testing"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options/optionstest"
	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
	"github.com/hnsproxy/hnsproxy/sim"
)

// With the health server off (--healthz-port=0) nothing listens on the
// node's 10256, and kube-proxy's winkernel, which forwards an ingress IP's
// health checks to its own healthz port, has none to forward to. A Service
// without a health-check node port of its own gets no load balancer that
// takes its ingress IP's port 10256 to the node, where nothing answers (and
// which another Service sharing the ingress IP may use); one with its own
// health-check node port is forwarded there as before.
func TestNoHealthServerForwardsNoHealthCheckToItsPort(t *testing.T) {
	ctx := context.Background()
	hns := sim.New(sim.Options{Seed: 1})
	network, err := hns.CreateNetwork(ctx, &hnslb.Network{Name: "cbr0", Type: hnslb.NetworkTypeL2Bridge,
		Ipams: []hnslb.Ipam{{Subnets: []hnslb.Subnet{{IpAddressPrefix: "10.244.1.0/24"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hns.CreateEndpoint(ctx, network.ID, &hnslb.Endpoint{Name: "cbr0",
		IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.1.2", PrefixLength: 24}}}); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := optionstest.Complete("--network-name=cbr0", "--hostname-override=win-1", "--hns-endpoint=sim",
		"--forward-healthcheck-vip", "--healthz-port=0")
	if err != nil {
		t.Fatal(err)
	}
	caps := Capabilities{Features: hnslb.FeaturesFor(hnslb.Version{Major: 13, Minor: 2})}
	c, err := Desired(ctx, cfg, hns, network, caps, false)
	if err != nil {
		t.Fatal(err)
	}
	c.NodeIPs = map[intent.IPFamily]netip.Addr{intent.IPv4: netip.MustParseAddr("10.0.0.5")}

	svc := &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec: v1.ServiceSpec{Type: v1.ServiceTypeLoadBalancer, ClusterIP: "10.96.0.10", ClusterIPs: []string{"10.96.0.10"},
			IPFamilies:            []v1.IPFamily{v1.IPv4Protocol},
			ExternalTrafficPolicy: v1.ServiceExternalTrafficPolicyCluster,
			Ports:                 []v1.ServicePort{{Name: "http", Protocol: v1.ProtocolTCP, Port: 80, NodePort: 30080, TargetPort: intstr.FromInt32(8080)}}},
		Status: v1.ServiceStatus{LoadBalancer: v1.LoadBalancerStatus{Ingress: []v1.LoadBalancerIngress{{IP: "198.51.100.7"}}}}}
	slice := desired.SliceOf(&discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "shop", Name: "web-1", Labels: map[string]string{discoveryv1.LabelServiceName: "web"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Protocol: ptr.To(v1.ProtocolTCP), Port: ptr.To[int32](8080)}},
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.244.1.5"}, NodeName: ptr.To("win-1"),
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
	})
	healthLBs := func(svc *v1.Service) []intent.LBKey {
		var out []intent.LBKey
		for _, lb := range desired.ForService(desired.ServiceInput{Service: svc, Slices: []*desired.EndpointSlice{&slice}}, c).LBs {
			if lb.Origin == intent.OriginHealthCheck {
				out = append(out, lb.Key)
			}
		}
		return out
	}
	if got := healthLBs(svc); len(got) != 0 {
		t.Errorf("with --healthz-port=0, health checks on the ingress IP are forwarded to %v, where nothing listens", got)
	}
	local := svc.DeepCopy()
	local.Spec.ExternalTrafficPolicy = v1.ServiceExternalTrafficPolicyLocal
	local.Spec.HealthCheckNodePort = 32001
	if got := healthLBs(local); len(got) != 1 || got[0].Port != 32001 || got[0].VIP != "198.51.100.7" {
		t.Errorf("a Service's own health-check node port: forwarded %v, want 198.51.100.7:32001", got)
	}
}
