package desired

import (
	"fmt"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

const (
	vipExt   = hnslb.PortMappingFlagsVipExternalIP
	nodePort = hnslb.PortMappingFlagsVipExternalIP | hnslb.PortMappingFlagsLocalRoutedVIP
	dsr      = hnslb.LoadBalancerFlagsDSR
	v6flag   = hnslb.LoadBalancerFlagsIPv6
	owner    = "ns/web:http"
)

// twoEndpoints: 10.1.0.2 on this node, 10.1.0.3 elsewhere, target port 8080.
func twoEndpoints() []*discoveryv1.EndpointSlice {
	return []*discoveryv1.EndpointSlice{slice("web-1", 8080, ep("10.1.0.3"), ep("10.1.0.2", local))}
}

func lb(k intent.LBKey, pf hnslb.PortMappingFlags, f hnslb.LoadBalancerFlags, bes ...intent.Backend) intent.LB {
	src := nodeIPv4
	if k.Family == intent.IPv6 {
		src = nodeIPv6
	}
	return intent.LB{Key: k, SourceVIP: src, InternalPort: 8080, PortFlags: pf, Flags: f, Backends: bes, Owner: owner, Origin: originOf(k.VIP)}
}

// originOf follows the tests' address plan: node ports have no VIP, external
// IPs are in 203.0.113.0/24 or 2001:db8::5, ingress IPs in 198.51.100.0/24 or
// 2001:db8::7, everything else is a cluster IP.
func originOf(vip string) intent.Origin {
	switch {
	case vip == "":
		return intent.OriginNodePort
	case strings.HasPrefix(vip, "203.0.113.") || vip == "2001:db8::5":
		return intent.OriginExternalIP
	case strings.HasPrefix(vip, "198.51.100.") || vip == "2001:db8::7":
		return intent.OriginIngress
	}
	return intent.OriginClusterIP
}

var (
	both      = []intent.Backend{localBE("10.1.0.2"), remote("10.1.0.3")}
	localOnly = []intent.Backend{localBE("10.1.0.2")}
)

type serviceCase struct {
	name   string
	svc    *v1.Service
	slices []*discoveryv1.EndpointSlice
	cfg    func(*Config)
	// want, when non-nil, is the exact list of load balancers ("none" cases use empty).
	want []intent.LB
	// problems is the exact list of problem reasons, in order.
	problems string
	check    func(t *testing.T, r ServiceResult)
}

func runServiceCases(t *testing.T, cases []serviceCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config()
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			r := ForService(ServiceInput{Service: tc.svc, Slices: slicesOf(tc.slices...)}, cfg)
			if tc.want != nil && !reflect.DeepEqual(nonNil(r.LBs), tc.want) {
				t.Errorf("load balancers:\n got %s\nwant %s", dump(r), dump(ServiceResult{LBs: tc.want}))
			}
			if got := reasons(r.Problems); got != tc.problems {
				t.Errorf("problems = %q, want %q (%+v)", got, tc.problems, r.Problems)
			}
			if tc.check != nil {
				tc.check(t, r)
			}
		})
	}
}

func nonNil(lbs []intent.LB) []intent.LB {
	if lbs == nil {
		return []intent.LB{}
	}
	return lbs
}

var none = []intent.LB{}

func TestServiceKinds(t *testing.T) {
	runServiceCases(t, []serviceCase{{
		name:   "ClusterIP: one load balancer per port, target port from the slice, backends sorted by IP",
		svc:    service("web"),
		slices: twoEndpoints(),
		want:   []intent.LB{lb(key("10.0.0.1", 80), 0, 0, both...)},
		check: func(t *testing.T, r ServiceResult) {
			if r.Name.String() != "ns/web" || !r.Created.Equal(baseTime) {
				t.Errorf("identity = %s %s", r.Name, r.Created)
			}
			if r.HealthCheck != nil || r.ServiceVIPEndpoints != nil {
				t.Errorf("unexpected health check %v or VIP endpoints %v", r.HealthCheck, r.ServiceVIPEndpoints)
			}
		},
	}, {
		name:   "ClusterIP DSR with --enable-dsr",
		svc:    service("web"),
		slices: twoEndpoints(),
		cfg:    func(c *Config) { c.EnableDSR = true },
		want:   []intent.LB{lb(key("10.0.0.1", 80), 0, dsr, both...)},
	}, {
		name:   "--enable-dsr on HNS without DSR: no DSR flag",
		svc:    service("web"),
		slices: twoEndpoints(),
		cfg:    func(c *Config) { c.EnableDSR = true; oldHNS(c) },
		want:   []intent.LB{lb(key("10.0.0.1", 80), 0, 0, both...)},
	}, {
		name:   "NodePort: no VIP, LocalRoutedVIP + VipExternalIP, all backends",
		svc:    service("web", nodePorts(30080)),
		slices: twoEndpoints(),
		want: []intent.LB{
			lb(nodePortKey(intent.IPv4, 30080), nodePort, 0, both...),
			lb(key("10.0.0.1", 80), 0, 0, both...),
		},
	}, {
		name:   "each external IP: VipExternalIP",
		svc:    service("web", externalIPs("203.0.113.6", "203.0.113.5", "203.0.113.6")),
		slices: twoEndpoints(),
		want: []intent.LB{
			lb(key("10.0.0.1", 80), 0, 0, both...),
			lb(key("203.0.113.5", 80), vipExt, 0, both...),
			lb(key("203.0.113.6", 80), vipExt, 0, both...),
		},
	}, {
		name:   "AllowServiceExternalIPs=false: external IPs not programmed, ingress IPs still are",
		svc:    service("web", externalIPs("203.0.113.5"), loadBalancer(ingressIP("198.51.100.7"))),
		slices: twoEndpoints(),
		cfg:    func(c *Config) { c.IgnoreExternalIPs = true },
		want: []intent.LB{
			lb(key("10.0.0.1", 80), 0, 0, both...),
			lb(key("198.51.100.7", 80), vipExt, 0, both...),
		},
	}, {
		// An ipMode this version does not know (a newer apiserver's) is
		// not VIP, so kube-proxy 1.37 (proxyutil.IsVIPMode) skips it too.
		name: "each ingress IP; hostname-only, ipMode Proxy and unknown ipMode ingress skipped",
		svc: service("web", nodePorts(30080), loadBalancer(
			ingressIP("198.51.100.7"),
			v1.LoadBalancerIngress{Hostname: "lb.example.com"},
			v1.LoadBalancerIngress{IP: "198.51.100.8", IPMode: ptr(v1.LoadBalancerIPModeProxy)},
			v1.LoadBalancerIngress{IP: "198.51.100.9", IPMode: ptr(v1.LoadBalancerIPModeVIP)},
			v1.LoadBalancerIngress{IP: "198.51.100.10", IPMode: ptr(v1.LoadBalancerIPMode("FutureMode"))},
		)),
		slices: twoEndpoints(),
		want: []intent.LB{
			lb(nodePortKey(intent.IPv4, 30080), nodePort, 0, both...),
			lb(key("10.0.0.1", 80), 0, 0, both...),
			lb(key("198.51.100.7", 80), vipExt, 0, both...),
			lb(key("198.51.100.9", 80), vipExt, 0, both...),
		},
	}, {
		name: "TCP and UDP ports; SCTP is reported and gets no load balancer",
		svc: service("web", ports(tcpPort("dns-tcp", 53), udpPort("dns", 53),
			v1.ServicePort{Name: "sig", Port: 9, Protocol: v1.ProtocolSCTP})),
		slices: []*discoveryv1.EndpointSlice{sliceWithPorts("web-1", []discoveryv1.EndpointPort{
			slicePort("dns-tcp", 5353, v1.ProtocolTCP), slicePort("dns", 5353, v1.ProtocolUDP), slicePort("sig", 9, v1.ProtocolSCTP),
		}, ep("10.1.0.3"))},
		problems: ReasonUnsupportedProtocol,
		check: func(t *testing.T, r ServiceResult) {
			if len(r.LBs) != 2 {
				t.Fatalf("got %s", dump(r))
			}
			udp := intent.LBKey{Family: intent.IPv4, VIP: "10.0.0.1", Protocol: hnslb.ProtocolUDP, Port: 53}
			if got := lbByKey(t, r, udp); got.InternalPort != 5353 || got.Owner != "ns/web:dns" {
				t.Errorf("udp LB = %+v", got)
			}
			if got := lbByKey(t, r, key("10.0.0.1", 53)); got.InternalPort != 5353 || got.Owner != "ns/web:dns-tcp" {
				t.Errorf("tcp LB = %+v", got)
			}
		},
	}, {
		name: "unnamed port: owner names the port number",
		svc:  service("web", ports(v1.ServicePort{Port: 80})), // protocol defaulted to TCP
		slices: []*discoveryv1.EndpointSlice{sliceWithPorts("web-1",
			[]discoveryv1.EndpointPort{{Port: ptr(int32(8080))}}, ep("10.1.0.3"))},
		check: func(t *testing.T, r ServiceResult) {
			if got := lbByKey(t, r, key("10.0.0.1", 80)); got.Owner != "ns/web:80" || got.InternalPort != 8080 {
				t.Errorf("LB = %+v", got)
			}
		},
	}, {
		name:   "headless Service: nothing",
		svc:    service("web", clusterIPs(v1.ClusterIPNone)),
		slices: twoEndpoints(),
		want:   none,
	}, {
		name: "ExternalName Service: nothing",
		svc: service("web", func(s *v1.Service) {
			s.Spec.Type = v1.ServiceTypeExternalName
			s.Spec.ExternalName = "example.com"
		}),
		slices: twoEndpoints(),
		want:   none,
	}, {
		name:   "Service without selector still uses its slices",
		svc:    service("web", func(s *v1.Service) { s.Spec.Selector = nil }),
		slices: []*discoveryv1.EndpointSlice{slice("web-manual", 443, ep("203.0.113.50"))},
		check: func(t *testing.T, r ServiceResult) {
			if got := lbByKey(t, r, key("10.0.0.1", 80)); backendIPs(got) != "203.0.113.50" || got.InternalPort != 443 {
				t.Errorf("LB = %+v", got)
			}
		},
	}, {
		name: "no cluster IP allocated yet: nothing",
		svc:  service("web", func(s *v1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "", nil }),
		want: none,
	}, {
		name:   "legacy spec.clusterIP without clusterIPs",
		svc:    service("web", func(s *v1.Service) { s.Spec.ClusterIPs = nil }),
		slices: twoEndpoints(),
		want:   []intent.LB{lb(key("10.0.0.1", 80), 0, 0, both...)},
	}, {
		name: "no endpoints: no load balancers, no problem",
		svc:  service("web", nodePorts(30080)),
		want: none,
	}})
}

func TestSessionAffinity(t *testing.T) {
	withAffinity := func(f hnslb.Distribution) []intent.LB {
		l := lb(key("10.0.0.1", 80), 0, 0, both...)
		l.Distribution = f
		n := lb(nodePortKey(intent.IPv4, 30080), nodePort, 0, both...)
		n.Distribution = f
		return []intent.LB{n, l}
	}
	runServiceCases(t, []serviceCase{{
		name:   "ClientIP → SourceIP distribution on every load balancer",
		svc:    service("web", nodePorts(30080), affinity(10800)),
		slices: twoEndpoints(),
		want:   withAffinity(hnslb.DistributionSourceIP),
	}, {
		name:     "ClientIP with a non-default timeout: HNS has none, reported",
		svc:      service("web", nodePorts(30080), affinity(60)),
		slices:   twoEndpoints(),
		want:     withAffinity(hnslb.DistributionSourceIP),
		problems: ReasonSessionAffinityTimeout,
	}, {
		name:     "ClientIP on HNS without affinity: reported, no distribution",
		svc:      service("web", nodePorts(30080), affinity(10800)),
		slices:   twoEndpoints(),
		cfg:      oldHNS,
		want:     withAffinity(hnslb.DistributionNone),
		problems: ReasonSessionAffinityUnsupported,
	}, {
		// winkernel sets sessionAffinity on its ClusterIP, NodePort,
		// external IP and ingress IP load balancers and not on the health
		// check's (pkg/proxy/winkernel/loadbalancer.go).
		name: "ClientIP, dual-stack: every frontend of both families sticky, the health checks not",
		svc: service("web", clusterIPs("10.0.0.1", "fd00:96::1"), nodePorts(30080), affinity(10800),
			externalIPs("203.0.113.5", "2001:db8::5"), loadBalancer(ingressIP("198.51.100.7"), ingressIP("2001:db8::7"))),
		slices: dualStackSlices(),
		cfg: func(c *Config) {
			c.ForwardHealthCheckVIP = true
			c.HealthCheckGateway = map[intent.IPFamily]netip.Addr{intent.IPv4: addr("10.1.0.1"), intent.IPv6: addr("fd01::1")}
		},
		check: func(t *testing.T, r ServiceResult) {
			type frontend struct {
				fam    intent.IPFamily
				origin intent.Origin
			}
			sticky := map[frontend]bool{}
			health := 0
			for _, l := range r.LBs {
				if strings.HasSuffix(l.Owner, ":healthcheck") {
					health++
					if l.Distribution != hnslb.DistributionNone {
						t.Errorf("health check %s has distribution %d, want none", l.Key, l.Distribution)
					}
					continue
				}
				if l.Distribution != hnslb.DistributionSourceIP {
					t.Errorf("%s (%v) has distribution %d, want SourceIP", l.Key, l.Origin, l.Distribution)
				}
				sticky[frontend{l.Key.Family, l.Origin}] = true
			}
			for _, fam := range []intent.IPFamily{intent.IPv4, intent.IPv6} {
				for _, o := range []intent.Origin{intent.OriginClusterIP, intent.OriginNodePort, intent.OriginExternalIP, intent.OriginIngress} {
					if !sticky[frontend{fam, o}] {
						t.Errorf("no sticky %v load balancer in IPv%d: %s", o, fam, dump(r))
					}
				}
			}
			if health != 2 {
				t.Errorf("%d health-check load balancers, want one per family: %s", health, dump(r))
			}
		},
	}})
}

func ptr[T any](v T) *T { return &v }

func TestTrafficPolicies(t *testing.T) {
	lbSvc := func(opts ...svcOpt) *v1.Service {
		return service("web", append([]svcOpt{nodePorts(30080), loadBalancer(ingressIP("198.51.100.7")), externalIPs("203.0.113.5")}, opts...)...)
	}
	runServiceCases(t, []serviceCase{{
		name:   "ETP=Local: DSR and local backends on NodePort, external and ingress IPs; ClusterIP untouched",
		svc:    lbSvc(etpLocal(32000)),
		slices: twoEndpoints(),
		want: []intent.LB{
			lb(nodePortKey(intent.IPv4, 30080), nodePort, dsr, localOnly...),
			lb(key("10.0.0.1", 80), 0, 0, both...),
			lb(key("198.51.100.7", 80), vipExt, dsr, localOnly...),
			lb(key("203.0.113.5", 80), vipExt, dsr, localOnly...),
		},
		check: func(t *testing.T, r ServiceResult) {
			if r.HealthCheck == nil || *r.HealthCheck != (HealthCheck{NodePort: 32000, LocalIPv4: 1}) {
				t.Errorf("health check = %+v", r.HealthCheck)
			}
		},
	}, {
		name:   "ETP=Local without DSR: reported, backends stay local",
		svc:    lbSvc(etpLocal(32000)),
		slices: twoEndpoints(),
		cfg:    oldHNS,
		want: []intent.LB{
			lb(nodePortKey(intent.IPv4, 30080), nodePort, 0, localOnly...),
			lb(key("10.0.0.1", 80), 0, 0, both...),
			lb(key("198.51.100.7", 80), vipExt, 0, localOnly...),
			lb(key("203.0.113.5", 80), vipExt, 0, localOnly...),
		},
		problems: ReasonNoDSRForLocalPolicy,
	}, {
		name:   "ETP=Local with no local endpoint: external load balancers vanish, health check says 0",
		svc:    lbSvc(etpLocal(32000)),
		slices: []*discoveryv1.EndpointSlice{slice("web-1", 8080, ep("10.1.0.3"))},
		want:   []intent.LB{lb(key("10.0.0.1", 80), 0, 0, remote("10.1.0.3"))},
		check: func(t *testing.T, r ServiceResult) {
			if r.HealthCheck == nil || *r.HealthCheck != (HealthCheck{NodePort: 32000}) {
				t.Errorf("health check = %+v", r.HealthCheck)
			}
		},
	}, {
		// The EndpointSlice controller leaves a named target port out of the
		// slice of a pod that does not expose it.
		name: "ETP=Local whose only local endpoint carries no Service port: no external load balancer, health check says 0",
		svc:  lbSvc(etpLocal(32000)),
		slices: []*discoveryv1.EndpointSlice{
			sliceWithPorts("web-portless", []discoveryv1.EndpointPort{}, ep("10.1.0.2", local)),
			slice("web-1", 8080, ep("10.1.0.3")),
		},
		want: []intent.LB{lb(key("10.0.0.1", 80), 0, 0, remote("10.1.0.3"))},
		check: func(t *testing.T, r ServiceResult) {
			if r.HealthCheck == nil || *r.HealthCheck != (HealthCheck{NodePort: 32000}) {
				t.Errorf("health check = %+v", r.HealthCheck)
			}
		},
	}, {
		// The API server allocates one; kube-proxy logs an error without it.
		name:     "ETP=Local on a LoadBalancer Service without a health-check node port: served locally, no health check, reported",
		svc:      lbSvc(etpLocal(0)),
		slices:   twoEndpoints(),
		problems: ReasonInvalidPort,
		check: func(t *testing.T, r ServiceResult) {
			if r.HealthCheck != nil || len(r.LBs) != 4 {
				t.Errorf("health check = %+v, %d load balancers", r.HealthCheck, len(r.LBs))
			}
		},
	}, {
		name:     "ETP=Local on a LoadBalancer Service with a health-check node port out of range: reported",
		svc:      lbSvc(etpLocal(70000)),
		slices:   twoEndpoints(),
		problems: ReasonInvalidPort,
		check: func(t *testing.T, r ServiceResult) {
			if r.HealthCheck != nil {
				t.Errorf("health check = %+v", r.HealthCheck)
			}
		},
	}, {
		name:   "ETP=Local on a ClusterIP Service without external IPs means nothing",
		svc:    service("web", etpLocal(0)),
		slices: twoEndpoints(),
		want:   []intent.LB{lb(key("10.0.0.1", 80), 0, 0, both...)},
	}, {
		// Objects from before the API server cleared the field: the policy
		// is not counted, nor its missing DSR reported.
		name:   "ETP=Local on a ClusterIP Service without external IPs means nothing, on HNS without DSR and without a local endpoint too",
		svc:    service("web", etpLocal(0)),
		slices: []*discoveryv1.EndpointSlice{slice("web-1", 8080, ep("10.1.0.3"))},
		cfg:    oldHNS,
		want:   []intent.LB{lb(key("10.0.0.1", 80), 0, 0, remote("10.1.0.3"))},
		check: func(t *testing.T, r ServiceResult) {
			if r.NoLocalExternal != 0 {
				t.Errorf("NoLocalExternal = %d, want 0: the Service has no external traffic", r.NoLocalExternal)
			}
		},
	}, {
		// A ClusterIP Service with external IPs is externally accessible
		// (the API accepts the policy there): its external IPs keep the
		// traffic on this node's endpoints, with the client's address.
		name:   "ETP=Local on a ClusterIP Service with external IPs: external IPs local-only with DSR, cluster IP untouched",
		svc:    service("web", externalIPs("203.0.113.5"), etpLocal(0)),
		slices: twoEndpoints(),
		want: []intent.LB{
			lb(key("10.0.0.1", 80), 0, 0, both...),
			lb(key("203.0.113.5", 80), vipExt, dsr, localOnly...),
		},
	}, {
		name:   "ETP=Local on a NodePort Service: no health check (no health-check node port)",
		svc:    service("web", nodePorts(30080), etpLocal(0)),
		slices: twoEndpoints(),
		want: []intent.LB{
			lb(nodePortKey(intent.IPv4, 30080), nodePort, dsr, localOnly...),
			lb(key("10.0.0.1", 80), 0, 0, both...),
		},
		check: func(t *testing.T, r ServiceResult) {
			if r.HealthCheck != nil {
				t.Errorf("health check = %+v", r.HealthCheck)
			}
		},
	}, {
		name:   "ITP=Local: ClusterIP local-only, NodePort untouched",
		svc:    service("web", nodePorts(30080), itpLocal),
		slices: twoEndpoints(),
		want: []intent.LB{
			lb(nodePortKey(intent.IPv4, 30080), nodePort, 0, both...),
			lb(key("10.0.0.1", 80), 0, 0, localOnly...),
		},
	}, {
		name:   "ITP=Local and ETP=Local with only remote endpoints: nothing",
		svc:    service("web", nodePorts(30080), itpLocal, etpLocal(0)),
		slices: []*discoveryv1.EndpointSlice{slice("web-1", 8080, ep("10.1.0.3"))},
		want:   none,
	}, {
		name:   "preserve-destination: ingress UseMux+PreserveDIP+DSR local-only; NodePort local-only; external IP untouched",
		svc:    lbSvc(annotate(PreserveDestinationAnnotation, "true")),
		slices: twoEndpoints(),
		want: []intent.LB{
			lb(nodePortKey(intent.IPv4, 30080), nodePort, 0, localOnly...),
			lb(key("10.0.0.1", 80), 0, 0, both...),
			lb(key("198.51.100.7", 80), vipExt|hnslb.PortMappingFlagsUseMux|hnslb.PortMappingFlagsPreserveDIP, dsr, localOnly...),
			lb(key("203.0.113.5", 80), vipExt, 0, both...),
		},
	}, {
		name:   "preserve-destination other than \"true\" is ignored",
		svc:    lbSvc(annotate(PreserveDestinationAnnotation, "yes")),
		slices: twoEndpoints(),
		check: func(t *testing.T, r ServiceResult) {
			if got := lbByKey(t, r, key("198.51.100.7", 80)); got.PortFlags != vipExt || len(got.Backends) != 2 {
				t.Errorf("ingress LB = %+v", got)
			}
		},
	}, {
		name:     "preserve-destination without DSR: reported, no mux flags, still local",
		svc:      lbSvc(annotate(PreserveDestinationAnnotation, "true")),
		slices:   twoEndpoints(),
		cfg:      oldHNS,
		problems: ReasonNoDSRForPreserveDestination,
		check: func(t *testing.T, r ServiceResult) {
			got := lbByKey(t, r, key("198.51.100.7", 80))
			if got.PortFlags != vipExt || got.Flags != 0 || backendIPs(got) != "10.1.0.2" {
				t.Errorf("ingress LB = %+v", got)
			}
		},
	}})
}

func TestForwardHealthCheckVIP(t *testing.T) {
	gw := func(c *Config) {
		c.ForwardHealthCheckVIP = true
		c.HealthCheckGateway = map[intent.IPFamily]netip.Addr{intent.IPv4: addr("10.1.0.1")}
	}
	healthLB := func(port uint16, pf hnslb.PortMappingFlags) intent.LB {
		return intent.LB{
			Key: key("198.51.100.7", port), SourceVIP: nodeIPv4, InternalPort: port, PortFlags: pf,
			Backends: []intent.Backend{localBE("10.1.0.1")}, Owner: "ns/web:healthcheck", Origin: intent.OriginHealthCheck,
		}
	}
	udpSvc := service("web", ports(udpPort("http", 80)), loadBalancer(ingressIP("198.51.100.7")))
	runServiceCases(t, []serviceCase{{
		name:   "ingress IP: healthz port forwarded to the gateway endpoint",
		svc:    service("web", loadBalancer(ingressIP("198.51.100.7"))),
		slices: twoEndpoints(),
		cfg:    gw,
		want: []intent.LB{
			lb(key("10.0.0.1", 80), 0, 0, both...),
			lb(key("198.51.100.7", 80), vipExt, 0, both...),
			healthLB(10256, 0),
		},
	}, {
		name:   "UDP Service: the health check is still one TCP load balancer",
		svc:    udpSvc,
		slices: []*discoveryv1.EndpointSlice{sliceWithPorts("web-1", []discoveryv1.EndpointPort{slicePort("http", 8080, v1.ProtocolUDP)}, ep("10.1.0.3"))},
		cfg:    gw,
		check: func(t *testing.T, r ServiceResult) {
			if got := lbByKey(t, r, key("198.51.100.7", 10256)); !reflect.DeepEqual(got, healthLB(10256, 0)) {
				t.Errorf("health LB = %+v", got)
			}
		},
	}, {
		name:   "ETP=Local: the health-check node port; preserve-destination adds mux flags",
		svc:    service("web", loadBalancer(ingressIP("198.51.100.7")), etpLocal(32000), annotate(PreserveDestinationAnnotation, "true")),
		slices: twoEndpoints(),
		cfg:    gw,
		check: func(t *testing.T, r ServiceResult) {
			want := healthLB(32000, hnslb.PortMappingFlagsUseMux|hnslb.PortMappingFlagsPreserveDIP)
			if got := lbByKey(t, r, key("198.51.100.7", 32000)); !reflect.DeepEqual(got, want) {
				t.Errorf("health LB = %+v", got)
			}
		},
	}, {
		// As the ingress IP's own load balancer: no mux flags without DSR.
		name:     "preserve-destination on HNS without DSR: no mux flags on the health-check load balancer either",
		svc:      service("web", loadBalancer(ingressIP("198.51.100.7")), etpLocal(32000), annotate(PreserveDestinationAnnotation, "true")),
		slices:   twoEndpoints(),
		cfg:      func(c *Config) { oldHNS(c); gw(c) },
		problems: ReasonNoDSRForLocalPolicy + "," + ReasonNoDSRForPreserveDestination,
		check: func(t *testing.T, r ServiceResult) {
			if got := lbByKey(t, r, key("198.51.100.7", 32000)); !reflect.DeepEqual(got, healthLB(32000, 0)) {
				t.Errorf("health LB = %+v", got)
			}
		},
	}, {
		name:   "all endpoints terminating: no health-check load balancer, so probes fail",
		svc:    service("web", loadBalancer(ingressIP("198.51.100.7"))),
		slices: []*discoveryv1.EndpointSlice{slice("web-1", 8080, ep("10.1.0.3", servingTerminating))},
		cfg:    gw,
		check: func(t *testing.T, r ServiceResult) {
			if len(r.LBs) != 2 {
				t.Errorf("want ClusterIP and ingress only: %s", dump(r))
			}
		},
	}, {
		name:     "no gateway endpoint: reported",
		svc:      service("web", loadBalancer(ingressIP("198.51.100.7"))),
		slices:   twoEndpoints(),
		cfg:      func(c *Config) { c.ForwardHealthCheckVIP = true },
		problems: ReasonHealthCheckGatewayUnknown,
		check: func(t *testing.T, r ServiceResult) {
			if len(r.LBs) != 2 {
				t.Errorf("got %s", dump(r))
			}
		},
	}, {
		name:     "health-check port clashing with a Service port on the ingress IP: Service port wins, reported",
		svc:      service("web", ports(tcpPort("http", 10256)), loadBalancer(ingressIP("198.51.100.7"))),
		slices:   twoEndpoints(),
		cfg:      gw,
		problems: ReasonLoadBalancerConflict,
		check: func(t *testing.T, r ServiceResult) {
			if got := lbByKey(t, r, key("198.51.100.7", 10256)); got.Owner != owner {
				t.Errorf("LB = %+v", got)
			}
		},
	}, {
		name:   "forward-healthcheck-vip with healthz port 0 and no health-check node port: nothing extra",
		svc:    service("web", loadBalancer(ingressIP("198.51.100.7"))),
		slices: twoEndpoints(),
		cfg:    func(c *Config) { gw(c); c.HealthzPort = 0 },
		check: func(t *testing.T, r ServiceResult) {
			if len(r.LBs) != 2 {
				t.Errorf("got %s", dump(r))
			}
		},
	}})
}

func TestIntraServiceKeyClash(t *testing.T) {
	// The same IP as external IP and ingress IP: identical load balancers
	// merge silently under the better-ranked origin (ingress), different
	// ones keep the first (external IP) and report.
	same := service("web", externalIPs("198.51.100.7"), loadBalancer(ingressIP("198.51.100.7")))
	r := ForService(ServiceInput{Service: same, Slices: slicesOf(twoEndpoints()...)}, config())
	if len(r.LBs) != 2 || len(r.Problems) != 0 || lbByKey(t, r, key("198.51.100.7", 80)).Origin != intent.OriginIngress {
		t.Errorf("identical: %s", dump(r))
	}
	diff := service("web", externalIPs("198.51.100.7"), loadBalancer(ingressIP("198.51.100.7")),
		annotate(PreserveDestinationAnnotation, "true"))
	r = ForService(ServiceInput{Service: diff, Slices: slicesOf(twoEndpoints()...)}, config())
	if got := lbByKey(t, r, key("198.51.100.7", 80)); got.PortFlags != vipExt || reasons(r.Problems) != ReasonLoadBalancerConflict {
		t.Errorf("different: %s", dump(r))
	}
}

// TestFrontendsShareEqualBackends: a Service's frontends with the same
// backends share one slice of them; a frontend whose traffic policy picks
// other backends gets its own, and every one balances to what it should.
func TestFrontendsShareEqualBackends(t *testing.T) {
	eps := slice("web-a", 8080, ep("10.244.1.5", local), ep("10.244.2.6"), ep("10.244.2.7"))
	shared := ForService(ServiceInput{Service: service("web", nodePorts(30080), externalIPs("203.0.113.9")), Slices: slicesOf(eps)}, config())
	if len(shared.LBs) != 3 {
		t.Fatalf("got %d load balancers, want cluster IP, node port and external IP", len(shared.LBs))
	}
	for _, lb := range shared.LBs[1:] {
		if len(lb.Backends) != 3 || &lb.Backends[0] != &shared.LBs[0].Backends[0] {
			t.Errorf("%s: backends %v not the cluster IP's slice", lb.Key, lb.Backends)
		}
	}

	own := ForService(ServiceInput{Service: service("web", nodePorts(30080), externalIPs("203.0.113.9"), etpLocal(32000)), Slices: slicesOf(eps)}, config())
	var cluster, external []intent.Backend
	for _, lb := range own.LBs {
		switch lb.Origin {
		case intent.OriginClusterIP:
			cluster = lb.Backends
		case intent.OriginExternalIP:
			external = lb.Backends
		}
	}
	if len(cluster) != 3 || len(external) != 1 || !external[0].Local || &cluster[0] == &external[0] {
		t.Errorf("with a Local external policy: cluster IP backends %v, external IP backends %v; want all three, and the local one alone", cluster, external)
	}
}

// TestAnIPv6IngressIPsHealthCheckLoadBalancerIsIPv6: the health-check load
// balancer of an IPv6 ingress IP carries HNS's IPv6 flag, as every IPv6
// load balancer must (HNS refuses an IPv6 frontend without it), so cloud
// probes of an IPv6 ingress reach the health server too.
func TestAnIPv6IngressIPsHealthCheckLoadBalancerIsIPv6(t *testing.T) {
	cfg := config()
	cfg.ForwardHealthCheckVIP = true
	cfg.HealthCheckGateway = map[intent.IPFamily]netip.Addr{intent.IPv6: addr("fd00:1::1")}
	svc := service("web", clusterIPs("fd00:10::1"), loadBalancer(ingressIP("2001:db8::7")))
	r := ForService(ServiceInput{Service: svc, Slices: slicesOf(slice("web-1", 8080, ep("fd00:1::5")))}, cfg)
	if got := lbByKey(t, r, key("2001:db8::7", 10256)); got.Flags != hnslb.LoadBalancerFlagsIPv6 || backendIPs(got) != "fd00:1::1" {
		t.Errorf("health-check LB = %+v, want the IPv6 flag and the gateway endpoint", got)
	}
}

// TestAKeyClashPastSixteenLoadBalancersMergesWithTheClashingOne: a Service
// with many ports whose external IP is also its ingress IP (identical load
// balancers) merges each pair into one under the ingress origin with no
// conflict reported, however many load balancers came before, as with a
// few (TestIntraServiceKeyClash): past 16 the keys are found through a map.
func TestAKeyClashPastSixteenLoadBalancersMergesWithTheClashingOne(t *testing.T) {
	var ps []v1.ServicePort
	var sps []discoveryv1.EndpointPort
	for i := range 10 {
		name := fmt.Sprintf("p%d", i)
		ps = append(ps, tcpPort(name, int32(80+i)))
		sps = append(sps, slicePort(name, int32(8080+i), v1.ProtocolTCP))
	}
	svc := service("web", ports(ps...), externalIPs("198.51.100.7"), loadBalancer(ingressIP("198.51.100.7")))
	r := ForService(ServiceInput{Service: svc, Slices: slicesOf(sliceWithPorts("web-1", sps, ep("10.1.0.3")))}, config())
	if len(r.LBs) != 20 || len(r.Problems) != 0 {
		t.Fatalf("got %d load balancers, problems %q; want 20 (cluster IP and one merged external/ingress per port), none", len(r.LBs), reasons(r.Problems))
	}
	for i := range 10 {
		if got := lbByKey(t, r, key("198.51.100.7", uint16(80+i))); got.Origin != intent.OriginIngress || got.InternalPort != uint16(8080+i) {
			t.Errorf("port %d: %+v, want the ingress origin and internal port %d", 80+i, got, 8080+i)
		}
	}
}

// TestNodePortLocalBackendsAppliesOnOverlayOnly: the workaround for the
// overlay NodePort bug (Config.NodePortLocalBackends, on for every Windows
// Server 2022 build) keeps an l2bridge node's node ports balanced over
// every endpoint, and gives an overlay node's only its local ones.
func TestNodePortLocalBackendsAppliesOnOverlayOnly(t *testing.T) {
	eps := slice("web-1", 8080, ep("10.1.0.3"), ep("10.1.0.2", local))
	for _, c := range []struct {
		name string
		mode func(*Config)
		want string
	}{
		{"l2bridge", func(*Config) {}, "10.1.0.2,10.1.0.3"},
		{"overlay", func(c *Config) { overlay(c); delete(c.NodeIPs, intent.IPv6) }, "10.1.0.2"},
	} {
		cfg := config()
		c.mode(&cfg)
		cfg.NodePortLocalBackends = true
		r := ForService(ServiceInput{Service: service("web", nodePorts(30080)), Slices: slicesOf(eps)}, cfg)
		if got := backendIPs(lbByKey(t, r, nodePortKey(intent.IPv4, 30080))); got != c.want {
			t.Errorf("%s: node port backends %s, want %s", c.name, got, c.want)
		}
	}
}

// TestPortsUpTo65535AreServed: 65535 is a valid node port (with
// --service-node-port-range reaching it) and a valid health-check node
// port: the node port gets its load balancer, and the ingress IP's health
// check is forwarded on that port, not on the healthz port.
func TestPortsUpTo65535AreServed(t *testing.T) {
	cfg := config()
	cfg.ForwardHealthCheckVIP = true
	cfg.HealthCheckGateway = map[intent.IPFamily]netip.Addr{intent.IPv4: addr("10.1.0.1")}
	svc := service("web", loadBalancer(ingressIP("198.51.100.7")), nodePorts(65535), etpLocal(65535))
	r := ForService(ServiceInput{Service: svc, Slices: slicesOf(slice("web-1", 8080, ep("10.1.0.2", local)))}, cfg)
	lbByKey(t, r, key("198.51.100.7", 65535))
	svc = service("web", nodePorts(65535))
	r = ForService(ServiceInput{Service: svc, Slices: slicesOf(slice("web-1", 8080, ep("10.1.0.2", local)))}, config())
	if len(r.Problems) != 0 {
		t.Errorf("problems %q, want none", reasons(r.Problems))
	}
	lbByKey(t, r, nodePortKey(intent.IPv4, 65535))
}

// TestNodePortRemoteOnlyIsReportedOnlyWhereRemoteEndpointsServe: on an
// overlay node with the NodePort workaround, a Service whose only usable
// endpoints are on other nodes is reported (the OS bug may break its node
// port); one with no usable endpoint anywhere is not: there is nothing the
// bug could break, and the warning would send the operator after the wrong
// cause on every Windows node.
func TestNodePortRemoteOnlyIsReportedOnlyWhereRemoteEndpointsServe(t *testing.T) {
	for _, c := range []struct {
		name string
		eps  []discoveryv1.Endpoint
		want bool
	}{
		{"remote endpoints only", []discoveryv1.Endpoint{ep("10.1.0.3")}, true},
		{"no usable endpoint anywhere", []discoveryv1.Endpoint{ep("10.1.0.3", notReady), ep("10.1.0.2", local, notReady)}, false},
		{"a local endpoint", []discoveryv1.Endpoint{ep("10.1.0.3"), ep("10.1.0.2", local)}, false},
	} {
		cfg := config()
		overlay(&cfg)
		delete(cfg.NodeIPs, intent.IPv6)
		cfg.NodePortLocalBackends = true
		r := ForService(ServiceInput{Service: service("web", nodePorts(30080)), Slices: slicesOf(slice("web-1", 8080, c.eps...))}, cfg)
		if got := hasReason(r.Problems, ReasonNodePortRemoteOnly); got != c.want {
			t.Errorf("%s: problems %q; want %s reported: %v", c.name, reasons(r.Problems), ReasonNodePortRemoteOnly, c.want)
		}
	}
}
