package sim

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// lbFixture is a dual-stack network with IPv4 and IPv6 backends.
type lbFixture struct {
	h          *HNS
	net        *hnslb.Network
	v4, v4b    *hnslb.Endpoint
	v6, remote *hnslb.Endpoint
}

func newLBFixture(t *testing.T, profile string) lbFixture {
	h := newSim(t, profile)
	n := mustNetwork(t, h, "cbr0", hnslb.NetworkTypeL2Bridge)
	return lbFixture{
		h: h, net: n,
		v4:     mustEndpoint(t, h, n.ID, endpointDoc("10.244.1.5")),
		v4b:    mustEndpoint(t, h, n.ID, endpointDoc("10.244.1.6")),
		v6:     mustEndpoint(t, h, n.ID, endpointDoc("fd00:10:244:1::5")),
		remote: mustEndpoint(t, h, n.ID, remoteDoc("10.244.2.7", "")),
	}
}

func TestCreateLoadBalancerReturnsStoredObject(t *testing.T) {
	f := newLBFixture(t, ProfileWS2022)
	doc := lbDoc("10.96.0.10", 53, f.v4.ID, f.remote.ID)
	doc.ID = "caller-chosen-id-is-ignored"
	doc.SourceVIP = "10.244.1.2"
	lb, err := f.h.CreateLoadBalancer(ctx, doc)
	if err != nil {
		t.Fatal(err)
	}
	if lb.ID == doc.ID || !hnslb.IsGUID(lb.ID) {
		t.Errorf("ID %q is not an HNS-generated GUID", lb.ID)
	}
	if lb.SchemaVersion != hnslb.V2 {
		t.Errorf("SchemaVersion %+v", lb.SchemaVersion)
	}
	got, err := f.h.GetLoadBalancerByID(ctx, lb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.SourceVIP != doc.SourceVIP || !slices.Equal(got.HostComputeEndpoints, doc.HostComputeEndpoints) ||
		!slices.Equal(got.FrontendVIPs, doc.FrontendVIPs) || got.PortMappings[0] != doc.PortMappings[0] {
		t.Errorf("stored %+v, sent %+v", got, doc)
	}
	// IDs are case-insensitive, like GUIDs in HNS.
	if _, err := f.h.GetLoadBalancerByID(ctx, strings.ToUpper(lb.ID)); err != nil {
		t.Errorf("upper-case ID: %v", err)
	}
}

func TestCreateLoadBalancerRules(t *testing.T) {
	const unknownEP = "0b5e4c1e-0000-4000-8000-000000000000"
	// clusterIP is a valid ClusterIP load balancer with one IPv4 backend, then change.
	clusterIP := func(change func(lb *hnslb.LoadBalancer)) func(f lbFixture) *hnslb.LoadBalancer {
		return func(f lbFixture) *hnslb.LoadBalancer {
			lb := lbDoc("10.96.0.10", 80, f.v4.ID)
			change(lb)
			return lb
		}
	}
	tests := []struct {
		name    string
		profile string
		doc     func(f lbFixture) *hnslb.LoadBalancer
		want    hnslb.ErrorCode // 0: accepted
	}{
		{"cluster IP", ProfileWS2019, func(f lbFixture) *hnslb.LoadBalancer { return lbDoc("10.96.0.10", 80, f.v4.ID) }, 0},
		{"node port without VIP", ProfileWS2019, func(f lbFixture) *hnslb.LoadBalancer { return lbDoc("", 30080, f.v4.ID) }, 0},
		{"no backends", ProfileWS2019, func(f lbFixture) *hnslb.LoadBalancer { return lbDoc("10.96.0.10", 80) }, hnslb.CodeInvalidParameter},
		{"nil document", ProfileWS2022, func(f lbFixture) *hnslb.LoadBalancer { return nil }, hnslb.CodeInvalidParameter},
		{"no port mapping", ProfileWS2022, clusterIP(func(lb *hnslb.LoadBalancer) { lb.PortMappings = nil }), hnslb.CodeInvalidParameter},
		{"two port mappings", ProfileWS2022, clusterIP(func(lb *hnslb.LoadBalancer) { lb.PortMappings = append(lb.PortMappings, lb.PortMappings[0]) }), hnslb.CodeInvalidParameter},
		{"SCTP", ProfileWS2022, clusterIP(func(lb *hnslb.LoadBalancer) { lb.PortMappings[0].Protocol = 132 }), hnslb.CodeInvalidParameter},
		{"UDP", ProfileWS2022, func(f lbFixture) *hnslb.LoadBalancer {
			lb := lbDoc("10.96.0.10", 53, f.v4.ID)
			lb.PortMappings[0].Protocol = hnslb.ProtocolUDP
			return lb
		}, 0},
		{"no internal port", ProfileWS2022, clusterIP(func(lb *hnslb.LoadBalancer) { lb.PortMappings[0].InternalPort = 0 }), hnslb.CodeInvalidParameter},
		{"unknown port mapping flag", ProfileWS2022, clusterIP(func(lb *hnslb.LoadBalancer) { lb.PortMappings[0].Flags = 64 }), hnslb.CodeInvalidParameter},
		{"port mapping flag 32, the next bit after the known ones", ProfileWS2022, clusterIP(func(lb *hnslb.LoadBalancer) { lb.PortMappings[0].Flags = 32 }), hnslb.CodeInvalidParameter},
		{"kube-proxy node port flags", ProfileWS2022, func(f lbFixture) *hnslb.LoadBalancer {
			lb := lbDoc("", 30080, f.v4.ID)
			lb.PortMappings[0].Flags = hnslb.PortMappingFlagsLocalRoutedVIP | hnslb.PortMappingFlagsVipExternalIP
			return lb
		}, 0},
		{"unknown LB flag", ProfileWS2022, clusterIP(func(lb *hnslb.LoadBalancer) { lb.Flags = 4 }), hnslb.CodeInvalidParameter},
		{"backend that does not exist", ProfileWS2022, func(f lbFixture) *hnslb.LoadBalancer {
			return lbDoc("10.96.0.10", 80, f.v4.ID, unknownEP)
		}, hnslb.CodeEndpointNotFound},
		{"backend ID not a GUID", ProfileWS2022, func(f lbFixture) *hnslb.LoadBalancer {
			return lbDoc("10.96.0.10", 80, "pod-a")
		}, hnslb.CodeInvalidParameter},
		{"backend listed twice", ProfileWS2022, func(f lbFixture) *hnslb.LoadBalancer {
			return lbDoc("10.96.0.10", 80, f.v4.ID, f.v4.ID)
		}, hnslb.CodeInvalidParameter},
		{"IPv4 VIP with IPv6 flag", ProfileWS2022, func(f lbFixture) *hnslb.LoadBalancer {
			lb := lbDoc("10.96.0.10", 80)
			lb.Flags = hnslb.LoadBalancerFlagsIPv6
			return lb
		}, hnslb.CodeInvalidParameter},
		{"IPv6 VIP without IPv6 flag", ProfileWS2022, func(f lbFixture) *hnslb.LoadBalancer {
			return lbDoc("fd00:96::10", 80)
		}, hnslb.CodeInvalidParameter},
		{"IPv6 backend on IPv4 LB", ProfileWS2022, func(f lbFixture) *hnslb.LoadBalancer {
			return lbDoc("10.96.0.10", 80, f.v6.ID)
		}, hnslb.CodeInvalidParameter},
		{"IPv6 source VIP on IPv4 LB", ProfileWS2022, clusterIP(func(lb *hnslb.LoadBalancer) { lb.SourceVIP = "fd00::2" }), hnslb.CodeInvalidParameter},
		{"junk VIP", ProfileWS2022, func(f lbFixture) *hnslb.LoadBalancer { return lbDoc("10.96.0", 80) }, hnslb.CodeInvalidParameter},
		{"IPv6 LB with IPv6 backend", ProfileWS2022, func(f lbFixture) *hnslb.LoadBalancer {
			lb := lbDoc("fd00:96::10", 80, f.v6.ID)
			lb.Flags = hnslb.LoadBalancerFlagsIPv6
			return lb
		}, 0},
		{"IPv6 on ws2019 (no dual-stack)", ProfileWS2019, func(f lbFixture) *hnslb.LoadBalancer {
			lb := lbDoc("fd00:96::10", 80, f.v6.ID)
			lb.Flags = hnslb.LoadBalancerFlagsIPv6
			return lb
		}, hnslb.CodeRequestUnsupported},
		{"DSR on ws2019", ProfileWS2019, clusterIP(func(lb *hnslb.LoadBalancer) { lb.Flags = hnslb.LoadBalancerFlagsDSR }), 0},
		{"session affinity on ws2019", ProfileWS2019, clusterIP(func(lb *hnslb.LoadBalancer) { lb.PortMappings[0].DistributionType = hnslb.DistributionSourceIP }), hnslb.CodeRequestUnsupported},
		{"session affinity on ws2022", ProfileWS2022, clusterIP(func(lb *hnslb.LoadBalancer) { lb.PortMappings[0].DistributionType = hnslb.DistributionSourceIP }), 0},
		{"unknown distribution", ProfileWS2022, clusterIP(func(lb *hnslb.LoadBalancer) { lb.PortMappings[0].DistributionType = 7 }), hnslb.CodeInvalidParameter},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newLBFixture(t, tc.profile)
			before := len(f.h.Snapshot().LoadBalancers)
			lb, err := f.h.CreateLoadBalancer(ctx, tc.doc(f))
			if tc.want == 0 {
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				if lb == nil || lb.ID == "" {
					t.Fatalf("accepted but returned %+v", lb)
				}
				return
			}
			wantCode(t, err, tc.want)
			if lb != nil {
				t.Errorf("failed create returned %+v", lb)
			}
			if after := len(f.h.Snapshot().LoadBalancers); after != before {
				t.Errorf("failed create changed state: %d -> %d load balancers", before, after)
			}
		})
	}
}

// DSR is gated by version: hcn's DSRVersion is 9.3-9.x and 10.2+, so
// 10.0 and 10.1 (Windows Server 1903) lack it although they are above 9.3,
// and the refusal must name both ranges.
func TestDSRNeedsVersion(t *testing.T) {
	for _, v := range []hnslb.Version{{Major: 9, Minor: 2}, {Major: 10, Minor: 0}, {Major: 10, Minor: 1}} {
		h := New(Options{Profile: Profile{Name: "custom", Version: v}})
		n := mustNetwork(t, h, "cbr0", hnslb.NetworkTypeL2Bridge)
		ep := mustEndpoint(t, h, n.ID, endpointDoc("10.244.1.5"))
		lb := lbDoc("10.96.0.10", 80, ep.ID)
		lb.Flags = hnslb.LoadBalancerFlagsDSR
		_, err := h.CreateLoadBalancer(ctx, lb)
		wantCode(t, err, hnslb.CodeRequestUnsupported)
		if !hnslb.IsNotImplemented(err) {
			t.Errorf("HNS %s: IsNotImplemented(%v) = false", v, err)
		}
		if err != nil && !strings.Contains(err.Error(), "9.3 to 9.x or 10.2") {
			t.Errorf("HNS %s: refusal %q does not name DSR's two version ranges", v, err)
		}
	}
}

func TestFrontendConflictRule(t *testing.T) {
	udp := func(lb *hnslb.LoadBalancer) *hnslb.LoadBalancer {
		lb.PortMappings[0].Protocol = hnslb.ProtocolUDP
		return lb
	}
	v6 := func(lb *hnslb.LoadBalancer) *hnslb.LoadBalancer {
		lb.Flags |= hnslb.LoadBalancerFlagsIPv6
		return lb
	}
	twoVIPs := func(lb *hnslb.LoadBalancer) *hnslb.LoadBalancer {
		lb.FrontendVIPs = append(lb.FrontendVIPs, "10.96.0.99")
		return lb
	}
	otherPort := func(lb *hnslb.LoadBalancer) *hnslb.LoadBalancer {
		lb.PortMappings[0].InternalPort = 9999
		return lb
	}
	const (
		free      = 0
		identical = hnslb.CodeAlreadyExists
		conflict  = hnslb.CodePortAlreadyExists
	)
	tests := []struct {
		name          string
		first, second *hnslb.LoadBalancer
		want          hnslb.ErrorCode
	}{
		{"same VIP, protocol, port", lbDoc("10.96.0.10", 80), otherPort(lbDoc("10.96.0.10", 80)), conflict},
		{"identical load balancer", lbDoc("10.96.0.10", 80), lbDoc("10.96.0.10", 80), identical},
		{"same VIP and port, other protocol", lbDoc("10.96.0.10", 80), udp(lbDoc("10.96.0.10", 80)), free},
		{"same VIP, other port", lbDoc("10.96.0.10", 80), lbDoc("10.96.0.10", 81), free},
		{"other VIP, same port", lbDoc("10.96.0.10", 80), lbDoc("10.96.0.11", 80), free},
		{"same VIP written differently", v6(lbDoc("fd00:96::10", 80)), otherPort(v6(lbDoc("fd00:96:0::0010", 80))), conflict},
		{"identical but written differently", v6(lbDoc("fd00:96::10", 80)), v6(lbDoc("fd00:96:0::0010", 80)), identical},
		{"second VIP of a multi-VIP LB", twoVIPs(lbDoc("10.96.0.10", 80)), lbDoc("10.96.0.99", 80), conflict},
		{"other flags", lbDoc("10.96.0.10", 80), func() *hnslb.LoadBalancer {
			lb := lbDoc("10.96.0.10", 80)
			lb.Flags = hnslb.LoadBalancerFlagsDSR
			return lb
		}(), conflict},
		{"two node ports, same port", lbDoc("", 30080), otherPort(lbDoc("", 30080)), conflict},
		{"two identical node ports", lbDoc("", 30080), lbDoc("", 30080), identical},
		{"two node ports, other protocol", lbDoc("", 30080), udp(lbDoc("", 30080)), free},
		{"node ports of both families", lbDoc("", 30080), v6(lbDoc("", 30080)), free},
		{"node port vs VIP on same port", lbDoc("", 30080), lbDoc("10.96.0.10", 30080), free},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newSim(t, ProfileWS2022)
			withBackend(t, h, tc.first)
			withBackend(t, h, tc.second)
			first, err := h.CreateLoadBalancer(ctx, tc.first)
			if err != nil {
				t.Fatal(err)
			}
			_, err = h.CreateLoadBalancer(ctx, tc.second)
			if tc.want == free {
				if err != nil {
					t.Fatalf("second rejected: %v", err)
				}
				return
			}
			wantCode(t, err, tc.want)
			if hnslb.IsPortAlreadyExists(err) != (tc.want == conflict) || hnslb.IsAlreadyExists(err) != (tc.want == identical) {
				t.Errorf("classification of %v", err)
			}
			// Once the first goes, the frontend is free.
			if err := h.DeleteLoadBalancer(ctx, first.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := h.CreateLoadBalancer(ctx, tc.second); err != nil {
				t.Fatalf("after delete: %v", err)
			}
		})
	}
}

func TestPortAlreadyExistsMessage(t *testing.T) {
	h := newSim(t, ProfileWS2022)
	if _, err := h.CreateLoadBalancer(ctx, withBackend(t, h, lbDoc("10.96.0.10", 80))); err != nil {
		t.Fatal(err)
	}
	second := withBackend(t, h, lbDoc("10.96.0.10", 80))
	second.PortMappings[0].InternalPort = 9090
	_, err := h.CreateLoadBalancer(ctx, second)
	var e *hnslb.Error
	if !asError(err, &e) || !contains(e.Message, "The specified port already exists.") {
		t.Fatalf("got %v", err)
	}
}

// TestTakenPortRefusesWithoutAHolder: a port taken outside HNS's load
// balancers (a host socket, a kept reservation) refuses new frontends on it,
// whatever their VIP, with no load balancer to list; a load balancer made
// before keeps being modifiable, other ports are free, and lifting the
// fault frees the port.
func TestTakenPortRefusesWithoutAHolder(t *testing.T) {
	h := newSim(t, ProfileWS2025)
	before, err := h.CreateLoadBalancer(ctx, withBackend(t, h, lbDoc("10.96.0.9", 10256)))
	if err != nil {
		t.Fatal(err)
	}
	h.SetFaults(Faults{TakenPorts: []TakenPort{{hnslb.ProtocolTCP, 10256}}})
	for _, vip := range []string{"10.96.0.10", "203.0.113.5"} {
		_, err := h.CreateLoadBalancer(ctx, withBackend(t, h, lbDoc(vip, 10256)))
		wantCode(t, err, hnslb.CodePortAlreadyExists)
	}
	if lbs, _ := h.ListLoadBalancers(ctx); len(lbs) != 1 {
		t.Errorf("listing holds %d load balancers, want only the one made before", len(lbs))
	}
	changed := *before
	changed.PortMappings = []hnslb.PortMapping{changed.PortMappings[0]}
	changed.PortMappings[0].InternalPort = 9090
	if _, err := h.UpdateLoadBalancer(ctx, before.ID, &changed); err != nil {
		t.Errorf("modify of a load balancer made before: %v", err)
	}
	if _, err := h.CreateLoadBalancer(ctx, withBackend(t, h, lbDoc("10.96.0.10", 80))); err != nil {
		t.Errorf("another port: %v", err)
	}
	h.SetFaults(Faults{})
	if _, err := h.CreateLoadBalancer(ctx, withBackend(t, h, lbDoc("10.96.0.11", 10256))); err != nil {
		t.Errorf("after the port was freed: %v", err)
	}
}

func TestBackendCap(t *testing.T) {
	for _, p := range Profiles() {
		t.Run(p.Name, func(t *testing.T) {
			h := New(Options{Profile: p, Seed: 3})
			n := mustNetwork(t, h, "cbr0", hnslb.NetworkTypeL2Bridge)
			max := p.Features().MaxBackends
			var ids []string
			for i := 0; i <= max; i++ {
				ip := fmt.Sprintf("10.%d.%d.%d", 100+i/65536, (i/256)%256, i%256)
				ids = append(ids, mustEndpoint(t, h, n.ID, remoteDoc(ip, "")).ID)
			}
			_, err := h.CreateLoadBalancer(ctx, lbDoc("10.96.0.10", 80, ids...))
			wantCode(t, err, hnslb.CodeInvalidParameter)
			if !contains(err.Error(), "invalid number of destinations") {
				t.Errorf("message %q", err)
			}
			if _, err := h.CreateLoadBalancer(ctx, lbDoc("10.96.0.10", 80, ids[:max]...)); err != nil {
				t.Fatalf("%d backends rejected: %v", max, err)
			}
		})
	}
}

func TestMaxBackendsOverride(t *testing.T) {
	p, _ := ProfileByName(ProfileWS2022)
	p.MaxBackends = 2
	h := New(Options{Profile: p})
	n := mustNetwork(t, h, "cbr0", hnslb.NetworkTypeL2Bridge)
	var ids []string
	for _, ip := range []string{"10.244.1.2", "10.244.1.3", "10.244.1.4"} {
		ids = append(ids, mustEndpoint(t, h, n.ID, endpointDoc(ip)).ID)
	}
	_, err := h.CreateLoadBalancer(ctx, lbDoc("10.96.0.10", 80, ids...))
	wantCode(t, err, hnslb.CodeInvalidParameter)
	if h.Profile().Features().MaxBackends != 2 {
		t.Errorf("Features().MaxBackends = %d", h.Profile().Features().MaxBackends)
	}
}

func TestUpdateLoadBalancerPerProfile(t *testing.T) {
	tests := []struct {
		profile     string
		wantErr     hnslb.ErrorCode
		backendsNew bool // the backends change
	}{
		{ProfileWS2019, hnslb.CodeNotImplemented, false},
		{ProfileWS2022, hnslb.CodeNotImplemented, false},
		{ProfileWS2025Mod4, 0, false},
		{ProfileWS2025, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.profile, func(t *testing.T) {
			f := newLBFixture(t, tc.profile)
			lb, err := f.h.CreateLoadBalancer(ctx, lbDoc("10.96.0.10", 80, f.v4.ID))
			if err != nil {
				t.Fatal(err)
			}
			doc := lbDoc("10.96.0.10", 80, f.v4.ID, f.v4b.ID)
			doc.PortMappings[0].InternalPort = 9090
			got, err := f.h.UpdateLoadBalancer(ctx, lb.ID, doc)
			stored, gerr := f.h.GetLoadBalancerByID(ctx, lb.ID)
			if gerr != nil {
				t.Fatal(gerr)
			}
			if tc.wantErr != 0 {
				wantCode(t, err, tc.wantErr)
				if !hnslb.IsNotImplemented(err) {
					t.Errorf("IsNotImplemented(%v) = false", err)
				}
				if stored.PortMappings[0].InternalPort != 8080 || len(stored.HostComputeEndpoints) != 1 {
					t.Errorf("failed update changed %+v", stored)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.ID != lb.ID {
				t.Errorf("update changed ID %s -> %s", lb.ID, got.ID)
			}
			if n := len(stored.HostComputeEndpoints); (n == 2) != tc.backendsNew {
				t.Errorf("stored backends %v, want changed=%v", stored.HostComputeEndpoints, tc.backendsNew)
			}
			if stored.PortMappings[0].InternalPort != 9090 {
				t.Errorf("port mapping not applied: %+v", stored.PortMappings[0])
			}
		})
	}
}

func TestUpdateLoadBalancerChecks(t *testing.T) {
	f := newLBFixture(t, ProfileWS2025)
	a, err := f.h.CreateLoadBalancer(ctx, lbDoc("10.96.0.10", 80, f.v4.ID))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.h.CreateLoadBalancer(ctx, lbDoc("10.96.0.11", 80, f.v4.ID)); err != nil {
		t.Fatal(err)
	}
	// Its own frontend does not conflict with itself.
	if _, err := f.h.UpdateLoadBalancer(ctx, a.ID, lbDoc("10.96.0.10", 80, f.v4b.ID)); err != nil {
		t.Errorf("update keeping its frontend: %v", err)
	}
	// Another's frontend does; taking an identical copy of another is "already exists".
	_, err = f.h.UpdateLoadBalancer(ctx, a.ID, lbDoc("10.96.0.11", 80, f.v4b.ID))
	wantCode(t, err, hnslb.CodePortAlreadyExists)
	_, err = f.h.UpdateLoadBalancer(ctx, a.ID, lbDoc("10.96.0.11", 80, f.v4.ID))
	wantCode(t, err, hnslb.CodeAlreadyExists)
	// Unknown IDs are not found.
	_, err = f.h.UpdateLoadBalancer(ctx, "6f1c2a3b-0000-4000-8000-000000000001", lbDoc("10.96.0.12", 80))
	wantCode(t, err, hnslb.CodeNotFound)
	// The cap and family checks run too.
	_, err = f.h.UpdateLoadBalancer(ctx, a.ID, lbDoc("10.96.0.10", 80, f.v6.ID))
	wantCode(t, err, hnslb.CodeInvalidParameter)
}

func TestGetAndDeleteUnknownLoadBalancer(t *testing.T) {
	h := newSim(t, ProfileWS2022)
	const missing = "6f1c2a3b-0000-4000-8000-000000000001"
	_, err := h.GetLoadBalancerByID(ctx, missing)
	wantCode(t, err, hnslb.CodeNotFound)
	err = h.DeleteLoadBalancer(ctx, missing)
	wantCode(t, err, hnslb.CodeNotFound)
	if !hnslb.IsNotFound(err) || hnslb.IsUnavailable(err) {
		t.Errorf("classification of %v", err)
	}
	err = h.DeleteLoadBalancer(ctx, "not-a-guid")
	wantCode(t, err, hnslb.CodeInvalidParameter)
	if hnslb.IsNotFound(err) {
		t.Errorf("malformed ID reads as not found: %v", err)
	}
}

// TestABracedIDIsAnInvalidParameter: hcn parses the ID of a delete, a
// modify, an endpoint create's network and a namespace attachment with
// go-winio's guid.FromString, which takes exactly 36 characters, so a
// braced GUID is refused before HNS is called and hcnclient answers
// CodeInvalidParameter (TestFakeHNSErrorsMapToHNSCodes, "braced ID"). The
// simulator answered "not found" for it, which callers take for "already
// deleted" or "the network changed".
func TestABracedIDIsAnInvalidParameter(t *testing.T) {
	h := newSim(t, ProfileWS2025)
	const id = "6f1c2a3b-0000-4000-8000-000000000001"
	braced := "{" + id + "}"
	_, updateErr := h.UpdateLoadBalancer(ctx, braced, &hnslb.LoadBalancer{SchemaVersion: hnslb.V2})
	_, createErr := h.CreateEndpoint(ctx, braced, &hnslb.Endpoint{Flags: hnslb.EndpointFlagsRemoteEndpoint,
		IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.9.9"}}, MacAddress: "02-11-0a-f4-09-09", SchemaVersion: hnslb.V2})
	for call, err := range map[string]error{
		"DeleteLoadBalancer":         h.DeleteLoadBalancer(ctx, braced),
		"DeleteEndpoint":             h.DeleteEndpoint(ctx, braced),
		"DeleteNetwork":              h.DeleteNetwork(ctx, braced),
		"DeleteNamespace":            h.DeleteNamespace(ctx, braced),
		"UpdateLoadBalancer":         updateErr,
		"AddNamespaceEndpoint":       h.AddNamespaceEndpoint(ctx, braced, id),
		"RemoveNamespaceEndpoint":    h.RemoveNamespaceEndpoint(ctx, braced, id),
		"CreateEndpoint (a network)": createErr,
	} {
		if !hnslb.IsInvalidParameter(err) || hnslb.IsNotFound(err) {
			t.Errorf("%s with %q: %v, want an invalid parameter", call, braced, err)
		}
	}
}

func TestDeletingBackendEndpointShrinksLoadBalancer(t *testing.T) {
	f := newLBFixture(t, ProfileWS2022)
	lb, err := f.h.CreateLoadBalancer(ctx, lbDoc("10.96.0.10", 80, f.v4.ID, f.v4b.ID))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.h.DeleteEndpoint(ctx, f.v4.ID); err != nil {
		t.Fatalf("deleting a backend endpoint: %v", err)
	}
	got, err := f.h.GetLoadBalancerByID(ctx, lb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.HostComputeEndpoints, []string{f.v4b.ID}) {
		t.Errorf("backends after delete: %v", got.HostComputeEndpoints)
	}
	// The last one going leaves an empty load balancer, which stays.
	if err := f.h.DeleteEndpoint(ctx, f.v4b.ID); err != nil {
		t.Fatal(err)
	}
	got, err = f.h.GetLoadBalancerByID(ctx, lb.ID)
	if err != nil || len(got.HostComputeEndpoints) != 0 {
		t.Errorf("after the last backend went: %+v %v", got, err)
	}
}

func TestDeleteLoadBalancerOutOfBand(t *testing.T) {
	h := newSim(t, ProfileWS2022)
	lb, err := h.CreateLoadBalancer(ctx, withBackend(t, h, lbDoc("10.96.0.10", 80)))
	if err != nil {
		t.Fatal(err)
	}
	h.SetFaults(Faults{ErrorRate: map[Op]float64{AnyOp: 1}})
	h.Restart(1 << 40)
	if err := h.DeleteLoadBalancerOutOfBand(lb.ID); err != nil {
		t.Fatalf("out-of-band delete is subject to faults: %v", err)
	}
	if len(h.Snapshot().LoadBalancers) != 0 {
		t.Fatal("load balancer still there")
	}
	wantCode(t, h.DeleteLoadBalancerOutOfBand(lb.ID), hnslb.CodeNotFound)
	c := h.Counters()
	if c.Count(OpDeleteLoadBalancerOutOfBand) != 2 || c.Writes() != 3 { // network, endpoint, load balancer
		t.Errorf("counters %+v (Writes %d)", c.Calls, c.Writes())
	}
}

func TestPutLoadBalancerOutOfBand(t *testing.T) {
	h := newSim(t, ProfileWS2022)
	// What kubernetes/kubernetes#141488 met in a listing: no port mappings.
	odd, err := h.PutLoadBalancerOutOfBand(hnslb.LoadBalancer{FrontendVIPs: []string{"10.96.0.10"}})
	if err != nil || !hnslb.IsGUID(odd.ID) {
		t.Fatalf("put: %+v %v", odd, err)
	}
	list, err := h.ListLoadBalancers(ctx)
	if err != nil || len(list) != 1 || len(list[0].PortMappings) != 0 {
		t.Fatalf("list: %+v %v", list, err)
	}
	// A foreign load balancer holds its frontend like any other.
	foreign, err := h.PutLoadBalancerOutOfBand(*withBackend(t, h, lbDoc("10.96.0.20", 80)))
	if err != nil {
		t.Fatal(err)
	}
	doc := withBackend(t, h, lbDoc("10.96.0.20", 80))
	doc.PortMappings[0].InternalPort = 9
	_, err = h.CreateLoadBalancer(ctx, doc)
	wantCode(t, err, hnslb.CodePortAlreadyExists)
	if err := h.DeleteLoadBalancer(ctx, foreign.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := h.PutLoadBalancerOutOfBand(hnslb.LoadBalancer{ID: "x"}); err == nil {
		t.Error("non-GUID ID accepted")
	}
	if c := h.Counters(); c.Count(OpPutLoadBalancerOutOfBand) != 3 || c.Count(OpCreateLoadBalancer) != 1 {
		t.Errorf("counters %v", c.Calls)
	}
}

// TestModifyBackendsOnly: the variant's modify applies the backends and
// keeps every other field, answering success.
func TestModifyBackendsOnly(t *testing.T) {
	p, _ := ProfileByName(ProfileWS2025)
	h := New(Options{Profile: p, Seed: 3, ModifyBackendsOnly: true})
	n := mustNetwork(t, h, "cbr0", hnslb.NetworkTypeL2Bridge)
	a := mustEndpoint(t, h, n.ID, endpointDoc("10.244.1.5"))
	b := mustEndpoint(t, h, n.ID, endpointDoc("10.244.1.6"))
	lb, err := h.CreateLoadBalancer(ctx, lbDoc("10.96.0.10", 80, a.ID))
	if err != nil {
		t.Fatal(err)
	}
	doc := lbDoc("10.96.0.10", 80, a.ID, b.ID)
	doc.PortMappings[0].InternalPort = 9090
	doc.PortMappings[0].DistributionType = hnslb.DistributionSourceIP
	doc.Flags = hnslb.LoadBalancerFlagsDSR
	doc.SourceVIP = "10.244.1.99"
	if _, err := h.UpdateLoadBalancer(ctx, lb.ID, doc); err != nil {
		t.Fatal(err)
	}
	stored, err := h.GetLoadBalancerByID(ctx, lb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(stored.HostComputeEndpoints) != 2 {
		t.Errorf("backends %v, want both", stored.HostComputeEndpoints)
	}
	if pm := stored.PortMappings[0]; pm.InternalPort != 8080 || pm.DistributionType != hnslb.DistributionNone ||
		stored.Flags != lb.Flags || stored.SourceVIP != lb.SourceVIP {
		t.Errorf("the modify changed more than the backends: %+v", stored)
	}
}
