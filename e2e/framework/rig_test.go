//go:build linux

package framework

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

func TestDescribeLoadBalancers(t *testing.T) {
	svc := corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "front"},
		Spec: corev1.ServiceSpec{
			ClusterIPs:          []string{"10.96.0.20"},
			ExternalIPs:         []string{"198.51.100.50"},
			HealthCheckNodePort: 31000,
			Ports:               []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, NodePort: 30080}},
		},
		Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "203.0.113.10"}}}},
	}
	snap := &hnslb.Snapshot{
		Endpoints: []hnslb.Endpoint{
			{ID: "e1", IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.1.11"}}},
			{ID: "e2", IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.2.9"}}, Flags: hnslb.EndpointFlagsRemoteEndpoint},
			{ID: "e3", IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.1.9"}}},
		},
		LoadBalancers: []hnslb.LoadBalancer{
			{ID: "np", HostComputeEndpoints: []string{"e1", "e2"}, SourceVIP: "10.0.0.11",
				PortMappings: []hnslb.PortMapping{{Protocol: 6, InternalPort: 8080, ExternalPort: 30080, Flags: hnslb.PortMappingFlagsLocalRoutedVIP | hnslb.PortMappingFlagsVipExternalIP, DistributionType: hnslb.DistributionSourceIP}}},
			{ID: "cip", HostComputeEndpoints: []string{"e1", "e2", "e3"}, SourceVIP: "10.0.0.11", FrontendVIPs: []string{"10.96.0.20"}, Flags: hnslb.LoadBalancerFlagsDSR,
				PortMappings: []hnslb.PortMapping{{Protocol: 6, InternalPort: 8080, ExternalPort: 80}}},
			{ID: "ext", HostComputeEndpoints: []string{"gone"}, FrontendVIPs: []string{"198.51.100.50"},
				PortMappings: []hnslb.PortMapping{{Protocol: 6, InternalPort: 8080, ExternalPort: 80}}},
			{ID: "ing", HostComputeEndpoints: []string{"e3"}, FrontendVIPs: []string{"203.0.113.10"}, Flags: hnslb.LoadBalancerFlagsDSR,
				PortMappings: []hnslb.PortMapping{{Protocol: 6, InternalPort: 8080, ExternalPort: 80, Flags: hnslb.PortMappingFlagsUseMux | hnslb.PortMappingFlagsPreserveDIP}}},
			{ID: "hc", FrontendVIPs: []string{"203.0.113.10"}, PortMappings: []hnslb.PortMapping{{Protocol: 6, InternalPort: 10256, ExternalPort: 31000}}},
			{ID: "udp", FrontendVIPs: []string{"10.96.0.20"}, PortMappings: []hnslb.PortMapping{{Protocol: 17, InternalPort: 53, ExternalPort: 80}}},
		},
	}
	var got []string
	for _, v := range DescribeLoadBalancers(snap, []corev1.Service{svc}) {
		got = append(got, v.Service+" "+v.Role+" "+v.Line())
	}
	want := []string{
		// A UDP mapping on a TCP-only Service matches nothing.
		"  10.96.0.20:80/UDP->53 [] ",
		"web/front HealthCheck 203.0.113.10:31000/TCP->10256 [] ",
		"web/front:http ClusterIP 10.96.0.20:80/TCP->8080 [DSR] 10.244.1.9(local),10.244.1.11(local),10.244.2.9(remote)",
		"web/front:http ExternalIP 198.51.100.50:80/TCP->8080 [] gone(missing)",
		"web/front:http LoadBalancer 203.0.113.10:80/TCP->8080 [DSR,mux,preserve-destination] 10.244.1.9(local)",
		"web/front:http NodePort *:30080/TCP->8080 [local-routed-VIP,VIP-external-IP,client-IP-affinity,SNAT-to-10.0.0.11] 10.244.1.11(local),10.244.2.9(remote)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("views:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var b strings.Builder
	if err := WriteLBTable(&b, DescribeLoadBalancers(snap, []corev1.Service{svc}), 2); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "10.244.1.9(local) 10.244.1.11(local) ... 3 in all") || !strings.Contains(b.String(), "(no Service)") {
		t.Errorf("table:\n%s", b.String())
	}
}

func TestClusterSpecValidate(t *testing.T) {
	good := ClusterSpec{NetworkType: NetworkOverlay, Nodes: []NodeSpec{{Name: "a", NodeIP: "10.0.0.1", PodCIDR: "10.244.1.0/24"}}}
	if err := good.validate(); err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(*ClusterSpec){
		"network type":  func(s *ClusterSpec) { s.NetworkType = "nat" },
		"no nodes":      func(s *ClusterSpec) { s.Nodes = nil },
		"repeated name": func(s *ClusterSpec) { s.Nodes = append(s.Nodes, s.Nodes[0]) },
		"node IP":       func(s *ClusterSpec) { s.Nodes[0].NodeIP = "10.0.0" },
		"pod CIDR":      func(s *ClusterSpec) { s.Nodes[0].PodCIDR = "10.244.1.0/30" },
		"IPv6 pod CIDR": func(s *ClusterSpec) { s.Nodes[0].PodCIDR = "fd00::/64" },
	} {
		s := good
		s.Nodes = slices.Clone(good.Nodes)
		mutate(&s)
		if err := s.validate(); err == nil {
			t.Errorf("%s: accepted %+v", name, s)
		}
	}
}

func TestCNIConfig(t *testing.T) {
	spec := ClusterSpec{NetworkType: NetworkOverlay, serviceCIDR: "10.96.0.0/16"}
	node := NodeSpec{Name: "a", NodeIP: "10.0.0.11", PodCIDR: "10.244.1.0/24"}
	b, err := cniConfig(spec, node, "/run/a.sock", "/var/ipam")
	if err != nil {
		t.Fatal(err)
	}
	var conf struct {
		Plugins []struct {
			Type, Mode, Network, ClusterCIDR, ServiceCIDR, HNSEndpoint, ProviderAddress string
			DNS                                                                         struct{ Nameservers []string }
			IPAM                                                                        struct {
				Type   string
				Ranges [][]struct{ Subnet, RangeStart string }
			}
		}
	}
	if err := json.Unmarshal(b, &conf); err != nil {
		t.Fatal(err)
	}
	p := conf.Plugins[0]
	if p.Type != "hnscni" || p.Mode != "overlay" || p.Network != "vxlan0" || p.ServiceCIDR != "10.96.0.0/16" ||
		p.HNSEndpoint != "unix:///run/a.sock" || p.ProviderAddress != "10.0.0.11" || !slices.Equal(p.DNS.Nameservers, []string{"10.96.0.10"}) ||
		p.IPAM.Type != "host-local" || p.IPAM.Ranges[0][0].Subnet != "10.244.1.0/24" || p.IPAM.Ranges[0][0].RangeStart != "10.244.1.10" {
		t.Errorf("config %s", b)
	}
	if node.SourceVIP().String() != "10.244.1.2" {
		t.Errorf("source VIP %s", node.SourceVIP())
	}
	if _, err := cniConfig(spec, NodeSpec{Name: "b", PodCIDR: "bad"}, "s", "d"); err == nil {
		t.Error("bad pod CIDR accepted")
	}
}

func TestPrometheusConfig(t *testing.T) {
	got := prometheusConfig(map[string]string{"win-a": "127.0.0.1:10249"})
	for _, want := range []string{"scrape_interval: 1s", `- targets: ["127.0.0.1:10249"]`, `labels: {node: "win-a"}`, "job_name: hnsproxy"} {
		if !strings.Contains(got, want) {
			t.Errorf("config lacks %q:\n%s", want, got)
		}
	}
}
