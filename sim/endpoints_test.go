package sim

import (
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

func TestCreateEndpoint(t *testing.T) {
	h := newSim(t, ProfileWS2022)
	n := mustNetwork(t, h, "flannel.4096", hnslb.NetworkTypeOverlay)
	local := endpointDoc("10.244.1.5")
	local.Name = "pod-a_eth0"
	// hcn refuses, before it calls HNS, a create whose document names a
	// namespace (hcsshim hcn/hcnendpoint.go, HostComputeEndpoint.Create):
	// attaching is AddNamespaceEndpoint's job.
	local.HostComputeNamespace = "5d2c9a1e-0f3b-4c6d-8e7f-a1b2c3d4e5f6"
	_, err := h.CreateEndpoint(ctx, n.ID, local)
	wantCode(t, err, hnslb.CodeInvalidParameter)
	local.HostComputeNamespace = ""
	ep, err := h.CreateEndpoint(ctx, n.ID, local)
	if err != nil {
		t.Fatal(err)
	}
	if !hnslb.IsGUID(ep.ID) || ep.HostComputeNetwork != n.ID || ep.SchemaVersion != hnslb.V2 {
		t.Errorf("created %+v", ep)
	}
	if ep.HostComputeNamespace != "" || ep.IsRemote() || !macPattern.MatchString(ep.MacAddress) {
		t.Errorf("local endpoint %+v", ep)
	}
	remote, err := h.CreateEndpoint(ctx, n.ID, remoteDoc("10.244.2.7", "192.168.1.12"))
	if err != nil {
		t.Fatal(err)
	}
	if !remote.IsRemote() || remote.ProviderAddress() != "192.168.1.12" {
		t.Errorf("remote endpoint %+v", remote)
	}
	byName, err := h.GetEndpointByName(ctx, "pod-a_eth0")
	if err != nil || byName.ID != ep.ID {
		t.Errorf("by name: %+v %v", byName, err)
	}
	_, err = h.GetEndpointByName(ctx, "nope")
	wantCode(t, err, hnslb.CodeEndpointNotFound)
	_, err = h.GetEndpointByID(ctx, "0b5e4c1e-0000-4000-8000-000000000000")
	wantCode(t, err, hnslb.CodeNotFound)

	other := mustNetwork(t, h, "other", hnslb.NetworkTypeL2Bridge)
	mustEndpoint(t, h, other.ID, endpointDoc("10.244.9.9"))
	ofNet, err := h.ListEndpointsOfNetwork(ctx, n.ID)
	if err != nil || len(ofNet) != 2 {
		t.Errorf("endpoints of network: %d %v", len(ofNet), err)
	}
	all, err := h.ListEndpoints(ctx)
	if err != nil || len(all) != 3 {
		t.Errorf("all endpoints: %d %v", len(all), err)
	}
}

func TestCreateEndpointRejects(t *testing.T) {
	badPA := remoteDoc("10.244.2.7", "not-an-ip")
	badPolicy := endpointDoc("10.244.1.5")
	badPolicy.Policies = []hnslb.EndpointPolicy{{Type: hnslb.EndpointPolicyOutBoundNAT, Settings: []byte(`[1,2]`)}}
	untyped := endpointDoc("10.244.1.5")
	untyped.Policies = []hnslb.EndpointPolicy{{Settings: []byte(`{}`)}}
	tests := []struct {
		name    string
		network string // "" uses the fixture's network
		doc     *hnslb.Endpoint
		want    hnslb.ErrorCode
	}{
		{"unknown network", "0b5e4c1e-0000-4000-8000-000000000000", endpointDoc("10.244.1.5"), hnslb.CodeNetworkNotFound},
		{"network ID not a GUID", "cbr0", endpointDoc("10.244.1.5"), hnslb.CodeInvalidParameter},
		{"nil document", "", nil, hnslb.CodeInvalidParameter},
		{"remote without an address", "", &hnslb.Endpoint{Flags: hnslb.EndpointFlagsRemoteEndpoint}, hnslb.CodeInvalidParameter},
		{"junk address", "", endpointDoc("10.244.1"), hnslb.CodeInvalidIP},
		{"two IPv4 addresses", "", endpointDoc("10.244.1.5", "10.244.1.6"), hnslb.CodeInvalidParameter},
		{"three addresses", "", endpointDoc("10.244.1.5", "fd00::5", "10.244.1.6"), hnslb.CodeInvalidParameter},
		{"prefix too long", "", &hnslb.Endpoint{IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.1.5", PrefixLength: 33}}}, hnslb.CodeInvalidParameter},
		{"bad provider address", "", badPA, hnslb.CodeInvalidIP},
		{"policy settings not an object", "", badPolicy, hnslb.CodeInvalidPolicy},
		{"policy without type", "", untyped, hnslb.CodeInvalidPolicy},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newSim(t, ProfileWS2022)
			n := mustNetwork(t, h, "cbr0", hnslb.NetworkTypeL2Bridge)
			netID := tc.network
			if netID == "" {
				netID = n.ID
			}
			ep, err := h.CreateEndpoint(ctx, netID, tc.doc)
			wantCode(t, err, tc.want)
			if ep != nil || len(h.Snapshot().Endpoints) != 0 {
				t.Errorf("failed create left %+v", h.Snapshot().Endpoints)
			}
		})
	}
}

func TestDualStackEndpoint(t *testing.T) {
	h := newSim(t, ProfileWS2022)
	n := mustNetwork(t, h, "cbr0", hnslb.NetworkTypeL2Bridge)
	ep := mustEndpoint(t, h, n.ID, endpointDoc("10.244.1.5", "fd00:10:244:1::5"))
	for _, vip := range []string{"10.96.0.10", "fd00:96::10"} {
		lb := lbDoc(vip, 80, ep.ID)
		if vip != "10.96.0.10" {
			lb.Flags = hnslb.LoadBalancerFlagsIPv6
		}
		if _, err := h.CreateLoadBalancer(ctx, lb); err != nil {
			t.Errorf("%s: %v", vip, err)
		}
	}
}

func TestEndpointIPUniqueness(t *testing.T) {
	tests := []struct {
		name          string
		profile       string
		first, second *hnslb.Endpoint
		sameNetwork   bool
		want          hnslb.ErrorCode
	}{
		{"two local, same IP", ProfileWS2025, endpointDoc("10.244.1.5"), endpointDoc("10.244.1.5"), true, hnslb.CodeAlreadyExists},
		{"two remote, same IP", ProfileWS2022, remoteDoc("10.244.2.5", ""), remoteDoc("10.244.2.5", ""), true, hnslb.CodeAlreadyExists},
		{"same IP written differently", ProfileWS2025, endpointDoc("fd00::5"), endpointDoc("fd00:0::0005"), true, hnslb.CodeAlreadyExists},
		{"shared IPv6 of a dual-stack endpoint", ProfileWS2025, endpointDoc("10.244.1.5", "fd00::5"), endpointDoc("fd00::5"), true, hnslb.CodeAlreadyExists},
		{"same IP, other network", ProfileWS2025, endpointDoc("10.244.1.5"), endpointDoc("10.244.1.5"), false, 0},
		{"local then remote on ws2019 (overlap bug)", ProfileWS2019, endpointDoc("10.244.1.5"), remoteDoc("10.244.1.5", ""), true, 0},
		{"remote then local on ws2022 (overlap bug)", ProfileWS2022, remoteDoc("10.244.1.5", ""), endpointDoc("10.244.1.5"), true, 0},
		{"local then remote on ws2025", ProfileWS2025, endpointDoc("10.244.1.5"), remoteDoc("10.244.1.5", ""), true, hnslb.CodeAlreadyExists},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newSim(t, tc.profile)
			a := mustNetwork(t, h, "a", hnslb.NetworkTypeL2Bridge)
			b := mustNetwork(t, h, "b", hnslb.NetworkTypeL2Bridge)
			mustEndpoint(t, h, a.ID, tc.first)
			target := b.ID
			if tc.sameNetwork {
				target = a.ID
			}
			_, err := h.CreateEndpoint(ctx, target, tc.second)
			if tc.want == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantCode(t, err, tc.want)
			if !hnslb.IsAlreadyExists(err) {
				t.Errorf("IsAlreadyExists(%v) = false", err)
			}
		})
	}
}

func TestEndpointIPFreedByDelete(t *testing.T) {
	h := newSim(t, ProfileWS2025)
	n := mustNetwork(t, h, "cbr0", hnslb.NetworkTypeL2Bridge)
	ep := mustEndpoint(t, h, n.ID, endpointDoc("10.244.1.5"))
	if err := h.DeleteEndpoint(ctx, ep.ID); err != nil {
		t.Fatal(err)
	}
	wantCode(t, h.DeleteEndpoint(ctx, ep.ID), hnslb.CodeNotFound)
	mustEndpoint(t, h, n.ID, endpointDoc("10.244.1.5"))
}

func TestReturnedObjectsAreCopies(t *testing.T) {
	h := newSim(t, ProfileWS2022)
	n := mustNetwork(t, h, "cbr0", hnslb.NetworkTypeL2Bridge)
	doc := remoteDoc("10.244.2.7", "192.168.1.12")
	ep := mustEndpoint(t, h, n.ID, doc)
	doc.IpConfigurations[0].IpAddress = "1.1.1.1"
	doc.Policies[0].Settings[2] = 'X'
	ep.IpConfigurations[0].IpAddress = "2.2.2.2"
	ep.Policies[0].Settings[2] = 'Y'
	got, err := h.GetEndpointByID(ctx, ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.IP() != "10.244.2.7" || got.ProviderAddress() != "192.168.1.12" {
		t.Errorf("stored endpoint changed through caller memory: %+v", got)
	}
	snap := h.Snapshot()
	snap.Endpoints[0].IpConfigurations[0].IpAddress = "3.3.3.3"
	if h.Snapshot().Endpoints[0].IP() != "10.244.2.7" {
		t.Error("snapshot shares memory with state")
	}
}
