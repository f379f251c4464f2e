package desired

import (
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// TestNodeCausedProblemsCarryOneCauseForEveryService: a problem whose
// cause is the node (no zone label, HNS without affinity or DSR, a family
// the node does not serve) carries a NodeCause, and two different Services
// affected by it carry the same one, so the proxier raises it once on the
// Node; a problem of the Service itself carries none.
func TestNodeCausedProblemsCarryOneCauseForEveryService(t *testing.T) {
	noZone := func(c *Config) { c.Zone = "" }
	hinted := slicesOf(slice("", 8080, ep("10.1.0.2", zoneHints("zone-a")), ep("10.1.0.3", zoneHints("zone-b"))))
	for _, tc := range []struct {
		reason string
		cfg    func(*Config)
		opts   []svcOpt
		slices []*EndpointSlice
	}{
		{ReasonTopologyHintsIgnored, noZone, nil, hinted},
		{ReasonSessionAffinityUnsupported, oldHNS, []svcOpt{affinity(10800)}, nil},
		{ReasonNoDSRForLocalPolicy, oldHNS, []svcOpt{loadBalancer(ingressIP("203.0.113.10")), nodePorts(30080), etpLocal(31000)}, nil},
		{ReasonIPFamilyUnsupported, oldHNS, []svcOpt{clusterIPs("10.0.0.1", "fd00::1")}, nil},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			cfg := config()
			tc.cfg(&cfg)
			var causes []string
			for i, name := range []string{"web", "api"} {
				opts := append([]svcOpt{ports(tcpPort("http", int32(80+i)))}, tc.opts...)
				res := ForService(ServiceInput{Service: service(name, opts...), Slices: tc.slices}, cfg)
				for _, p := range res.Problems {
					if p.Reason == tc.reason {
						causes = append(causes, p.NodeCause)
					}
				}
			}
			if len(causes) != 2 || causes[0] == "" || causes[0] != causes[1] {
				t.Errorf("node causes of the two Services' %s problems: %q, want one and the same for both", tc.reason, causes)
			}
		})
	}
	res := ForService(ServiceInput{Service: service("sip", ports(v1.ServicePort{Name: "sip", Port: 5060, Protocol: v1.ProtocolSCTP}))}, config())
	if len(res.Problems) != 1 || res.Problems[0].NodeCause != "" {
		t.Errorf("an SCTP port's problems %+v, want one of the Service's own, without a node cause", res.Problems)
	}
}

// TestProviderAddressUnknownCausesKeepRoutesApartFromOutsiders: on
// overlay, a Service whose EndpointSlice names addresses outside the
// cluster (no node) has them in no remote subnet for as long as it lives;
// pods of another node in no remote subnet are a route the CNI has not
// added. The two are different node causes, so a steady outside backend,
// its cause raised once, does not hide a node's missing route from the
// Node's events; a Service with both carries both.
func TestProviderAddressUnknownCausesKeepRoutesApartFromOutsiders(t *testing.T) {
	causesOf := func(name string, eps ...discoveryv1.Endpoint) []string {
		t.Helper()
		cfg := config()
		overlay(&cfg)
		res := ForService(ServiceInput{Service: service(name), Slices: slicesOf(slice(name, 8080, eps...))}, cfg)
		var causes []string
		for _, p := range res.Problems {
			if p.Reason == ReasonProviderAddressUnknown {
				if p.NodeCause == "" {
					t.Errorf("%s: a ProviderAddressUnknown problem without a node cause: %+v", name, p)
				}
				causes = append(causes, p.NodeCause)
			}
		}
		return causes
	}
	db := causesOf("db", ep("203.0.113.9", noNode))
	web := causesOf("web", ep("10.2.0.5"))
	both := causesOf("mixed", ep("203.0.113.9", noNode), ep("10.2.0.5"))
	if len(db) != 1 || len(web) != 1 || db[0] == web[0] {
		t.Fatalf("causes of an outside backend %q and of a pod in no remote subnet %q, want one each, not the same", db, web)
	}
	if !strings.Contains(web[0], "route") || strings.Contains(db[0], "route") {
		t.Errorf("the pod's cause %q should name the missing route, the outsider's %q should not", web[0], db[0])
	}
	if len(both) != 2 || !slices.Contains(both, db[0]) || !slices.Contains(both, web[0]) {
		t.Errorf("a Service with both: causes %q, want %q and %q", both, db[0], web[0])
	}
}

// TestABackendOneSlicePlacesOnANodeCountsAsOnANode: a backend in no remote
// subnet that one port's slice places on another node and another port's
// on none is reported as on another node (a route the CNI may not have
// added yet, the Node's to hear of), whichever port comes last.
func TestABackendOneSlicePlacesOnANodeCountsAsOnANode(t *testing.T) {
	cfg := config()
	overlay(&cfg)
	metrics := []discoveryv1.EndpointPort{slicePort("metrics", 9100, v1.ProtocolTCP)}
	r := ForService(ServiceInput{Service: service("web", ports(tcpPort("http", 80), tcpPort("metrics", 9100))), Slices: slicesOf(
		slice("web-1", 8080, ep("10.2.0.5")),
		sliceWithPorts("web-2", metrics, ep("10.2.0.5", noNode)),
	)}, cfg)
	if reasons(r.Problems) != ReasonProviderAddressUnknown || !strings.Contains(r.Problems[0].Message, "on other nodes") {
		t.Errorf("problems = %+v, want one ProviderAddressUnknown for a backend on other nodes", r.Problems)
	}
}
