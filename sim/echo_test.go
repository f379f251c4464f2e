package sim

import (
	"slices"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

func TestParseEcho(t *testing.T) {
	e, err := ParseEcho("drop-undeclared-flags, upper-guids,schema-minor")
	if err != nil || e != (Echo{DropUndeclaredFlags: true, UpperGUIDs: true, SchemaMinor: 1}) {
		t.Errorf("ParseEcho = %+v, %v", e, err)
	}
	if e, err := ParseEcho(""); err != nil || e != (Echo{}) {
		t.Errorf(`ParseEcho("") = %+v, %v`, e, err)
	}
	all, err := ParseEcho("all")
	if err != nil || !all.DropUnconfirmedFlags || !all.Reorder || !all.OmitEmpty || !all.UnknownFields || !all.DropRemoteEndpointNames || !all.DropDistribution {
		t.Errorf("ParseEcho(all) = %+v, %v", all, err)
	}
	if _, err := ParseEcho("upper-guids,shout"); err == nil || !strings.Contains(err.Error(), `"shout"`) {
		t.Errorf("an unknown option: %v", err)
	}
}

// TestEchoChangesAnswersNotState: every answer (create reply, get, list)
// shows the echo; what HNS holds, its snapshot and the next write do not.
func TestEchoChangesAnswersNotState(t *testing.T) {
	h := newSim(t, ProfileWS2025)
	a := sharedBackend(t, h)
	b := mustEndpoint(t, h, h.Snapshot().Networks[0].ID, endpointDoc("10.255.0.2")).ID
	h.SetEcho(Echo{DropUndeclaredFlags: true, UpperGUIDs: true, Reorder: true, OmitEmpty: true, SchemaMinor: 3})
	sent := &hnslb.LoadBalancer{
		HostComputeEndpoints: []string{a, b}, FrontendVIPs: []string{"10.96.0.1", "10.96.0.2"},
		PortMappings: []hnslb.PortMapping{{Protocol: 6, InternalPort: 80, ExternalPort: 80,
			Flags: hnslb.PortMappingFlagsLocalRoutedVIP | hnslb.PortMappingFlagsVipExternalIP}},
	}
	created, err := h.CreateLoadBalancer(ctx, sent)
	if err != nil {
		t.Fatal(err)
	}
	got, err := h.GetLoadBalancerByID(ctx, created.ID)
	if err != nil {
		t.Fatal(err)
	}
	listed, err := h.ListLoadBalancers(ctx)
	if err != nil || len(listed) != 1 {
		t.Fatalf("list %v %v", listed, err)
	}
	for _, lb := range []*hnslb.LoadBalancer{created, got, &listed[0]} {
		if lb.ID != strings.ToUpper(lb.ID) || lb.PortMappings[0].Flags != hnslb.PortMappingFlagsLocalRoutedVIP ||
			lb.SchemaVersion.Minor != 3 || lb.HostComputeEndpoints[0] != strings.ToUpper(lb.HostComputeEndpoints[0]) {
			t.Errorf("answer %+v", lb)
		}
	}
	if slices.Equal(created.HostComputeEndpoints, got.HostComputeEndpoints) {
		t.Errorf("two answers in the same order %v: Reorder rotates each", got.HostComputeEndpoints)
	}
	// Another agent's load balancer may carry several VIPs; their order is HNS's too.
	if slices.Equal(created.FrontendVIPs, got.FrontendVIPs) {
		t.Errorf("two answers list the VIPs in the same order %v: Reorder rotates them too", got.FrontendVIPs)
	}
	stored := h.Snapshot().LoadBalancers[0]
	if stored.ID != strings.ToLower(created.ID) || stored.PortMappings[0].Flags != sent.PortMappings[0].Flags ||
		stored.SchemaVersion != hnslb.V2 || !slices.Equal(stored.HostComputeEndpoints, []string{a, b}) ||
		!slices.Equal(stored.FrontendVIPs, sent.FrontendVIPs) {
		t.Errorf("stored %+v", stored)
	}
	// GUIDs come back as they were answered: HNS stores them lower case.
	upd := *got
	upd.HostComputeEndpoints = []string{strings.ToUpper(a)}
	if _, err := h.UpdateLoadBalancer(ctx, got.ID, &upd); err != nil {
		t.Fatal(err)
	}
	if s := h.Snapshot().LoadBalancers[0]; !slices.Equal(s.HostComputeEndpoints, []string{a}) {
		t.Errorf("stored after update %v", s.HostComputeEndpoints)
	}
	ep, err := h.GetEndpointByID(ctx, b)
	if err != nil || ep.ID != strings.ToUpper(b) || ep.HostComputeNetwork != strings.ToUpper(ep.HostComputeNetwork) || ep.SchemaVersion.Minor != 3 {
		t.Errorf("endpoint answer %+v %v", ep, err)
	}
	h.SetEcho(Echo{DropUnconfirmedFlags: true})
	if got, _ := h.GetLoadBalancerByID(ctx, created.ID); got.PortMappings[0].Flags != hnslb.PortMappingFlagsLocalRoutedVIP || got.ID != strings.ToLower(got.ID) {
		t.Errorf("after SetEcho %+v", got)
	}
}

// TestEchoReorderRotatesADualStackEndpointsAddresses: under Reorder a
// dual-stack endpoint's addresses come back in turn IPv6 first; HNS
// stores them as sent.
func TestEchoReorderRotatesADualStackEndpointsAddresses(t *testing.T) {
	h := newSim(t, ProfileWS2025)
	sharedBackend(t, h) // makes the network
	h.SetEcho(Echo{Reorder: true})
	ep := mustEndpoint(t, h, h.Snapshot().Networks[0].ID, endpointDoc("10.255.0.9", "fd00:10:244::9"))
	again, err := h.GetEndpointByID(ctx, ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	first := []string{ep.IpConfigurations[0].IpAddress, again.IpConfigurations[0].IpAddress}
	slices.Sort(first)
	if !slices.Equal(first, []string{"10.255.0.9", "fd00:10:244::9"}) {
		t.Errorf("two answers list first %v: Reorder rotates each", first)
	}
	for _, e := range h.Snapshot().Endpoints {
		if e.ID == ep.ID && e.IpConfigurations[0].IpAddress != "10.255.0.9" {
			t.Errorf("stored %v", e.IpConfigurations)
		}
	}
}

// TestEchoLongIPv6: with LongIPv6 every answer writes IPv6 addresses in
// full, upper case; IPv4 addresses and what HNS stores stay as sent.
func TestEchoLongIPv6(t *testing.T) {
	h := newSim(t, ProfileWS2025)
	sharedBackend(t, h) // makes the network
	netID := h.Snapshot().Networks[0].ID
	h.SetEcho(Echo{LongIPv6: true})
	ep := mustEndpoint(t, h, netID, endpointDoc("10.255.0.9", "fd00:10:244::9"))
	if got := []string{ep.IpConfigurations[0].IpAddress, ep.IpConfigurations[1].IpAddress}; !slices.Equal(got, []string{"10.255.0.9", "FD00:0010:0244:0000:0000:0000:0000:0009"}) {
		t.Errorf("endpoint answered %v", got)
	}
	lb, err := h.CreateLoadBalancer(ctx, &hnslb.LoadBalancer{
		HostComputeEndpoints: []string{ep.ID}, FrontendVIPs: []string{"fd00:10:96::1"}, SourceVIP: "fd00:10:244::2",
		Flags:        hnslb.LoadBalancerFlagsIPv6,
		PortMappings: []hnslb.PortMapping{{Protocol: 6, InternalPort: 80, ExternalPort: 80}},
	})
	if err != nil {
		t.Fatal(err)
	}
	listed, err := h.ListLoadBalancers(ctx)
	if err != nil || len(listed) != 1 {
		t.Fatalf("list %v %v", listed, err)
	}
	for _, l := range []*hnslb.LoadBalancer{lb, &listed[0]} {
		if l.FrontendVIPs[0] != "FD00:0010:0096:0000:0000:0000:0000:0001" || l.SourceVIP != "FD00:0010:0244:0000:0000:0000:0000:0002" {
			t.Errorf("load balancer answered VIP %v, source VIP %s", l.FrontendVIPs, l.SourceVIP)
		}
	}
	snap := h.Snapshot()
	if s := snap.LoadBalancers[0]; s.FrontendVIPs[0] != "fd00:10:96::1" || s.SourceVIP != "fd00:10:244::2" {
		t.Errorf("stored %v, %s", s.FrontendVIPs, s.SourceVIP)
	}
	for _, e := range snap.Endpoints {
		if e.ID == ep.ID && e.IpConfigurations[1].IpAddress != "fd00:10:244::9" {
			t.Errorf("stored endpoint %v", e.IpConfigurations)
		}
	}
}

// TestEchoDropsRemoteEndpointNames: with DropRemoteEndpointNames every
// answer about a remote endpoint (create reply, get, list) lacks its name; a
// local endpoint keeps its name, and HNS keeps both.
func TestEchoDropsRemoteEndpointNames(t *testing.T) {
	h := newSim(t, ProfileWS2025)
	h.SetEcho(Echo{DropRemoteEndpointNames: true})
	net := mustNetwork(t, h, "cbr0", hnslb.NetworkTypeL2Bridge).ID
	remote := remoteDoc("10.244.2.5", "")
	remote.Name = "hnsproxy-remote-10.244.2.5"
	local := endpointDoc("10.244.1.5")
	local.Name = "pod_cbr0"
	created := mustEndpoint(t, h, net, remote)
	if created.Name != "" {
		t.Errorf("create reply named %q", created.Name)
	}
	if got := mustEndpoint(t, h, net, local); got.Name != local.Name {
		t.Errorf("local endpoint's create reply named %q", got.Name)
	}
	if got, err := h.GetEndpointByID(ctx, created.ID); err != nil || got.Name != "" {
		t.Errorf("get: %q %v", got.Name, err)
	}
	listed, err := h.ListEndpointsOfNetwork(ctx, net)
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range listed {
		if want := map[bool]string{true: "", false: local.Name}[ep.IsRemote()]; ep.Name != want {
			t.Errorf("listed %s named %q, want %q", ep.IP(), ep.Name, want)
		}
	}
	for _, ep := range h.Snapshot().Endpoints {
		if ep.Name == "" {
			t.Errorf("HNS lost the name of %s", ep.IP())
		}
	}
}

// TestEchoDropsDistribution: with DropDistribution a session-affinity load
// balancer is answered without its distribution, in a create's reply and a
// listing alike, and HNS keeps applying it.
func TestEchoDropsDistribution(t *testing.T) {
	h := newSim(t, ProfileWS2025)
	a := sharedBackend(t, h)
	h.SetEcho(Echo{DropDistribution: true})
	created, err := h.CreateLoadBalancer(ctx, &hnslb.LoadBalancer{
		HostComputeEndpoints: []string{a}, FrontendVIPs: []string{"10.96.0.1"},
		PortMappings: []hnslb.PortMapping{{Protocol: 6, InternalPort: 80, ExternalPort: 80, DistributionType: hnslb.DistributionSourceIP}},
	})
	if err != nil {
		t.Fatal(err)
	}
	listed, err := h.ListLoadBalancers(ctx)
	if err != nil || len(listed) != 1 {
		t.Fatalf("list %v %v", listed, err)
	}
	for _, lb := range []*hnslb.LoadBalancer{created, &listed[0]} {
		if d := lb.PortMappings[0].DistributionType; d != hnslb.DistributionNone {
			t.Errorf("answered distribution %d, want none", d)
		}
	}
	if d := h.Snapshot().LoadBalancers[0].PortMappings[0].DistributionType; d != hnslb.DistributionSourceIP {
		t.Errorf("stored distribution %d, want SourceIP", d)
	}
}
