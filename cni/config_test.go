package cni

import (
	"encoding/json"
	"net/netip"
	"slices"
	"testing"

	"github.com/containernetworking/cni/pkg/types"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

func TestParseConfigDNSAndExceptions(t *testing.T) {
	n, err := parseConfig([]byte(`{
		"cniVersion": "1.1.0", "name": "pods", "type": "hnscni", "mode": "l2bridge", "network": "cbr0",
		"clusterCIDR": "10.244.0.0/16", "serviceCIDR": "10.96.0.0/12",
		"outboundNATExceptions": ["10.96.0.0/12", "192.168.0.5/24"],
		"ipam": {"type": "host-local"},
		"dns": {"nameservers": ["10.96.0.10"], "search": ["svc.cluster.local"], "options": ["ndots:5"]},
		"capabilities": {"dns": true},
		"runtimeConfig": {"dns": {"servers": ["1.1.1.1"]}}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	// Repeats drop out; host bits are masked.
	if got := n.natExceptionList(); !slices.Equal(got, []string{"10.244.0.0/16", "10.96.0.0/12", "192.168.0.0/24"}) {
		t.Errorf("exceptions %v", got)
	}
	// The runtime's servers win; fields it leaves out keep the configured values.
	d := n.dns()
	if !slices.Equal(d.Nameservers, []string{"1.1.1.1"}) || !slices.Equal(d.Search, []string{"svc.cluster.local"}) || !slices.Equal(d.Options, []string{"ndots:5"}) {
		t.Errorf("dns %+v", d)
	}
	// Without the capability the runtime's DNS is ignored.
	n.Capabilities = nil
	if d := n.dns(); !slices.Equal(d.Nameservers, []string{"10.96.0.10"}) {
		t.Errorf("dns without capability %+v", d)
	}
}

func TestParseConfigRejects(t *testing.T) {
	base := map[string]any{"cniVersion": "1.1.0", "name": "pods", "type": "hnscni", "mode": "overlay", "network": "vxlan0", "ipam": map[string]any{"type": "host-local"}}
	for name, c := range map[string]struct {
		change map[string]any
		code   uint
	}{
		"unknown mode":           {map[string]any{"mode": "nat"}, types.ErrInvalidNetworkConfig},
		"blank network":          {map[string]any{"network": "  "}, types.ErrInvalidNetworkConfig},
		"no ipam type":           {map[string]any{"ipam": map[string]any{}}, types.ErrInvalidNetworkConfig},
		"bad service CIDR":       {map[string]any{"serviceCIDR": "10.96.0.0"}, types.ErrInvalidNetworkConfig},
		"two IPv4 service CIDRs": {map[string]any{"serviceCIDR": "10.96.0.0/12,10.112.0.0/12"}, types.ErrInvalidNetworkConfig},
		"empty cluster CIDR":     {map[string]any{"clusterCIDR": "10.244.0.0/16,"}, types.ErrInvalidNetworkConfig},
		"bad exception":          {map[string]any{"outboundNATExceptions": []string{"x"}}, types.ErrInvalidNetworkConfig},
		"bad PA":                 {map[string]any{"providerAddress": "10.0.0.300"}, types.ErrInvalidNetworkConfig},
		"port 0":                 {map[string]any{"runtimeConfig": map[string]any{"portMappings": []map[string]any{{"hostPort": 0, "containerPort": 80}}}}, types.ErrInvalidNetworkConfig},
		"bad host IP":            {map[string]any{"runtimeConfig": map[string]any{"portMappings": []map[string]any{{"hostPort": 80, "containerPort": 80, "hostIP": "me"}}}}, types.ErrInvalidNetworkConfig},
		"wrong field types":      {map[string]any{"loopbackDSR": "yes"}, types.ErrDecodingFailure},
		"bad prevResult":         {map[string]any{"prevResult": map[string]any{"ips": "none"}}, types.ErrDecodingFailure},
	} {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range c.change {
			m[k] = v
		}
		b, _ := json.Marshal(m)
		_, err := parseConfig(b)
		te, ok := err.(*types.Error)
		if !ok || te.Code != c.code || te.Msg == "" {
			t.Errorf("%s: %v, want code %d", name, err, c.code)
		}
	}
}

func TestBuildEndpointOverlay(t *testing.T) {
	n, err := parseConfig([]byte(`{"cniVersion": "1.1.0", "name": "pods", "type": "hnscni", "mode": "overlay", "network": "vxlan0",
		"clusterCIDR": "10.244.0.0/16", "serviceCIDR": "10.96.0.0/12", "ipam": {"type": "host-local"},
		"runtimeConfig": {"portMappings": [{"hostPort": 5353, "containerPort": 53, "protocol": "UDP", "hostIP": "192.168.0.11"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	e := n.buildEndpoint(endpointSpec{
		name:            "c1_eth0",
		addrs:           []podAddr{{addr: netip.MustParsePrefix("10.244.1.7/24"), gateway: netip.MustParseAddr("10.244.1.1")}},
		providerAddress: netip.MustParseAddr("192.168.0.11"), loopbackDSR: true,
	})
	if e.MacAddress != "0E-2A-0A-F4-01-07" || cniMAC(e.MacAddress) != "0e:2a:0a:f4:01:07" {
		t.Errorf("MAC %s", e.MacAddress)
	}
	if e.IpConfigurations[0] != (hnslb.IPConfig{IpAddress: "10.244.1.7", PrefixLength: 24}) || e.Routes[0] != (hnslb.Route{NextHop: "10.244.1.1", DestinationPrefix: "0.0.0.0/0"}) {
		t.Errorf("address %+v route %+v", e.IpConfigurations, e.Routes)
	}
	var types []hnslb.EndpointPolicyType
	for _, p := range e.Policies {
		types = append(types, p.Type)
	}
	want := []hnslb.EndpointPolicyType{hnslb.EndpointPolicyOutBoundNAT, hnslb.EndpointPolicySDNRoute, hnslb.EndpointPolicyProviderAddress, hnslb.EndpointPolicyOutBoundNAT, hnslb.EndpointPolicyPortMapping}
	if !slices.Equal(types, want) {
		t.Fatalf("policies %v, want %v", types, want)
	}
	if e.ProviderAddress() != "192.168.0.11" {
		t.Errorf("PA %q", e.ProviderAddress())
	}
	var pm hnslb.PortMappingPolicySetting
	if err := json.Unmarshal(e.Policies[4].Settings, &pm); err != nil || pm != (hnslb.PortMappingPolicySetting{Protocol: 17, InternalPort: 53, ExternalPort: 5353, VIP: "192.168.0.11"}) {
		t.Errorf("port mapping %+v, %v", pm, err)
	}
}

// TestBuildEndpointDualStack: one endpoint carries both addresses, a
// default route per family, an SDNRoute per service CIDR, IPv4-only
// OutBoundNAT, and each host-wide port mapping twice (the second with the
// IPv6 flag).
func TestBuildEndpointDualStack(t *testing.T) {
	n, err := parseConfig([]byte(`{"cniVersion": "1.1.0", "name": "pods", "type": "hnscni", "mode": "l2bridge", "network": "cbr0",
		"clusterCIDR": "10.244.0.0/16, fd00:10:244::/56", "serviceCIDR": "10.96.0.0/12,fd00:10:96::/112", "ipam": {"type": "host-local"},
		"outboundNATExceptions": ["192.168.0.0/24", "fd00:1::/64"],
		"runtimeConfig": {"portMappings": [{"hostPort": 8080, "containerPort": 80}, {"hostPort": 8443, "containerPort": 443, "hostIP": "fd00:1::11"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	e := n.buildEndpoint(endpointSpec{name: "c1_eth0", addrs: []podAddr{
		{addr: netip.MustParsePrefix("10.244.1.7/24"), gateway: netip.MustParseAddr("10.244.1.1")},
		{addr: netip.MustParsePrefix("fd00:10:244:1::7/64"), gateway: netip.MustParseAddr("fd00:10:244:1::1")},
	}})
	if e.MacAddress != "0E-2A-0A-F4-01-07" {
		t.Errorf("MAC %s, want the IPv4 address's", e.MacAddress)
	}
	wantIPs := []hnslb.IPConfig{{IpAddress: "10.244.1.7", PrefixLength: 24}, {IpAddress: "fd00:10:244:1::7", PrefixLength: 64}}
	wantRoutes := []hnslb.Route{{NextHop: "10.244.1.1", DestinationPrefix: "0.0.0.0/0"}, {NextHop: "fd00:10:244:1::1", DestinationPrefix: "::/0"}}
	if !slices.Equal(e.IpConfigurations, wantIPs) || !slices.Equal(e.Routes, wantRoutes) {
		t.Errorf("addresses %+v routes %+v", e.IpConfigurations, e.Routes)
	}
	var nat hnslb.OutboundNatPolicySetting
	var sdn []string
	var pms []hnslb.PortMappingPolicySetting
	for _, p := range e.Policies {
		switch p.Type {
		case hnslb.EndpointPolicyOutBoundNAT:
			if err := json.Unmarshal(p.Settings, &nat); err != nil {
				t.Fatal(err)
			}
		case hnslb.EndpointPolicySDNRoute:
			var r hnslb.SDNRoutePolicySetting
			if err := json.Unmarshal(p.Settings, &r); err != nil || !r.NeedEncap {
				t.Errorf("SDNRoute %+v, %v", r, err)
			}
			sdn = append(sdn, r.DestinationPrefix)
		case hnslb.EndpointPolicyPortMapping:
			var pm hnslb.PortMappingPolicySetting
			if err := json.Unmarshal(p.Settings, &pm); err != nil {
				t.Fatal(err)
			}
			pms = append(pms, pm)
		}
	}
	if want := []string{"10.244.0.0/16", "10.96.0.0/12", "192.168.0.0/24"}; !slices.Equal(nat.Exceptions, want) {
		t.Errorf("OutBoundNAT exceptions %v, want the IPv4 ones %v", nat.Exceptions, want)
	}
	if want := []string{"10.96.0.0/12", "fd00:10:96::/112"}; !slices.Equal(sdn, want) {
		t.Errorf("SDNRoutes %v, want %v", sdn, want)
	}
	wantPMs := []hnslb.PortMappingPolicySetting{
		{Protocol: 6, InternalPort: 80, ExternalPort: 8080},
		{Protocol: 6, InternalPort: 80, ExternalPort: 8080, Flags: hnslb.NatFlagsIPv6},
		{Protocol: 6, InternalPort: 443, ExternalPort: 8443, VIP: "fd00:1::11", Flags: hnslb.NatFlagsIPv6},
	}
	if !slices.Equal(pms, wantPMs) {
		t.Errorf("port mappings %+v, want %+v", pms, wantPMs)
	}
}

func TestOwnNameAndNamespaceID(t *testing.T) {
	for name, want := range map[string]bool{
		endpointName("abc123", "eth0"):     true,
		endpointName("my_pod.1-x", "eth0"): true,
		"hnsproxy-source-vip":              false,
		"abc_eth_0x":                       true, // the split is at the last "_": (abc_eth, 0x)
		"_eth0":                            false,
		"abc_" + "sixteen-chars-ifx":       false,
	} {
		if got := ownName.MatchString(name); got != want {
			t.Errorf("ownName(%q) = %v, want %v", name, got, want)
		}
	}
	mine := &hnslb.Endpoint{Name: "abc_eth0", MacAddress: "0e-2a-0a-f4-01-07", IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.1.7"}}}
	if !ours(mine) {
		t.Error("an endpoint hnscni made is not recognised")
	}
	for what, e := range map[string]hnslb.Endpoint{
		"other MAC":  {Name: "abc_eth0", MacAddress: "00-15-5D-01-02-03", IpConfigurations: mine.IpConfigurations},
		"remote":     {Name: "abc_eth0", MacAddress: mine.MacAddress, IpConfigurations: mine.IpConfigurations, Flags: hnslb.EndpointFlagsRemoteEndpoint},
		"other name": {Name: "sourcevip", MacAddress: mine.MacAddress, IpConfigurations: mine.IpConfigurations},
		"no address": {Name: "abc_eth0", MacAddress: mine.MacAddress},
	} {
		if ours(&e) {
			t.Errorf("%s: taken for hnscni's", what)
		}
	}
	if id, err := namespaceID("{0B9E1F9E-5A5E-4C57-9C0B-0123456789AB}"); err != nil || id != "0B9E1F9E-5A5E-4C57-9C0B-0123456789AB" {
		t.Errorf("braced GUID: %q, %v", id, err)
	}
	for _, bad := range []string{"", "/var/run/netns/x", "0b9e1f9e-5a5e-4c57-9c0b", "../0b9e1f9e-5a5e-4c57-9c0b-0123456789ab"} {
		if _, err := namespaceID(bad); err == nil {
			t.Errorf("namespaceID(%q) accepted", bad)
		}
	}
}
