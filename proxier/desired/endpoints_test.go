package desired

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/intent"
	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// backendsCase checks which backends each kind of load balancer gets.
type backendsCase struct {
	name   string
	svc    *v1.Service
	slices []*discoveryv1.EndpointSlice
	cfg    func(*Config)
	// cluster and nodePort are the expected backend IPs ("" = no load balancer).
	cluster, nodePort string
	problems          string
	check             func(t *testing.T, r ServiceResult)
}

// runBackendsCases runs backends cases as service cases whose check
// compares the ClusterIP and NodePort backends.
func runBackendsCases(t *testing.T, cases []backendsCase) {
	t.Helper()
	var scs []serviceCase
	for _, tc := range cases {
		svc := tc.svc
		if svc == nil {
			svc = service("web", nodePorts(30080))
		}
		scs = append(scs, serviceCase{name: tc.name, svc: svc, slices: tc.slices, cfg: tc.cfg, problems: tc.problems,
			check: func(t *testing.T, r ServiceResult) {
				got := map[intent.LBKey]string{}
				for _, lb := range r.LBs {
					got[lb.Key] = backendIPs(lb)
				}
				if c := got[key("10.0.0.1", 80)]; c != tc.cluster {
					t.Errorf("ClusterIP backends = %q, want %q\n%s", c, tc.cluster, dump(r))
				}
				if n := got[nodePortKey(intent.IPv4, 30080)]; n != tc.nodePort {
					t.Errorf("NodePort backends = %q, want %q\n%s", n, tc.nodePort, dump(r))
				}
				if tc.check != nil {
					tc.check(t, r)
				}
			}})
	}
	runServiceCases(t, scs)
}

func one(eps ...discoveryv1.Endpoint) []*discoveryv1.EndpointSlice {
	return []*discoveryv1.EndpointSlice{slice("web-1", 8080, eps...)}
}

func TestTerminatingEndpoints(t *testing.T) {
	runBackendsCases(t, []backendsCase{{
		name:     "ready endpoints only; not-ready ignored",
		slices:   one(ep("10.1.0.2"), ep("10.1.0.3", notReady), ep("10.1.0.4", servingTerminating)),
		cluster:  "10.1.0.2",
		nodePort: "10.1.0.2",
	}, {
		name:     "no ready endpoint: serving-terminating ones, never non-serving",
		slices:   one(ep("10.1.0.2", servingTerminating), ep("10.1.0.3", goneTerminating), ep("10.1.0.4", notReady), ep("10.1.0.5", servingTerminating)),
		cluster:  "10.1.0.2,10.1.0.5",
		nodePort: "10.1.0.2,10.1.0.5",
	}, {
		// The EndpointSlice controller keeps a publishNotReadyAddresses
		// Service's pods ready and says their readiness in serving alone:
		// ready is what counts, as in kube-proxy's Linux proxiers
		// (winkernel also asks for serving, and leaves such a pod out).
		name:     "publishNotReadyAddresses: ready but not serving is carried",
		slices:   one(ep("10.1.0.2", conditions(true, false, false)), ep("10.1.0.3")),
		cluster:  "10.1.0.2,10.1.0.3",
		nodePort: "10.1.0.2,10.1.0.3",
	}, {
		name:   "only non-serving endpoints: no load balancers",
		slices: one(ep("10.1.0.2", goneTerminating), ep("10.1.0.3", notReady)),
	}, {
		// KEP-1669's fallback is serving and terminating: an endpoint a
		// controller writes serving but neither ready nor terminating is no
		// pod on its way out.
		name:   "serving but neither ready nor terminating is no fallback",
		slices: one(ep("10.1.0.2", conditions(false, true, false)), ep("10.1.0.3", goneTerminating)),
	}, {
		name: "conditions unset mean ready and serving",
		slices: one(func() discoveryv1.Endpoint {
			e := ep("10.1.0.2")
			e.Conditions = discoveryv1.EndpointConditions{}
			return e
		}()),
		cluster:  "10.1.0.2",
		nodePort: "10.1.0.2",
	}, {
		name:     "ETP=Local falls back locally before and independently of the cluster-wide choice",
		svc:      service("web", nodePorts(30080), etpLocal(0)),
		slices:   one(ep("10.1.0.2", local, servingTerminating), ep("10.1.0.3")),
		cluster:  "10.1.0.3",
		nodePort: "10.1.0.2",
	}, {
		name:     "ETP=Local prefers local ready over local terminating",
		svc:      service("web", nodePorts(30080), etpLocal(0)),
		slices:   one(ep("10.1.0.2", local, servingTerminating), ep("10.1.0.4", local), ep("10.1.0.3")),
		cluster:  "10.1.0.3,10.1.0.4",
		nodePort: "10.1.0.4",
	}, {
		name:     "ITP=Local uses local terminating endpoints when no local one is ready",
		svc:      service("web", nodePorts(30080), itpLocal),
		slices:   one(ep("10.1.0.2", local, servingTerminating), ep("10.1.0.3")),
		cluster:  "10.1.0.2",
		nodePort: "10.1.0.3",
	}})
}

func TestTopology(t *testing.T) {
	runBackendsCases(t, []backendsCase{{
		name:     "zone hints: only endpoints hinted for this node's zone",
		slices:   one(ep("10.1.0.2", zoneHints("zone-a")), ep("10.1.0.3", zoneHints("zone-b")), ep("10.1.0.4", zoneHints("zone-b", "zone-a"))),
		cluster:  "10.1.0.2,10.1.0.4",
		nodePort: "10.1.0.2,10.1.0.4",
	}, {
		name:     "zone hints ignored when one ready endpoint has none",
		slices:   one(ep("10.1.0.2", zoneHints("zone-a")), ep("10.1.0.3")),
		cluster:  "10.1.0.2,10.1.0.3",
		nodePort: "10.1.0.2,10.1.0.3",
	}, {
		name:     "zone hints ignored when none names this zone",
		slices:   one(ep("10.1.0.2", zoneHints("zone-b")), ep("10.1.0.3", zoneHints("zone-c"))),
		cluster:  "10.1.0.2,10.1.0.3",
		nodePort: "10.1.0.2,10.1.0.3",
	}, {
		name:     "zone hints ignored when the node has no zone, and said so",
		slices:   one(ep("10.1.0.2", zoneHints("zone-a")), ep("10.1.0.3", zoneHints("zone-b"))),
		cfg:      func(c *Config) { c.Zone = "" },
		cluster:  "10.1.0.2,10.1.0.3",
		nodePort: "10.1.0.2,10.1.0.3",
		problems: ReasonTopologyHintsIgnored,
		check: func(t *testing.T, r ServiceResult) {
			for _, p := range r.Problems {
				if p.Warning || !strings.Contains(p.Message, "no topology.kubernetes.io/zone label") {
					t.Errorf("problem %+v: want a Normal one naming the missing label", p)
				}
			}
		},
	}, {
		// The ports are chosen one after another; one whose hints go
		// unread is enough to say so, whichever port comes last.
		name: "a node without a zone, hints on one port's endpoints only: said so",
		svc:  service("web", ports(tcpPort("http", 80), tcpPort("metrics", 9100))),
		slices: []*discoveryv1.EndpointSlice{
			slice("web-1", 8080, ep("10.1.0.2", zoneHints("zone-a")), ep("10.1.0.3", zoneHints("zone-b"))),
			sliceWithPorts("web-2", []discoveryv1.EndpointPort{slicePort("metrics", 9100, v1.ProtocolTCP)}, ep("10.1.0.4")),
		},
		cfg:      func(c *Config) { c.Zone = "" },
		cluster:  "10.1.0.2,10.1.0.3",
		problems: ReasonTopologyHintsIgnored,
	}, {
		name:     "a node without a zone and hints on some ready endpoints only: nothing to say",
		slices:   one(ep("10.1.0.2", zoneHints("zone-a")), ep("10.1.0.3")),
		cfg:      func(c *Config) { c.Zone = "" },
		cluster:  "10.1.0.2,10.1.0.3",
		nodePort: "10.1.0.2,10.1.0.3",
	}, {
		name: "a node without a zone that node hints name: same node, nothing to say",
		slices: one(ep("10.1.0.2", zoneHints("zone-a"), nodeHints(thisNode)),
			ep("10.1.0.3", zoneHints("zone-b"), nodeHints(otherNode))),
		cfg:      func(c *Config) { c.Zone = "" },
		cluster:  "10.1.0.2",
		nodePort: "10.1.0.2",
	}, {
		name:   "a node without a zone and Local policies only: no cluster-wide choice, nothing to say",
		svc:    service("web", nodePorts(30080), itpLocal, etpLocal(0)),
		slices: one(ep("10.1.0.2", zoneHints("zone-a")), ep("10.1.0.3", zoneHints("zone-b"))),
		cfg:    func(c *Config) { c.Zone = "" },
	}, {
		name:     "hints of endpoints that are not ready do not count",
		slices:   one(ep("10.1.0.2", zoneHints("zone-a")), ep("10.1.0.3", zoneHints("zone-b")), ep("10.1.0.4", notReady)),
		cluster:  "10.1.0.2",
		nodePort: "10.1.0.2",
	}, {
		// kube-proxy's canUseTopology reads ready endpoints only: a
		// terminating pod of a rollout, still serving and without hints,
		// does not turn zone routing off.
		name:     "a serving-terminating endpoint without hints does not turn hints off",
		slices:   one(ep("10.1.0.2", zoneHints("zone-a")), ep("10.1.0.3", zoneHints("zone-b")), ep("10.1.0.4", servingTerminating)),
		cluster:  "10.1.0.2",
		nodePort: "10.1.0.2",
	}, {
		name: "node hints (PreferSameNode) beat zone hints",
		slices: one(ep("10.1.0.2", zoneHints("zone-a"), nodeHints(thisNode)),
			ep("10.1.0.3", zoneHints("zone-a"), nodeHints(otherNode))),
		cluster:  "10.1.0.2",
		nodePort: "10.1.0.2",
	}, {
		name: "node hints for other nodes only: zone hints apply",
		slices: one(ep("10.1.0.2", zoneHints("zone-a"), nodeHints("node-c")),
			ep("10.1.0.3", zoneHints("zone-b"), nodeHints(otherNode))),
		cluster:  "10.1.0.2",
		nodePort: "10.1.0.2",
	}, {
		name: "node hints on some ready endpoints only: ignored, zone hints apply",
		slices: one(ep("10.1.0.2", zoneHints("zone-b"), nodeHints(thisNode)),
			ep("10.1.0.3", zoneHints("zone-a"))),
		cluster:  "10.1.0.3",
		nodePort: "10.1.0.3",
	}, {
		name: "ETP=Local: hints filter the cluster IP, never the node port's local endpoints",
		svc:  service("web", nodePorts(30080), etpLocal(0)),
		slices: one(ep("10.1.0.2", local, zoneHints("zone-b")), ep("10.1.0.4", local, zoneHints("zone-a")),
			ep("10.1.0.3", zoneHints("zone-a"))),
		cluster:  "10.1.0.3,10.1.0.4",
		nodePort: "10.1.0.2,10.1.0.4",
	}, {
		name: "trafficDistribution without hints changes nothing (the slice controller writes hints)",
		svc: service("web", nodePorts(30080), func(s *v1.Service) {
			s.Spec.TrafficDistribution = ptr(v1.ServiceTrafficDistributionPreferSameNode)
		}),
		slices:   one(ep("10.1.0.2", local), ep("10.1.0.3")),
		cluster:  "10.1.0.2,10.1.0.3",
		nodePort: "10.1.0.2,10.1.0.3",
	}, {
		name:     "no ready endpoint in the hinted zone is impossible to reach: fallback to terminating ignores hints",
		slices:   one(ep("10.1.0.2", zoneHints("zone-b"), servingTerminating), ep("10.1.0.3", zoneHints("zone-a"), servingTerminating)),
		cluster:  "10.1.0.2,10.1.0.3",
		nodePort: "10.1.0.2,10.1.0.3",
	}, {
		name:     "topology does not apply to ITP=Local",
		svc:      service("web", nodePorts(30080), itpLocal),
		slices:   one(ep("10.1.0.2", local, zoneHints("zone-b")), ep("10.1.0.3", zoneHints("zone-a"))),
		cluster:  "10.1.0.2",
		nodePort: "10.1.0.3",
	}})
}

func TestMixedPortsAndDuplicates(t *testing.T) {
	internal := func(want uint16, dropped int) func(t *testing.T, r ServiceResult) {
		return func(t *testing.T, r ServiceResult) {
			for _, lb := range r.LBs {
				if lb.InternalPort != want {
					t.Errorf("%s internal port %d, want %d", lb.Key, lb.InternalPort, want)
				}
			}
			if r.MixedPortDropped != dropped {
				t.Errorf("MixedPortDropped = %d, want %d", r.MixedPortDropped, dropped)
			}
		}
	}
	runBackendsCases(t, []backendsCase{{
		name: "named target port, two ports: the larger group, the rest reported",
		slices: []*discoveryv1.EndpointSlice{
			slice("web-a", 9090, ep("10.1.0.4")),
			slice("web-b", 8080, ep("10.1.0.2"), ep("10.1.0.3")),
		},
		cluster:  "10.1.0.2,10.1.0.3",
		nodePort: "10.1.0.2,10.1.0.3",
		problems: ReasonMixedTargetPorts,
		check:    internal(8080, 1),
	}, {
		name: "equal groups: the lowest port",
		slices: []*discoveryv1.EndpointSlice{
			slice("web-a", 9090, ep("10.1.0.2")),
			slice("web-b", 8080, ep("10.1.0.3")),
		},
		cluster:  "10.1.0.3",
		nodePort: "10.1.0.3",
		problems: ReasonMixedTargetPorts,
		check:    internal(8080, 1),
	}, {
		name: "groups count ready endpoints first: terminating ones do not outvote",
		slices: []*discoveryv1.EndpointSlice{
			slice("web-a", 8080, ep("10.1.0.2", servingTerminating), ep("10.1.0.3", servingTerminating)),
			slice("web-b", 9090, ep("10.1.0.4")),
		},
		cluster:  "10.1.0.4",
		nodePort: "10.1.0.4",
		problems: ReasonMixedTargetPorts,
		check:    internal(9090, 2),
	}, {
		name: "not-serving endpoints on another port are not counted as dropped",
		slices: []*discoveryv1.EndpointSlice{
			slice("web-a", 8080, ep("10.1.0.2", notReady)),
			slice("web-b", 9090, ep("10.1.0.4")),
		},
		cluster:  "10.1.0.4",
		nodePort: "10.1.0.4",
		check:    internal(9090, 0),
	}, {
		name: "the same IP in two slices is one backend; the ready copy wins",
		slices: []*discoveryv1.EndpointSlice{
			slice("web-a", 8080, ep("10.1.0.2", notReady), ep("10.1.0.3")),
			slice("web-b", 8080, ep("10.1.0.2"), ep("10.1.0.3")),
		},
		cluster:  "10.1.0.2,10.1.0.3",
		nodePort: "10.1.0.2,10.1.0.3",
	}, {
		name: "a ready copy beats a serving-terminating one",
		slices: []*discoveryv1.EndpointSlice{
			slice("web-a", 8080, ep("10.1.0.2", servingTerminating), ep("10.1.0.3")),
			slice("web-b", 8080, ep("10.1.0.2")),
		},
		cluster:  "10.1.0.2,10.1.0.3",
		nodePort: "10.1.0.2,10.1.0.3",
	}, {
		name: "a serving-terminating copy beats a non-serving one",
		slices: []*discoveryv1.EndpointSlice{
			slice("web-a", 8080, ep("10.1.0.2", goneTerminating)),
			slice("web-b", 8080, ep("10.1.0.2", servingTerminating)),
		},
		cluster:  "10.1.0.2",
		nodePort: "10.1.0.2",
	}, {
		name: "a local copy of a duplicate wins over a remote one",
		slices: []*discoveryv1.EndpointSlice{
			slice("web-a", 8080, ep("10.1.0.2")),
			slice("web-b", 8080, ep("10.1.0.2", local)),
		},
		cluster:  "10.1.0.2",
		nodePort: "10.1.0.2",
		check: func(t *testing.T, r ServiceResult) {
			if b := lbByKey(t, r, key("10.0.0.1", 80)).Backends[0]; !b.Local {
				t.Errorf("backend = %+v", b)
			}
		},
	}, {
		name: "slices without the Service's port are ignored",
		slices: []*discoveryv1.EndpointSlice{
			sliceWithPorts("web-a", []discoveryv1.EndpointPort{slicePort("metrics", 9100, v1.ProtocolTCP)}, ep("10.1.0.9")),
			sliceWithPorts("web-b", []discoveryv1.EndpointPort{slicePort("http", 8080, v1.ProtocolUDP)}, ep("10.1.0.8")),
			slice("web-c", 8080, ep("10.1.0.2")),
		},
		cluster:  "10.1.0.2",
		nodePort: "10.1.0.2",
	}, {
		name: "FQDN slices and nil slices are ignored",
		slices: []*discoveryv1.EndpointSlice{
			nil,
			{AddressType: discoveryv1.AddressTypeFQDN, Ports: []discoveryv1.EndpointPort{slicePort("http", 8080, v1.ProtocolTCP)},
				Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"db.example.com"}}}},
			slice("web-c", 8080, ep("10.1.0.2")),
		},
		cluster:  "10.1.0.2",
		nodePort: "10.1.0.2",
	}})
}

func TestBackendIPsAreCanonical(t *testing.T) {
	for given, want := range map[string]string{"10.1.2.3": "10.1.2.3", "FD00:0:0::1": "fd00::1", "fd00::1": "fd00::1"} {
		if got := canonical(given, netip.MustParseAddr(given)); got != want {
			t.Errorf("canonical(%q) = %q, want %q", given, got, want)
		}
	}
}

// TestAReadyDuplicateBeatsANotReadyServingOne: of two copies of one IP:port
// (two slices, as the mirroring controller writes an Endpoints object's
// ready and not-ready addresses, whose serving condition is unset and so
// true), the ready one is kept whichever slice comes first, so the
// endpoint stays a backend.
func TestAReadyDuplicateBeatsANotReadyServingOne(t *testing.T) {
	notReadyServing := conditions(false, true, false)
	r := ForService(ServiceInput{Service: service("web"), Slices: slicesOf(
		slice("web-a", 8080, ep("10.1.0.3", notReadyServing)),
		slice("web-b", 8080, ep("10.1.0.3")),
	)}, config())
	if len(r.LBs) != 1 || backendIPs(r.LBs[0]) != "10.1.0.3" {
		t.Errorf("got %s; want the cluster IP balancing to the ready copy", dump(r))
	}
}
