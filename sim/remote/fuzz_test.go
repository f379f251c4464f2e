package remote_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/sim/remote"
)

// FuzzServer sends sequences of requests (a method, a path with real or
// junk IDs, a body that is either raw fuzzer bytes or an HNS document
// built from them) to the hnssim JSON API. Every reply must be a success
// with a JSON body or an HNS error on the wire; the handler must never
// panic; and after every request the simulator's state must still be
// consistent (checkSnapshot).
func FuzzServer(f *testing.F) {
	f.Add([]byte{}, []byte(`{`))
	f.Add([]byte{1, 12, 3, 0, 1, 14, 5, 3}, []byte(`{"Name":"x"}`))
	f.Add([]byte{2, 11, 1, 2, 0, 9, 6, 1, 3, 15, 6, 4, 2, 19, 0, 5}, []byte("null"))
	f.Add([]byte{1, 14, 1, 3, 2, 14, 6, 3, 3, 14, 6, 0}, []byte(`{"HostComputeEndpoints":["x"],"PortMappings":[{}]}`))
	f.Add([]byte{1, 17, 0, 5, 1, 18, 0, 6, 0, 0, 0, 0}, []byte(`{"errorRate":{"*":0.5},"committed":2}`))
	f.Add([]byte{3, 10, 2, 0, 3, 5, 0, 0, 3, 7, 1, 0, 0, 16, 0, 0}, []byte("\xff\xfe"))
	f.Fuzz(func(t *testing.T, script, body []byte) {
		h, ids := seededSim(t)
		srv := remote.NewServer(h, remote.Extras{
			Node:  remote.NodeInfo{Name: "n1", IPs: []string{"192.168.0.10"}, NetworkName: "cbr0"},
			Dump:  h.Snapshot,
			Stats: func() any { return h.Counters() },
			// Error rates only: latency and restart windows would make the
			// run depend on the clock.
			SetFaults: func(req remote.FaultsRequest) error {
				f := sim.Faults{ErrorRate: map[sim.Op]float64{}, Errors: req.Errors, Committed: req.Committed}
				for op, rate := range req.ErrorRate {
					f.ErrorRate[sim.Op(op)] = rate
				}
				h.SetFaults(f)
				return nil
			},
			SetRemoteSubnets: func(req remote.RemoteSubnetsRequest) error {
				var pols []hnslb.NetworkPolicy
				for _, r := range req.Routes {
					pols = append(pols, hnslb.NewNetworkPolicy(hnslb.NetworkPolicyRemoteSubnetRoute, r))
				}
				return h.SetNetworkPolicies(ids[0], pols)
			},
		})
		g := &reqGen{script: script, body: body, ids: ids}
		for i := 0; i < 8 && len(g.script) > 0; i++ {
			req := g.request()
			if req == nil {
				continue
			}
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, req)
			checkReply(t, req, rec)
			checkSnapshot(t, h.Snapshot(), h.Profile().Features().MaxBackends)
		}
	})
}

// seededSim is a simulator holding one of each object, and the IDs to aim at.
func seededSim(t *testing.T) (*sim.HNS, []string) {
	t.Helper()
	ctx := context.Background()
	profile, err := sim.ProfileByName(sim.ProfileWS2025)
	if err != nil {
		t.Fatal(err)
	}
	h := sim.New(sim.Options{Profile: profile, Seed: 3})
	n, err := h.CreateNetwork(ctx, &hnslb.Network{Name: "cbr0", Type: hnslb.NetworkTypeOverlay,
		Ipams: []hnslb.Ipam{{Type: "Static", Subnets: []hnslb.Subnet{{IpAddressPrefix: "10.244.1.0/24"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	local, err := h.CreateEndpoint(ctx, n.ID, &hnslb.Endpoint{Name: "pod_eth0", IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.1.5", PrefixLength: 24}}})
	if err != nil {
		t.Fatal(err)
	}
	rem, err := h.CreateEndpoint(ctx, n.ID, &hnslb.Endpoint{Flags: hnslb.EndpointFlagsRemoteEndpoint, IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.2.7"}}})
	if err != nil {
		t.Fatal(err)
	}
	ns, err := h.CreateNamespace(ctx, &hnslb.Namespace{Type: hnslb.NamespaceTypeHost})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.AddNamespaceEndpoint(ctx, ns.ID, local.ID); err != nil {
		t.Fatal(err)
	}
	lb, err := h.CreateLoadBalancer(ctx, &hnslb.LoadBalancer{
		HostComputeEndpoints: []string{local.ID, rem.ID}, SourceVIP: "10.244.1.250", FrontendVIPs: []string{"10.96.0.10"},
		PortMappings: []hnslb.PortMapping{{Protocol: hnslb.ProtocolTCP, InternalPort: 8080, ExternalPort: 80}}, SchemaVersion: hnslb.V2})
	if err != nil {
		t.Fatal(err)
	}
	return h, []string{n.ID, local.ID, rem.ID, ns.ID, lb.ID, strings.ToUpper(local.ID), "{" + rem.ID + "}",
		"00000000-0000-0000-0000-000000000000", "not-a-guid", "", "..", "a/b", "%zz", "x?y=1"}
}

// reqGen turns fuzzer bytes into requests.
type reqGen struct {
	script, body []byte
	ids          []string
}

func (g *reqGen) byte() int {
	if len(g.script) == 0 {
		return 0
	}
	b := g.script[0]
	g.script = g.script[1:]
	return int(b)
}

func (g *reqGen) id() string { return g.ids[g.byte()%len(g.ids)] }

var (
	fuzzMethods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodHead}
	fuzzPaths   = []string{
		"/version", "/networks", "/networks/byname?name=%s", "/networks/%s", "/networks/%s/endpoints",
		"/endpoints", "/endpoints/byname?name=%s", "/endpoints/%s", "/namespaces", "/namespaces/%s",
		"/namespaces/%s/endpoints/%s", "/loadbalancers", "/loadbalancers/%s", "/dump", "/stats", "/node",
		"/trace", "/faults", "/remote-subnets", "/", "//networks", "/networks/%s/%s", "/loadbalancers/",
	}
)

// request builds the next request, or nil when the bytes make no valid URL.
func (g *reqGen) request() *http.Request {
	method := fuzzMethods[g.byte()%len(fuzzMethods)]
	path := fuzzPaths[g.byte()%len(fuzzPaths)]
	for strings.Contains(path, "%s") {
		path = strings.Replace(path, "%s", g.id(), 1)
	}
	body := g.document(g.byte())
	req, err := http.NewRequestWithContext(context.Background(), method, "http://hns"+path, bytes.NewReader(body))
	if err != nil {
		return nil
	}
	return req
}

// document is the raw fuzzer body or an HNS document with the body's bytes
// in its fields, aimed at the seeded objects.
func (g *reqGen) document(kind int) []byte {
	s := string(g.body)
	var v any
	switch kind % 8 {
	case 0:
		return g.body
	case 1:
		v = hnslb.Network{Name: s, Type: []hnslb.NetworkType{hnslb.NetworkTypeL2Bridge, hnslb.NetworkTypeOverlay, hnslb.NetworkType(s)}[g.byte()%3],
			Ipams: []hnslb.Ipam{{Type: "Static", Subnets: []hnslb.Subnet{{IpAddressPrefix: []string{"10.245.0.0/24", s}[g.byte()%2]}}}}}
	case 2:
		v = hnslb.Endpoint{Name: s, Flags: hnslb.EndpointFlags(g.byte() % 3), MacAddress: s,
			IpConfigurations: []hnslb.IPConfig{{IpAddress: []string{"10.244.1.9", "10.244.1.5", "fd00::9", s}[g.byte()%4], PrefixLength: uint8(g.byte())}},
			Policies:         []hnslb.EndpointPolicy{{Type: hnslb.EndpointPolicyType([]string{"ProviderAddress", "OutBoundNAT", s}[g.byte()%3]), Settings: rawOr(g.body)}}}
	case 3:
		v = hnslb.LoadBalancer{HostComputeEndpoints: []string{g.id(), g.id()}, SourceVIP: []string{"10.244.1.250", s, ""}[g.byte()%3],
			FrontendVIPs: []string{[]string{"10.96.0.10", "10.96.0.11", "fd00::10", s}[g.byte()%4]},
			PortMappings: []hnslb.PortMapping{{Protocol: uint32(g.byte() % 20), InternalPort: uint16(g.byte()), ExternalPort: uint16(g.byte() % 3 * 40),
				DistributionType: hnslb.Distribution(g.byte() % 4), Flags: hnslb.PortMappingFlags(g.byte() % 40)}},
			Flags: hnslb.LoadBalancerFlags(g.byte() % 5)}
	case 4:
		v = hnslb.Namespace{Type: hnslb.NamespaceType(s), Resources: []hnslb.NamespaceResource{{Type: hnslb.NamespaceResourceTypeEndpoint, Data: rawOr([]byte(`{"ID":"` + g.id() + `"}`))}}}
	case 5:
		v = remote.FaultsRequest{ErrorRate: map[string]float64{[]string{"*", "CreateLoadBalancer", s}[g.byte()%3]: float64(g.byte()) / 128}, Committed: float64(g.byte()) / 128}
	case 6:
		v = remote.RemoteSubnetsRequest{Network: "cbr0", Routes: []hnslb.RemoteSubnetRoutePolicySetting{{DestinationPrefix: s, ProviderAddress: s, IsolationId: uint16(g.byte())}}}
	default:
		v = remote.TraceRequest{Src: s, Dst: "10.96.0.10:80", Protocol: s}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return g.body
	}
	return b
}

// rawOr is b when it is JSON, else null (a RawMessage must be valid JSON to marshal).
func rawOr(b []byte) json.RawMessage {
	if json.Valid(b) {
		return b
	}
	return json.RawMessage("null")
}

// wireErr mirrors the server's error body.
type wireErr struct {
	Op      string
	Code    hnslb.ErrorCode
	Message string
}

// checkReply: 2xx with a JSON body (or none), or an HNS error with a code.
// A 500 is allowed only as a well-formed HNS error (E_FAIL and codes
// without a closer status), never as an unformatted failure.
func checkReply(t *testing.T, req *http.Request, rec *httptest.ResponseRecorder) {
	t.Helper()
	what := fmt.Sprintf("%s %s", req.Method, req.URL)
	switch {
	case rec.Code == http.StatusNoContent:
		return
	case rec.Code == http.StatusOK:
		if !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("%s: 200 with a body that is not JSON: %q", what, rec.Body.String())
		}
		return
	case rec.Code == http.StatusMethodNotAllowed || rec.Code == http.StatusNotFound && rec.Header().Get("Content-Type") != "application/json":
		return // the mux's own answers for routes that do not exist
	case rec.Code == http.StatusMovedPermanently || rec.Code == http.StatusTemporaryRedirect:
		return // the mux cleaning "//x" or "/a/../b" paths
	}
	var we wireErr
	if err := json.Unmarshal(rec.Body.Bytes(), &we); err != nil || we.Code == 0 || we.Op == "" || we.Message == "" {
		t.Fatalf("%s: status %d without an HNS error: %q", what, rec.Code, rec.Body.String())
	}
}

// checkSnapshot asserts the simulator's referential integrity: unique IDs;
// endpoints on existing networks; namespace attachments agree both ways;
// load balancers with one valid port mapping, at most the cap of distinct,
// existing backends, and no two holding one frontend.
func checkSnapshot(t *testing.T, s *hnslb.Snapshot, maxBackends int) {
	t.Helper()
	seen := map[string]string{}
	unique := func(kind, id string) {
		k := strings.ToLower(id)
		if id == "" || seen[k] != "" {
			t.Fatalf("%s ID %q empty or also a %s", kind, id, seen[k])
		}
		seen[k] = kind
	}
	networks, endpoints, namespaces := map[string]bool{}, map[string]*hnslb.Endpoint{}, map[string]*hnslb.Namespace{}
	for _, n := range s.Networks {
		unique("network", n.ID)
		networks[strings.ToLower(n.ID)] = true
	}
	for i, e := range s.Endpoints {
		unique("endpoint", e.ID)
		endpoints[strings.ToLower(e.ID)] = &s.Endpoints[i]
		if !networks[strings.ToLower(e.HostComputeNetwork)] {
			t.Fatalf("endpoint %s on missing network %q", e.ID, e.HostComputeNetwork)
		}
	}
	for i, ns := range s.Namespaces {
		unique("namespace", ns.ID)
		namespaces[strings.ToLower(ns.ID)] = &s.Namespaces[i]
		for _, r := range ns.Resources {
			if r.Type != hnslb.NamespaceResourceTypeEndpoint {
				continue
			}
			var d hnslb.NamespaceResourceEndpoint
			if err := json.Unmarshal(r.Data, &d); err != nil {
				t.Fatalf("namespace %s: endpoint resource %s: %v", ns.ID, r.Data, err)
			}
			e := endpoints[strings.ToLower(d.ID)]
			if e == nil || !strings.EqualFold(e.HostComputeNamespace, ns.ID) {
				t.Fatalf("namespace %s lists endpoint %s, which is missing or elsewhere", ns.ID, d.ID)
			}
		}
	}
	for _, e := range s.Endpoints {
		if e.HostComputeNamespace != "" && namespaces[strings.ToLower(e.HostComputeNamespace)] == nil {
			t.Fatalf("endpoint %s in missing namespace %s", e.ID, e.HostComputeNamespace)
		}
	}
	frontends := map[string]string{}
	for _, lb := range s.LoadBalancers {
		unique("load balancer", lb.ID)
		if len(lb.PortMappings) != 1 {
			t.Fatalf("load balancer %s has %d port mappings", lb.ID, len(lb.PortMappings))
		}
		if len(lb.HostComputeEndpoints) > maxBackends {
			t.Fatalf("load balancer %s has %d backends, cap %d", lb.ID, len(lb.HostComputeEndpoints), maxBackends)
		}
		backends := map[string]bool{}
		for _, id := range lb.HostComputeEndpoints {
			k := strings.ToLower(strings.Trim(id, "{}"))
			if backends[k] || endpoints[k] == nil {
				t.Fatalf("load balancer %s: backend %s repeated or missing", lb.ID, id)
			}
			backends[k] = true
		}
		pm := lb.PortMappings[0]
		vips := lb.FrontendVIPs
		if len(vips) == 0 {
			vips = []string{fmt.Sprintf("node/v6=%v", lb.Flags&hnslb.LoadBalancerFlagsIPv6 != 0)}
		}
		for _, vip := range vips {
			if a, err := netip.ParseAddr(vip); err == nil {
				vip = a.Unmap().String()
			}
			k := fmt.Sprintf("%s/%d/%d", vip, pm.Protocol, pm.ExternalPort)
			if other := frontends[k]; other != "" {
				t.Fatalf("load balancers %s and %s share frontend %s", other, lb.ID, k)
			}
			frontends[k] = lb.ID
		}
	}
}
