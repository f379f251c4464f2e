package proxier

import (
	"cmp"
	"encoding/json"
	"net/netip"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/utils/ptr"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
	"github.com/hnsproxy/hnsproxy/reconciler"
)

// The HNS load balancer documents hnsproxy sends (desired state through
// reconciler.BuildLB), Service shape by Service shape, against those
// kube-proxy v1.36.3's winkernel sends for the same Service: its
// syncProxyRules picks a loadBalancerFlags per frontend and hns.go's
// getLoadBalancer turns them into an hcn.HostComputeLoadBalancer.
// hnslb's types marshal as hcn's (hnslb/hcnclient json_windows_test.go), so
// the JSON compared is what HNS receives. One deliberate difference holds
// for every l2bridge case: winkernel sends no source VIP there, hnsproxy the
// node IP (proxier/desired README). The others are named in their cases.

// wkFlags is winkernel's loadBalancerFlags: the choices it makes per frontend.
type wkFlags struct {
	dsr, vipExternalIP, localRoutedVIP, useMux, preserveDIP, affinity, ipv6 bool
}

// wkFrontend is one load balancer winkernel asks for.
type wkFrontend struct {
	vip      string // "" for a node port
	proto    uint32
	internal uint16
	external uint16
	flags    wkFlags
	backends []string
}

// winkernelDocument is the document getLoadBalancer builds: one port
// mapping, the frontend VIP when there is one, schema 2.0.
func winkernelDocument(f wkFrontend, sourceVIP string) *hnslb.LoadBalancer {
	var pf hnslb.PortMappingFlags
	for _, on := range []struct {
		set  bool
		flag hnslb.PortMappingFlags
	}{
		{f.flags.useMux, hnslb.PortMappingFlagsUseMux},
		{f.flags.preserveDIP, hnslb.PortMappingFlagsPreserveDIP},
		{f.flags.localRoutedVIP, hnslb.PortMappingFlagsLocalRoutedVIP},
		{f.flags.vipExternalIP, hnslb.PortMappingFlagsVipExternalIP},
	} {
		if on.set {
			pf |= on.flag
		}
	}
	var lf hnslb.LoadBalancerFlags
	if f.flags.dsr {
		lf |= hnslb.LoadBalancerFlagsDSR
	}
	if f.flags.ipv6 {
		lf |= hnslb.LoadBalancerFlagsIPv6
	}
	dist := hnslb.DistributionNone
	if f.flags.affinity {
		dist = hnslb.DistributionSourceIP
	}
	lb := &hnslb.LoadBalancer{
		HostComputeEndpoints: slices.Sorted(slices.Values(f.backends)),
		SourceVIP:            sourceVIP,
		PortMappings: []hnslb.PortMapping{{
			Protocol: f.proto, InternalPort: f.internal, ExternalPort: f.external, DistributionType: dist, Flags: pf,
		}},
		SchemaVersion: hnslb.SchemaVersion{Major: 2, Minor: 0},
		Flags:         lf,
	}
	if f.vip != "" {
		lb.FrontendVIPs = []string{f.vip}
	}
	return lb
}

const (
	docNodeIPv4   = "10.0.0.1"
	docNodeIPv6   = "fd00::1"
	docSourceVIP  = "10.244.1.2"
	docLocal      = "10.244.1.10"
	docRemote     = "10.244.2.10"
	docLocalV6    = "fd00:10:244:1::10"
	docRemoteV6   = "fd00:10:244:2::10"
	docClusterV4  = "10.96.0.10"
	docClusterV6  = "fd00:10:96::10"
	docIngress    = "192.0.2.10"
	docExternalIP = "192.0.2.40"
	docHealthz    = 10256
)

func docConfig(mode desired.NetworkMode) desired.Config {
	cfg := desired.Config{
		NodeName:    "win-1",
		NodeIPs:     map[intent.IPFamily]netip.Addr{intent.IPv4: netip.MustParseAddr(docNodeIPv4), intent.IPv6: netip.MustParseAddr(docNodeIPv6)},
		Mode:        mode,
		HealthzPort: docHealthz,
		Features:    hnslb.FeaturesFor(hnslb.Version{Major: 15, Minor: 5}),
	}
	if mode == desired.Overlay {
		cfg.SourceVIP = map[intent.IPFamily]netip.Addr{intent.IPv4: netip.MustParseAddr(docSourceVIP)}
		cfg.HostMAC = "00-15-5d-00-00-01"
		cfg.RemoteSubnets = desired.NewRemoteSubnetIndex([]desired.RemoteSubnet{
			{Prefix: netip.MustParsePrefix("10.244.2.0/24"), ProviderAddress: netip.MustParseAddr("10.0.0.2")},
		})
	}
	return cfg
}

// docSlice is an EndpointSlice of web with the given ports (name "p<port>-<proto>"
// on target port 8080) and endpoints.
func docSlice(at discoveryv1.AddressType, protos []v1.Protocol, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	s := sliceOf("web", "web-"+string(at), at, eps...)
	s.Ports = nil
	for _, p := range protos {
		s.Ports = append(s.Ports, discoveryv1.EndpointPort{Name: ptr.To(string(p)), Port: ptr.To[int32](8080), Protocol: ptr.To(p)})
	}
	return s
}

func TestLoadBalancerDocumentsAreWinkernels(t *testing.T) {
	tcp := []v1.Protocol{v1.ProtocolTCP}
	twoV4 := docSlice(discoveryv1.AddressTypeIPv4, tcp, readyEP(docLocal, "win-1"), readyEP(docRemote, "win-2"))
	twoV6 := docSlice(discoveryv1.AddressTypeIPv6, tcp, readyEP(docLocalV6, "win-1"), readyEP(docRemoteV6, "win-2"))
	both, local := []string{docLocal, docRemote}, []string{docLocal}
	web := func(mutate ...func(*v1.Service)) *v1.Service {
		s := service("web", docClusterV4, mutate...)
		s.Spec.Ports[0].Name = string(v1.ProtocolTCP)
		return s
	}
	ports := func(protos ...v1.Protocol) func(*v1.Service) {
		return func(s *v1.Service) {
			target := s.Spec.Ports[0].TargetPort
			s.Spec.Ports = nil
			for _, p := range protos {
				s.Spec.Ports = append(s.Spec.Ports, v1.ServicePort{Name: string(p), Protocol: p, Port: 53, TargetPort: target})
			}
		}
	}
	typed := func(typ v1.ServiceType, etp v1.ServiceExternalTrafficPolicy) func(*v1.Service) {
		return func(s *v1.Service) {
			s.Spec.Type, s.Spec.ExternalTrafficPolicy = typ, etp
			s.Spec.Ports[0].NodePort = 30080
			if typ == v1.ServiceTypeLoadBalancer {
				s.Status.LoadBalancer.Ingress = []v1.LoadBalancerIngress{{IP: docIngress}}
				s.Spec.HealthCheckNodePort = 32000
			}
		}
	}
	annotated := func(s *v1.Service) { s.Annotations = map[string]string{desired.PreserveDestinationAnnotation: "true"} }
	families := func(ips ...string) func(*v1.Service) {
		return func(s *v1.Service) {
			s.Spec.ClusterIP, s.Spec.ClusterIPs, s.Spec.IPFamilies = ips[0], ips, nil
			for _, ip := range ips {
				fam := v1.IPv4Protocol
				if netip.MustParseAddr(ip).Is6() {
					fam = v1.IPv6Protocol
				}
				s.Spec.IPFamilies = append(s.Spec.IPFamilies, fam)
			}
			s.Spec.IPFamilyPolicy = ptr.To(v1.IPFamilyPolicyPreferDualStack)
		}
	}
	clusterIP := func(f wkFlags, backends ...string) wkFrontend {
		return wkFrontend{vip: docClusterV4, proto: hnslb.ProtocolTCP, internal: 8080, external: 80, flags: f, backends: backends}
	}
	nodePort := func(f wkFlags, backends ...string) wkFrontend {
		f.vipExternalIP, f.localRoutedVIP = true, true
		return wkFrontend{proto: hnslb.ProtocolTCP, internal: 8080, external: 30080, flags: f, backends: backends}
	}
	external := func(vip string, f wkFlags, backends ...string) wkFrontend {
		f.vipExternalIP = true
		return wkFrontend{vip: vip, proto: hnslb.ProtocolTCP, internal: 8080, external: 80, flags: f, backends: backends}
	}

	cases := []struct {
		name   string
		mode   desired.NetworkMode // l2bridge unless set
		cfg    func(*desired.Config)
		svc    *v1.Service
		slices []*discoveryv1.EndpointSlice
		want   []wkFrontend
		// differs, where set, says how winkernel's documents differ from
		// want (which is then hnsproxy's choice) and where that is documented.
		differs string
	}{
		{name: "ClusterIP TCP", svc: web(), slices: []*discoveryv1.EndpointSlice{twoV4},
			want: []wkFrontend{clusterIP(wkFlags{}, both...)}},
		{name: "ClusterIP UDP and TCP on one port number", svc: web(ports(v1.ProtocolTCP, v1.ProtocolUDP)),
			slices: []*discoveryv1.EndpointSlice{docSlice(discoveryv1.AddressTypeIPv4, []v1.Protocol{v1.ProtocolTCP, v1.ProtocolUDP},
				readyEP(docLocal, "win-1"), readyEP(docRemote, "win-2"))},
			want: []wkFrontend{
				{vip: docClusterV4, proto: hnslb.ProtocolTCP, internal: 8080, external: 53, backends: both},
				{vip: docClusterV4, proto: hnslb.ProtocolUDP, internal: 8080, external: 53, backends: both},
			}},
		{name: "ClusterIP SCTP", svc: web(ports(v1.ProtocolSCTP)),
			slices:  []*discoveryv1.EndpointSlice{docSlice(discoveryv1.AddressTypeIPv4, []v1.Protocol{v1.ProtocolSCTP}, readyEP(docLocal, "win-1"))},
			differs: "winkernel sends protocol 132, which HNS load balancers do not take: UnsupportedProtocol (simulator.md, operators.md)"},
		{name: "ClusterIP with --enable-dsr", cfg: func(c *desired.Config) { c.EnableDSR = true }, svc: web(),
			slices: []*discoveryv1.EndpointSlice{twoV4},
			want:   []wkFrontend{clusterIP(wkFlags{dsr: true}, both...)}},
		{name: "no endpoints", svc: web()},
		{name: "ClusterIP with only serving-terminating endpoints", svc: web(),
			slices:  []*discoveryv1.EndpointSlice{docSlice(discoveryv1.AddressTypeIPv4, tcp, terminatingEP(docLocal, "win-1", true))},
			want:    []wkFrontend{clusterIP(wkFlags{}, docLocal)},
			differs: "winkernel falls back to serving-terminating endpoints only for Services with ingress IPs (proxier/desired README)"},
		{name: "internalTrafficPolicy Local", svc: web(func(s *v1.Service) { s.Spec.InternalTrafficPolicy = ptr.To(v1.ServiceInternalTrafficPolicyLocal) }),
			slices: []*discoveryv1.EndpointSlice{twoV4},
			want:   []wkFrontend{clusterIP(wkFlags{}, local...)}},
		{name: "sessionAffinity ClientIP", svc: web(typed(v1.ServiceTypeNodePort, v1.ServiceExternalTrafficPolicyCluster),
			func(s *v1.Service) { s.Spec.SessionAffinity = v1.ServiceAffinityClientIP }),
			slices: []*discoveryv1.EndpointSlice{twoV4},
			want:   []wkFrontend{clusterIP(wkFlags{affinity: true}, both...), nodePort(wkFlags{affinity: true}, both...)}},
		{name: "sessionAffinity ClientIP on HNS without affinity", cfg: func(c *desired.Config) {
			c.Features = hnslb.FeaturesFor(hnslb.Version{Major: 9, Minor: 5})
		}, svc: web(func(s *v1.Service) { s.Spec.SessionAffinity = v1.ServiceAffinityClientIP }),
			slices:  []*discoveryv1.EndpointSlice{twoV4},
			want:    []wkFrontend{clusterIP(wkFlags{}, both...)},
			differs: "winkernel logs and sends SourceIP distribution anyway; hnsproxy sends none and raises SessionAffinityUnsupported (operators.md)"},
		{name: "NodePort", svc: web(typed(v1.ServiceTypeNodePort, v1.ServiceExternalTrafficPolicyCluster)),
			slices: []*discoveryv1.EndpointSlice{twoV4},
			want:   []wkFrontend{clusterIP(wkFlags{}, both...), nodePort(wkFlags{}, both...)}},
		{name: "NodePort externalTrafficPolicy Local", svc: web(typed(v1.ServiceTypeNodePort, v1.ServiceExternalTrafficPolicyLocal)),
			slices: []*discoveryv1.EndpointSlice{twoV4},
			want:   []wkFrontend{clusterIP(wkFlags{}, both...), nodePort(wkFlags{dsr: true}, local...)}},
		{name: "NodePort externalTrafficPolicy Local on HNS without DSR", cfg: func(c *desired.Config) {
			c.Features = hnslb.FeaturesFor(hnslb.Version{Major: 9, Minor: 2})
		}, svc: web(typed(v1.ServiceTypeNodePort, v1.ServiceExternalTrafficPolicyLocal)),
			slices:  []*discoveryv1.EndpointSlice{twoV4},
			want:    []wkFrontend{clusterIP(wkFlags{}, both...), nodePort(wkFlags{}, local...)},
			differs: "winkernel drops externalTrafficPolicy Local with DSR and balances over every endpoint; hnsproxy keeps the local ones (proxier/desired README, NoDSRForLocalPolicy)"},
		{name: "LoadBalancer", svc: web(typed(v1.ServiceTypeLoadBalancer, v1.ServiceExternalTrafficPolicyCluster)),
			slices: []*discoveryv1.EndpointSlice{twoV4},
			want: []wkFrontend{clusterIP(wkFlags{}, both...), nodePort(wkFlags{}, both...),
				external(docIngress, wkFlags{}, both...)}},
		{name: "LoadBalancer ipMode Proxy", svc: web(typed(v1.ServiceTypeLoadBalancer, v1.ServiceExternalTrafficPolicyCluster),
			func(s *v1.Service) { s.Status.LoadBalancer.Ingress[0].IPMode = ptr.To(v1.LoadBalancerIPModeProxy) }),
			slices: []*discoveryv1.EndpointSlice{twoV4},
			want:   []wkFrontend{clusterIP(wkFlags{}, both...), nodePort(wkFlags{}, both...)}},
		{name: "LoadBalancer externalTrafficPolicy Local", svc: web(typed(v1.ServiceTypeLoadBalancer, v1.ServiceExternalTrafficPolicyLocal)),
			slices: []*discoveryv1.EndpointSlice{twoV4},
			want: []wkFrontend{clusterIP(wkFlags{}, both...), nodePort(wkFlags{dsr: true}, local...),
				external(docIngress, wkFlags{dsr: true}, local...)}},
		{name: "LoadBalancer preserve-destination", svc: web(typed(v1.ServiceTypeLoadBalancer, v1.ServiceExternalTrafficPolicyCluster), annotated),
			slices: []*discoveryv1.EndpointSlice{twoV4},
			want: []wkFrontend{clusterIP(wkFlags{}, both...), nodePort(wkFlags{}, local...),
				external(docIngress, wkFlags{dsr: true, useMux: true, preserveDIP: true}, local...)}},
		{name: "LoadBalancer with health checks forwarded", cfg: func(c *desired.Config) {
			c.ForwardHealthCheckVIP = true
			c.HealthCheckGateway = map[intent.IPFamily]netip.Addr{intent.IPv4: netip.MustParseAddr("10.244.1.1")}
		}, svc: web(typed(v1.ServiceTypeLoadBalancer, v1.ServiceExternalTrafficPolicyLocal)),
			slices: []*discoveryv1.EndpointSlice{twoV4},
			want: []wkFrontend{clusterIP(wkFlags{}, both...), nodePort(wkFlags{dsr: true}, local...),
				external(docIngress, wkFlags{dsr: true}, local...),
				{vip: docIngress, proto: hnslb.ProtocolTCP, internal: 32000, external: 32000, backends: []string{"10.244.1.1"}}}},
		{name: "externalIPs", svc: web(func(s *v1.Service) { s.Spec.ExternalIPs = []string{docExternalIP} }),
			slices: []*discoveryv1.EndpointSlice{twoV4},
			want:   []wkFrontend{clusterIP(wkFlags{}, both...), external(docExternalIP, wkFlags{}, both...)}},
		{name: "externalIPs externalTrafficPolicy Local", svc: web(func(s *v1.Service) {
			s.Spec.ExternalIPs = []string{docExternalIP}
			s.Spec.ExternalTrafficPolicy = v1.ServiceExternalTrafficPolicyLocal
		}), slices: []*discoveryv1.EndpointSlice{twoV4},
			want: []wkFrontend{clusterIP(wkFlags{}, both...), external(docExternalIP, wkFlags{dsr: true}, local...)}},
		{name: "IPv6 only", svc: web(families(docClusterV6)), slices: []*discoveryv1.EndpointSlice{twoV6},
			want: []wkFrontend{{vip: docClusterV6, proto: hnslb.ProtocolTCP, internal: 8080, external: 80,
				flags: wkFlags{ipv6: true}, backends: []string{docLocalV6, docRemoteV6}}}},
		{name: "dual-stack PreferDualStack", svc: web(families(docClusterV4, docClusterV6)),
			slices: []*discoveryv1.EndpointSlice{twoV4, twoV6},
			want: []wkFrontend{clusterIP(wkFlags{}, both...),
				{vip: docClusterV6, proto: hnslb.ProtocolTCP, internal: 8080, external: 80,
					flags: wkFlags{ipv6: true}, backends: []string{docLocalV6, docRemoteV6}}}},
		{name: "dual-stack NodePort", svc: web(families(docClusterV4, docClusterV6), typed(v1.ServiceTypeNodePort, v1.ServiceExternalTrafficPolicyCluster)),
			slices: []*discoveryv1.EndpointSlice{twoV4, twoV6},
			want: []wkFrontend{clusterIP(wkFlags{}, both...), nodePort(wkFlags{}, both...),
				{vip: docClusterV6, proto: hnslb.ProtocolTCP, internal: 8080, external: 80,
					flags: wkFlags{ipv6: true}, backends: []string{docLocalV6, docRemoteV6}},
				nodePort(wkFlags{ipv6: true}, docLocalV6, docRemoteV6)}},
		{name: "overlay NodePort with --enable-dsr", mode: desired.Overlay, cfg: func(c *desired.Config) { c.EnableDSR = true },
			svc: web(typed(v1.ServiceTypeNodePort, v1.ServiceExternalTrafficPolicyCluster)), slices: []*discoveryv1.EndpointSlice{twoV4},
			want: []wkFrontend{
				{vip: docClusterV4, proto: hnslb.ProtocolTCP, internal: 8080, external: 80, flags: wkFlags{dsr: true}, backends: both},
				{proto: hnslb.ProtocolTCP, internal: 8080, external: 30080, flags: wkFlags{vipExternalIP: true, localRoutedVIP: true}, backends: both},
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mode := cmp.Or(tc.mode, desired.L2Bridge)
			cfg := docConfig(mode)
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			var in []*desired.EndpointSlice
			for _, s := range tc.slices {
				c := desired.SliceOf(s)
				in = append(in, &c)
			}
			r := desired.ForService(desired.ServiceInput{Service: tc.svc, Slices: in}, cfg)
			var got, want []string
			for i := range r.LBs {
				var ips []string
				for _, b := range r.LBs[i].Backends {
					ips = append(ips, b.IP)
				}
				got = append(got, docJSON(t, reconciler.BuildLB(&r.LBs[i], ips)))
			}
			for _, f := range tc.want {
				src := docSourceVIP
				if mode != desired.Overlay {
					// winkernel sends none on l2bridge; hnsproxy the node IP (proxier/desired README).
					src = docNodeIPv4
					if f.flags.ipv6 {
						src = docNodeIPv6
					}
				}
				want = append(want, docJSON(t, winkernelDocument(f, src)))
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("documents differ from winkernel's (%s):\n got %v\nwant %v", cmp.Or(tc.differs, "no documented difference"), got, want)
			}
		})
	}
}

// docJSON is the document as HNS receives it, backends in order.
func docJSON(t *testing.T, lb *hnslb.LoadBalancer) string {
	t.Helper()
	c := *lb
	c.HostComputeEndpoints = slices.Sorted(slices.Values(lb.HostComputeEndpoints))
	raw, err := json.Marshal(&c)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// TestRemoteEndpointDocumentsAreWinkernels: the endpoints hnsproxy makes
// in HNS, as winkernel's createEndpoint makes them for the same Service:
// a remote endpoint per remote backend (flag RemoteEndpoint, the MAC
// conjured from its IP, on overlay a ProviderAddress policy naming the
// backend's node); on overlay one per cluster IP (the host MAC, this node
// as provider address) and the local source-VIP endpoint (the host MAC, no
// policy). hnsproxy also names its remote endpoints (reliability.md,
// "Remote endpoints: a name instead of a declaration"); winkernel does not.
func TestRemoteEndpointDocumentsAreWinkernels(t *testing.T) {
	const hostMAC = "00-15-5d-00-00-01" // newSimCluster's for win-1
	pa := func(ip string) []hnslb.EndpointPolicy {
		return []hnslb.EndpointPolicy{{Type: hnslb.EndpointPolicyProviderAddress, Settings: json.RawMessage(`{"ProviderAddress":"` + ip + `"}`)}}
	}
	remote := func(ip, mac string, policies []hnslb.EndpointPolicy) hnslb.Endpoint {
		return hnslb.Endpoint{Name: "hnsproxy-remote-" + ip, IpConfigurations: []hnslb.IPConfig{{IpAddress: ip}}, MacAddress: mac,
			Flags: hnslb.EndpointFlagsRemoteEndpoint, Policies: policies, SchemaVersion: hnslb.V2}
	}
	for _, tc := range []struct {
		mode desired.NetworkMode
		want []hnslb.Endpoint
	}{
		{desired.L2Bridge, []hnslb.Endpoint{remote(pod2a, "02-11-0a-f4-02-0a", nil)}},
		{desired.Overlay, []hnslb.Endpoint{
			remote(pod2a, "02-11-0a-f4-02-0a", pa(ip2)),
			remote("10.96.0.10", hostMAC, pa(ip1)),
			{IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.1.2"}}, MacAddress: hostMAC, SchemaVersion: hnslb.V2},
		}},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			c := newSimCluster(t, clusterSpec{profile: "ws2022", mode: tc.mode, nodes: threeNodes()})
			c.apply(service("web", "10.96.0.10"), sliceOf("web", "web-1", discoveryv1.AddressTypeIPv4, readyEP(pod1a, "win-1"), readyEP(pod2a, "win-2")))
			c.converge()
			var got []string
			for _, e := range c.node("win-1").hns.Snapshot().Endpoints {
				if e.IP() == pod1a || e.IP() == pod1b { // the pods' own, the CNI's
					continue
				}
				e.ID, e.HostComputeNetwork = "", ""
				got = append(got, endpointJSON(t, e))
			}
			var want []string
			for _, e := range tc.want {
				want = append(want, endpointJSON(t, e))
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("endpoints differ from winkernel's:\n got %v\nwant %v", got, want)
			}
		})
	}
}

func endpointJSON(t *testing.T, e hnslb.Endpoint) string {
	t.Helper()
	raw, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}
