package desired

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

func dualStackSlices() []*discoveryv1.EndpointSlice {
	return []*discoveryv1.EndpointSlice{
		slice("web-v4", 8080, ep("10.1.0.3"), ep("10.1.0.2", local)),
		slice("web-v6", 8080, ep("fd01::3"), ep("fd01::2", local)),
	}
}

func TestDualStack(t *testing.T) {
	dual := clusterIPs("10.0.0.1", "fd00:96::1")
	v6both := []intent.Backend{localBE("fd01::2"), remote("fd01::3")}
	runServiceCases(t, []serviceCase{{
		name:   "a load balancer per family; IPv6 flag; endpoints by address type; node IP per family",
		svc:    service("web", dual, nodePorts(30080), externalIPs("2001:db8::5", "203.0.113.5")),
		slices: dualStackSlices(),
		want: []intent.LB{
			lb(nodePortKey(intent.IPv4, 30080), nodePort, 0, both...),
			lb(key("10.0.0.1", 80), 0, 0, both...),
			lb(key("203.0.113.5", 80), vipExt, 0, both...),
			lb(nodePortKey(intent.IPv6, 30080), nodePort, v6flag, v6both...),
			lb(key("2001:db8::5", 80), vipExt, v6flag, v6both...),
			lb(key("fd00:96::1", 80), 0, v6flag, v6both...),
		},
	}, {
		name:   "IPv6 single-stack with DSR and ETP=Local",
		svc:    service("web", clusterIPs("fd00:96::1"), nodePorts(30080), etpLocal(0)),
		slices: dualStackSlices(),
		cfg:    func(c *Config) { c.EnableDSR = true },
		want: []intent.LB{
			lb(nodePortKey(intent.IPv6, 30080), nodePort, v6flag|dsr, localBE("fd01::2")),
			lb(key("fd00:96::1", 80), 0, v6flag|dsr, v6both...),
		},
	}, {
		// winkernel's dual-stack mode runs the other family's proxier on
		// the loopback address when the Node lists none of it, and its
		// l2bridge load balancers carry no source VIP: the family is served.
		// A node port is not: without a VIP or a source VIP its family
		// could not be read back where HNS does not echo the IPv6 flag.
		name:   "l2bridge family without a node IP: served with no source VIP, but its node ports reported",
		svc:    service("web", dual, nodePorts(30080), externalIPs("2001:db8::5")),
		slices: dualStackSlices(),
		cfg:    func(c *Config) { delete(c.NodeIPs, intent.IPv6) },
		want: []intent.LB{
			lb(nodePortKey(intent.IPv4, 30080), nodePort, 0, both...),
			lb(key("10.0.0.1", 80), 0, 0, both...),
			noSourceVIP(lb(key("2001:db8::5", 80), vipExt, v6flag, v6both...)),
			noSourceVIP(lb(key("fd00:96::1", 80), 0, v6flag, v6both...)),
		},
		problems: ReasonIPFamilyUnsupported,
		check: func(t *testing.T, r ServiceResult) {
			if m := r.Problems[0].Message; !strings.Contains(m, "node ports not served in IPv6") || !strings.Contains(m, "fd00:96::1") {
				t.Errorf("problem %q", m)
			}
		},
	}, {
		name:   "l2bridge family without a node IP, no node port: nothing to report",
		svc:    service("web", dual),
		slices: dualStackSlices(),
		cfg:    func(c *Config) { delete(c.NodeIPs, intent.IPv6) },
		want: []intent.LB{
			lb(key("10.0.0.1", 80), 0, 0, both...),
			noSourceVIP(lb(key("fd00:96::1", 80), 0, v6flag, v6both...)),
		},
	}, {
		name: "l2bridge family without a node IP, a LoadBalancer Service allocating no node ports: nothing to report",
		svc: service("web", dual, loadBalancer(), func(s *v1.Service) {
			s.Spec.AllocateLoadBalancerNodePorts = ptr(false)
		}),
		slices: dualStackSlices(),
		cfg:    func(c *Config) { delete(c.NodeIPs, intent.IPv6) },
		want: []intent.LB{
			lb(key("10.0.0.1", 80), 0, 0, both...),
			noSourceVIP(lb(key("fd00:96::1", 80), 0, v6flag, v6both...)),
		},
	}, {
		name:     "overlay family without a node IP: skipped and reported",
		svc:      service("web", clusterIPs("10.0.0.1")),
		slices:   dualStackSlices(),
		cfg:      func(c *Config) { overlay(c); delete(c.NodeIPs, intent.IPv4) },
		want:     none,
		problems: ReasonIPFamilyUnsupported,
	}, {
		name:     "IPv6 on HNS without IPv6: skipped and reported",
		svc:      service("web", dual),
		slices:   dualStackSlices(),
		cfg:      oldHNS,
		want:     []intent.LB{lb(key("10.0.0.1", 80), 0, 0, both...)},
		problems: ReasonIPFamilyUnsupported,
	}, {
		name:     "IPv6 on overlay: skipped and reported",
		svc:      service("web", dual),
		slices:   dualStackSlices(),
		cfg:      overlay,
		problems: ReasonIPFamilyUnsupported,
		check: func(t *testing.T, r ServiceResult) {
			if len(r.LBs) != 1 || r.LBs[0].Key.Family != intent.IPv4 {
				t.Errorf("got %s", dump(r))
			}
		},
	}, {
		name:     "only unsupported families: nothing but the problem",
		svc:      service("web", clusterIPs("fd00:96::1"), externalIPs("2001:db8::5")),
		slices:   dualStackSlices(),
		cfg:      oldHNS,
		want:     none,
		problems: ReasonIPFamilyUnsupported,
	}, {
		name:     "external and ingress IPs of a family the Service lacks: reported",
		svc:      service("web", externalIPs("2001:db8::5"), loadBalancer(ingressIP("2001:db8::7"))),
		slices:   dualStackSlices(),
		want:     []intent.LB{lb(key("10.0.0.1", 80), 0, 0, both...)},
		problems: ReasonIPFamilyMismatch + "," + ReasonIPFamilyMismatch,
	}, {
		name:     "external IP of an unserved family: only the family problem",
		svc:      service("web", dual, externalIPs("2001:db8::5")),
		slices:   dualStackSlices(),
		cfg:      oldHNS,
		want:     []intent.LB{lb(key("10.0.0.1", 80), 0, 0, both...)},
		problems: ReasonIPFamilyUnsupported,
	}, {
		// Nothing is programmed on it, so nothing is open on it.
		name:     "ingress IP of an unserved family with its family's source ranges: only the family problem",
		svc:      service("web", dual, loadBalancer(ingressIP("2001:db8::7")), sourceRanges("2001:db8::/64")),
		slices:   dualStackSlices(),
		cfg:      oldHNS,
		want:     []intent.LB{lb(key("10.0.0.1", 80), 0, 0, both...)},
		problems: ReasonIPFamilyUnsupported,
	}, {
		name:     "external IP of an unserved family that is the node's address, with --refuse-node-external-ips: only the family problem",
		svc:      service("web", dual, externalIPs(nodeIPv6)),
		slices:   dualStackSlices(),
		cfg:      func(c *Config) { oldHNS(c); c.RefuseExternalIPsOnNodeAddresses = true },
		want:     []intent.LB{lb(key("10.0.0.1", 80), 0, 0, both...)},
		problems: ReasonIPFamilyUnsupported,
	}})
}

// overlay: this node 192.168.0.10 hosts 10.1.0.0/24, source VIP 10.1.0.250;
// node-b (192.168.0.11) hosts 10.1.1.0/24 inside a broader 10.1.0.0/16 route to 192.168.0.12.
func overlay(c *Config) {
	c.Mode = Overlay
	c.SourceVIP = map[intent.IPFamily]netip.Addr{intent.IPv4: addr("10.1.0.250")}
	c.HostMAC = "00-15-5d-00-00-01"
	c.RemoteSubnets = NewRemoteSubnetIndex([]RemoteSubnet{
		{Prefix: netip.MustParsePrefix("10.1.0.0/16"), ProviderAddress: addr("192.168.0.12")},
		{Prefix: netip.MustParsePrefix("10.1.1.0/24"), ProviderAddress: addr("192.168.0.11")},
		{}, // an unusable route is ignored
	})
}

func TestOverlay(t *testing.T) {
	pa := func(ip, pa string) intent.Backend {
		b := remote(ip)
		b.ProviderAddress = pa
		return b
	}
	withSrc := func(l intent.LB, src string) intent.LB { l.SourceVIP = src; return l }
	vipEP := []intent.RemoteEndpoint{{IP: "10.0.0.1", MAC: "00-15-5d-00-00-01", ProviderAddress: nodeIPv4}}
	runServiceCases(t, []serviceCase{{
		name: "remote backends carry their node's PA (longest prefix); source VIP; service-VIP endpoint",
		svc:  service("web"),
		slices: []*discoveryv1.EndpointSlice{slice("web-1", 8080,
			ep("10.1.0.2", local), ep("10.1.1.3"), ep("10.1.5.4"))},
		cfg: overlay,
		want: []intent.LB{withSrc(lb(key("10.0.0.1", 80), 0, 0,
			localBE("10.1.0.2"), pa("10.1.1.3", "192.168.0.11"), pa("10.1.5.4", "192.168.0.12")), "10.1.0.250")},
		check: func(t *testing.T, r ServiceResult) {
			if !equalEndpoints(r.ServiceVIPEndpoints, vipEP) {
				t.Errorf("service VIP endpoints = %+v", r.ServiceVIPEndpoints)
			}
		},
	}, {
		name:   "a backend outside every remote subnet: node IP as PA and source VIP, reported as Normal",
		svc:    service("web"),
		slices: []*discoveryv1.EndpointSlice{slice("web-1", 8080, ep("10.1.1.3"), ep("203.0.113.9"))},
		cfg:    overlay,
		want: []intent.LB{withSrc(lb(key("10.0.0.1", 80), 0, 0,
			pa("10.1.1.3", "192.168.0.11"), pa("203.0.113.9", nodeIPv4)), nodeIPv4)},
		problems: ReasonProviderAddressUnknown,
		check: func(t *testing.T, r ServiceResult) {
			if r.Problems[0].Warning {
				t.Error("a public backend is normal, not a warning")
			}
			if !slices.Equal(r.NoProviderAddress, []netip.Addr{netip.MustParseAddr("203.0.113.9")}) {
				t.Errorf("NoProviderAddress = %v, want the public backend alone", r.NoProviderAddress)
			}
		},
	}, {
		name:   "a backend that is another node's address (host network): node IP as source VIP",
		svc:    service("web"),
		slices: []*discoveryv1.EndpointSlice{slice("web-1", 8080, ep("192.168.0.11"))},
		cfg:    overlay,
		want: []intent.LB{withSrc(lb(key("10.0.0.1", 80), 0, 0,
			pa("192.168.0.11", "192.168.0.11")), nodeIPv4)},
	}, {
		name:     "source VIP chosen per load balancer: ETP=Local NodePort keeps the source VIP",
		svc:      service("web", nodePorts(30080), etpLocal(0)),
		slices:   []*discoveryv1.EndpointSlice{slice("web-1", 8080, ep("10.1.0.2", local), ep("203.0.113.9"))},
		cfg:      overlay,
		problems: ReasonProviderAddressUnknown,
		check: func(t *testing.T, r ServiceResult) {
			if got := lbByKey(t, r, nodePortKey(intent.IPv4, 30080)).SourceVIP; got != "10.1.0.250" {
				t.Errorf("NodePort source VIP = %s", got)
			}
			if got := lbByKey(t, r, key("10.0.0.1", 80)).SourceVIP; got != nodeIPv4 {
				t.Errorf("ClusterIP source VIP = %s", got)
			}
		},
	}, {
		name:   "overlay without a source VIP configured: node IP (Validate reports it)",
		svc:    service("web"),
		slices: []*discoveryv1.EndpointSlice{slice("web-1", 8080, ep("10.1.1.3"))},
		cfg:    func(c *Config) { overlay(c); c.SourceVIP = nil },
		want:   []intent.LB{lb(key("10.0.0.1", 80), 0, 0, pa("10.1.1.3", "192.168.0.11"))},
	}, {
		name:     "service-VIP endpoint only with a servable port",
		svc:      service("web", ports(v1.ServicePort{Name: "sig", Port: 9, Protocol: v1.ProtocolSCTP})),
		cfg:      overlay,
		want:     none,
		problems: ReasonUnsupportedProtocol,
		check: func(t *testing.T, r ServiceResult) {
			if r.ServiceVIPEndpoints != nil {
				t.Errorf("service VIP endpoints = %+v", r.ServiceVIPEndpoints)
			}
		},
	}, {
		name:   "l2bridge: node IP as source VIP, no PA, no service-VIP endpoint",
		svc:    service("web"),
		slices: []*discoveryv1.EndpointSlice{slice("web-1", 8080, ep("10.1.1.3"))},
		cfg:    func(c *Config) { overlay(c); c.Mode = L2Bridge },
		want:   []intent.LB{lb(key("10.0.0.1", 80), 0, 0, remote("10.1.1.3"))},
		check: func(t *testing.T, r ServiceResult) {
			if r.ServiceVIPEndpoints != nil {
				t.Errorf("service VIP endpoints = %+v", r.ServiceVIPEndpoints)
			}
		},
	}})
}

func equalEndpoints(a, b []intent.RemoteEndpoint) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestBackendCap(t *testing.T) {
	var eps []discoveryv1.Endpoint
	for _, ip := range []string{"10.1.0.2", "10.1.0.3", "10.1.0.4", "10.1.0.5", "10.1.0.6", "10.1.0.7"} {
		eps = append(eps, ep(ip))
	}
	eps = append(eps, ep("10.1.0.9", local))
	svc := service("web", nodePorts(30080))
	in := ServiceInput{Service: svc, Slices: slicesOf(slice("web-1", 8080, eps...))}

	cfg := config()
	cfg.MaxBackends = 3
	r := ForService(in, cfg)
	if r.Truncated != 4 || reasons(r.Problems) != ReasonBackendsTruncated {
		t.Fatalf("truncated = %d, problems %s", r.Truncated, reasons(r.Problems))
	}
	cluster := lbByKey(t, r, key("10.0.0.1", 80))
	if len(cluster.Backends) != 3 {
		t.Fatalf("backends = %s", backendIPs(cluster))
	}
	if !cluster.Backends[2].Local || cluster.Backends[2].IP != "10.1.0.9" {
		t.Errorf("the local endpoint must be kept first: %s", backendIPs(cluster))
	}
	for i := 1; i < len(cluster.Backends); i++ {
		if intent.CompareIPs(cluster.Backends[i-1].IP, cluster.Backends[i].IP) >= 0 {
			t.Errorf("backends not sorted: %s", backendIPs(cluster))
		}
	}
	if np := lbByKey(t, r, nodePortKey(intent.IPv4, 30080)); backendIPs(np) != backendIPs(cluster) {
		t.Errorf("all load balancers of a Service keep the same subset: %s vs %s", backendIPs(np), backendIPs(cluster))
	}

	// Truncated is the most any load balancer left out: an ETP=Local node
	// port, made after the cluster IP, holds the one local endpoint and
	// fits the cap; the cluster IP's four left out are still reported.
	etp := ServiceInput{Service: service("web", nodePorts(30080), etpLocal(0)), Slices: in.Slices}
	if r := ForService(etp, cfg); r.Truncated != 4 || !hasReason(r.Problems, ReasonBackendsTruncated) {
		t.Errorf("ETP=Local: truncated = %d, problems %s; want 4 and %s", r.Truncated, reasons(r.Problems), ReasonBackendsTruncated)
	}

	// The cap defaults to the HNS build's.
	cfg = config()
	cfg.Features = hnslb.FeaturesFor(hnslb.Version{Major: 10, Minor: 2}) // 64
	if r := ForService(in, cfg); r.Truncated != 0 {
		t.Errorf("7 endpoints under a 64 cap truncated %d", r.Truncated)
	}
	cfg.Features.MaxBackends = 5
	if r := ForService(in, cfg); r.Truncated != 2 {
		t.Errorf("Features cap 5: truncated %d", r.Truncated)
	}
	cfg.Features.MaxBackends = 0
	if r := ForService(in, cfg); r.Truncated != 0 || len(r.LBs[0].Backends) != 7 {
		t.Errorf("no cap: truncated %d", r.Truncated)
	}
}

func TestInvalidInput(t *testing.T) {
	runServiceCases(t, []serviceCase{{
		name:     "invalid cluster IP: nothing",
		svc:      service("web", clusterIPs("not-an-ip")),
		slices:   twoEndpoints(),
		want:     none,
		problems: ReasonInvalidIP,
	}, {
		// The API refuses it; kube-proxy (GetClusterIPByFamily) serves a
		// family's first cluster IP, and so is only that one a cluster IP
		// another Service's external IP may not take.
		name:   "two cluster IPs of one family: the first is the family's",
		svc:    service("web", clusterIPs("10.0.0.1", "10.0.0.2")),
		slices: twoEndpoints(),
		want:   []intent.LB{lb(key("10.0.0.1", 80), 0, 0, both...)},
		check: func(t *testing.T, r ServiceResult) {
			if !slices.Equal(r.ClusterIPs, []string{"10.0.0.1"}) {
				t.Errorf("ClusterIPs = %v, want [10.0.0.1]", r.ClusterIPs)
			}
		},
	}, {
		name:     "invalid external and ingress IPs are skipped",
		svc:      service("web", externalIPs("300.1.1.1", "fe80::1%eth0"), loadBalancer(ingressIP("::ffff:1.2.3.4"))),
		slices:   twoEndpoints(),
		want:     []intent.LB{lb(key("10.0.0.1", 80), 0, 0, both...)},
		problems: ReasonInvalidIP + "," + ReasonInvalidIP + "," + ReasonInvalidIP,
	}, {
		name: "endpoints with unusable addresses are skipped and counted",
		svc:  service("web"),
		slices: []*discoveryv1.EndpointSlice{slice("web-1", 8080,
			ep("bogus"), ep("fd01::2"), discoveryv1.Endpoint{}, ep("0.0.0.0"), ep("10.1.0.3"))},
		want:     []intent.LB{lb(key("10.0.0.1", 80), 0, 0, remote("10.1.0.3"))},
		problems: ReasonInvalidEndpoint,
		check: func(t *testing.T, r ServiceResult) {
			if r.Problems[0].Message != "4 endpoints have no usable address and are ignored" {
				t.Errorf("message = %q", r.Problems[0].Message)
			}
		},
	}, {
		name: "a slice port without a number is skipped and reported",
		svc:  service("web"),
		slices: []*discoveryv1.EndpointSlice{
			sliceWithPorts("web-1", []discoveryv1.EndpointPort{{Name: ptr("http")}}, ep("10.1.0.4")),
			slice("web-2", 8080, ep("10.1.0.3")),
		},
		want:     []intent.LB{lb(key("10.0.0.1", 80), 0, 0, remote("10.1.0.3"))},
		problems: ReasonInvalidEndpoint,
	}, {
		name: "a slice port 0 is no port: skipped and reported",
		svc:  service("web"),
		slices: []*discoveryv1.EndpointSlice{
			slice("web-1", 0, ep("10.1.0.4")),
			slice("web-2", 8080, ep("10.1.0.3")),
		},
		want:     []intent.LB{lb(key("10.0.0.1", 80), 0, 0, remote("10.1.0.3"))},
		problems: ReasonInvalidEndpoint,
	}, {
		name:     "invalid Service ports are skipped",
		svc:      service("web", ports(tcpPort("zero", 0), tcpPort("big", 70000), tcpPort("http", 80))),
		slices:   twoEndpoints(),
		want:     []intent.LB{lb(key("10.0.0.1", 80), 0, 0, both...)},
		problems: ReasonInvalidPort + "," + ReasonInvalidPort,
	}, {
		name:     "invalid node port: the ClusterIP load balancer stays",
		svc:      service("web", nodePorts(70000)),
		slices:   twoEndpoints(),
		want:     []intent.LB{lb(key("10.0.0.1", 80), 0, 0, both...)},
		problems: ReasonInvalidPort,
	}, {
		name:   "node port on a ClusterIP Service is ignored",
		svc:    service("web", func(s *v1.Service) { s.Spec.Ports[0].NodePort = 30080 }),
		slices: twoEndpoints(),
		want:   []intent.LB{lb(key("10.0.0.1", 80), 0, 0, both...)},
	}, {
		name: "nil Service",
		want: none,
	}})
}

// TestNoLocalEndpointsPerFamily: each served family counts apart, as
// kube-proxy's proxier per family does.
func TestNoLocalEndpointsPerFamily(t *testing.T) {
	remoteOnly := []*discoveryv1.EndpointSlice{
		slice("web-v4", 8080, ep("10.1.0.3")),
		slice("web-v6", 8080, ep("fd01::3")),
	}
	runServiceCases(t, []serviceCase{{
		name:   "ITP=Local and ETP=Local, remote endpoints in both families",
		svc:    service("web", clusterIPs("10.0.0.1", "fd00:96::1"), nodePorts(30080), itpLocal, etpLocal(0)),
		slices: remoteOnly,
		check: func(t *testing.T, r ServiceResult) {
			if r.NoLocalInternal != 2 || r.NoLocalExternal != 2 {
				t.Errorf("NoLocalInternal, NoLocalExternal = %d, %d; want 2, 2", r.NoLocalInternal, r.NoLocalExternal)
			}
		},
	}, {
		// kube-proxy's CategorizeEndpoints: hasAnyEndpoints counts
		// serving-terminating endpoints anywhere, not ready ones only.
		name:   "ITP=Local and ETP=Local, remote endpoints all serving-terminating: still counted",
		svc:    service("web", nodePorts(30080), itpLocal, etpLocal(0)),
		slices: []*discoveryv1.EndpointSlice{slice("web-v4", 8080, ep("10.1.0.3", servingTerminating))},
		check: func(t *testing.T, r ServiceResult) {
			if r.NoLocalInternal != 1 || r.NoLocalExternal != 1 || len(r.LBs) != 0 {
				t.Errorf("NoLocalInternal, NoLocalExternal = %d, %d; want 1, 1\n%s", r.NoLocalInternal, r.NoLocalExternal, dump(r))
			}
		},
	}, {
		name:   "ITP=Local, only a non-serving endpoint: the Service has none, so nothing is counted",
		svc:    service("web", itpLocal),
		slices: []*discoveryv1.EndpointSlice{slice("web-v4", 8080, ep("10.1.0.3", notReady), ep("10.1.0.4", local, goneTerminating))},
		check: func(t *testing.T, r ServiceResult) {
			if r.NoLocalInternal != 0 || r.NoLocalExternal != 0 {
				t.Errorf("NoLocalInternal, NoLocalExternal = %d, %d; want 0, 0", r.NoLocalInternal, r.NoLocalExternal)
			}
		},
	}, {
		name:   "a local endpoint in one family only",
		svc:    service("web", clusterIPs("10.0.0.1", "fd00:96::1"), itpLocal),
		slices: []*discoveryv1.EndpointSlice{slice("web-v4", 8080, ep("10.1.0.3", local)), slice("web-v6", 8080, ep("fd01::3"))},
		check: func(t *testing.T, r ServiceResult) {
			if r.NoLocalInternal != 1 || r.NoLocalExternal != 0 {
				t.Errorf("NoLocalInternal, NoLocalExternal = %d, %d; want 1, 0", r.NoLocalInternal, r.NoLocalExternal)
			}
		},
	}})
}

func noSourceVIP(lb intent.LB) intent.LB {
	lb.SourceVIP = ""
	return lb
}

// TestHealthCheckCountsLocalEndpointsPerFamily: kube-proxy runs a proxier,
// with its own health check server, per IP family, each counting that
// family's local ready endpoints (EndpointsMap.LocalReadyEndpoints): a
// dual-stack pod is one endpoint in each, not two in one.
func TestHealthCheckCountsLocalEndpointsPerFamily(t *testing.T) {
	dualLB := func(opts ...svcOpt) *v1.Service {
		return service("web", append([]svcOpt{clusterIPs("10.0.0.1", "fd00:96::1"), nodePorts(30080),
			loadBalancer(ingressIP("198.51.100.7")), etpLocal(32000)}, opts...)...)
	}
	want := func(hc HealthCheck) func(*testing.T, ServiceResult) {
		return func(t *testing.T, r ServiceResult) {
			t.Helper()
			if r.HealthCheck == nil || *r.HealthCheck != hc {
				t.Errorf("health check = %+v, want %+v", r.HealthCheck, hc)
			}
		}
	}
	runServiceCases(t, []serviceCase{{
		name:   "one dual-stack local pod: one endpoint in each family",
		svc:    dualLB(),
		slices: dualStackSlices(),
		check:  want(HealthCheck{NodePort: 32000, LocalIPv4: 1, LocalIPv6: 1}),
	}, {
		name: "local endpoints in IPv6 only",
		svc:  dualLB(),
		slices: []*discoveryv1.EndpointSlice{
			slice("web-v4", 8080, ep("10.1.0.3")),
			slice("web-v6", 8080, ep("fd01::2", local), ep("fd01::4", local)),
		},
		check: want(HealthCheck{NodePort: 32000, LocalIPv6: 2}),
	}})
}
