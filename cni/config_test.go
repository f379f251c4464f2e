package cni

import (
	"encoding/json"
	"net/netip"
	"reflect"
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
	d := n.dns("ns1")
	if !slices.Equal(d.Nameservers, []string{"1.1.1.1"}) || !slices.Equal(d.Search, []string{"svc.cluster.local"}) || !slices.Equal(d.Options, []string{"ndots:5"}) {
		t.Errorf("dns %+v", d)
	}
	// A delegating plugin (Flannel) passes runtimeConfig without the
	// capability; the reference plugins apply it all the same.
	n.Capabilities = nil
	if d := n.dns(""); !slices.Equal(d.Nameservers, []string{"1.1.1.1"}) {
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
		"no network, blank name": {map[string]any{"network": "  ", "name": ""}, types.ErrInvalidNetworkConfig},
		"typo of a field":        {map[string]any{"serviceCIRD": "10.96.0.0/12"}, types.ErrInvalidNetworkConfig},
		"typo of a flag":         {map[string]any{"optionalFlags": map[string]any{"forceBrigeGateway": true}}, types.ErrInvalidNetworkConfig},
		"apiVersion 3":           {map[string]any{"apiVersion": 3}, types.ErrInvalidNetworkConfig},
		"bad MAC prefix":         {map[string]any{"endpointMacPrefix": "0E2A"}, types.ErrInvalidNetworkConfig},
		"VNI below 4096":         {map[string]any{"vxlanVNI": 100}, types.ErrInvalidNetworkConfig},
		"bad ipMasqNetwork":      {map[string]any{"ipMasqNetwork": "10.244.0.0"}, types.ErrInvalidNetworkConfig},
		"policy not an object":   {map[string]any{"policies": []any{map[string]any{"name": "EndpointPolicy", "value": "x"}}}, types.ErrInvalidNetworkConfig},
		"policy without a type":  {map[string]any{"AdditionalArgs": []any{map[string]any{"Name": "EndpointPolicy", "Value": map[string]any{"Settings": map[string]any{}}}}}, types.ErrInvalidNetworkConfig},
		"route to no CIDR":       {map[string]any{"policies": []any{map[string]any{"name": "EndpointPolicy", "value": map[string]any{"Type": "ROUTE", "DestinationPrefix": ""}}}}, types.ErrInvalidNetworkConfig},
		"bad NAT exception":      {map[string]any{"AdditionalArgs": []any{map[string]any{"Name": "EndpointPolicy", "Value": map[string]any{"Type": "OutBoundNAT", "Settings": map[string]any{"Exceptions": []string{"cluster"}}}}}}, types.ErrInvalidNetworkConfig},
		"bad policy PA":          {map[string]any{"policies": []any{map[string]any{"name": "EndpointPolicy", "value": map[string]any{"Type": "PA", "PA": "node"}}}}, types.ErrInvalidNetworkConfig},
		"bad service CIDR":       {map[string]any{"serviceCIDR": "10.96.0.0"}, types.ErrInvalidNetworkConfig},
		"two IPv4 service CIDRs": {map[string]any{"serviceCIDR": "10.96.0.0/12,10.112.0.0/12"}, types.ErrInvalidNetworkConfig},
		"empty cluster CIDR":     {map[string]any{"clusterCIDR": "10.244.0.0/16,"}, types.ErrInvalidNetworkConfig},
		"bad exception":          {map[string]any{"outboundNATExceptions": []string{"x"}}, types.ErrInvalidNetworkConfig},
		"bad PA":                 {map[string]any{"providerAddress": "10.0.0.300"}, types.ErrInvalidNetworkConfig},
		"port 0":                 {map[string]any{"runtimeConfig": map[string]any{"portMappings": []map[string]any{{"hostPort": 0, "containerPort": 80}}}}, types.ErrInvalidNetworkConfig},
		"bad host IP":            {map[string]any{"runtimeConfig": map[string]any{"portMappings": []map[string]any{{"hostPort": 80, "containerPort": 80, "hostIP": "me"}}}}, types.ErrInvalidNetworkConfig},
		// Zones and leading zeros are refused as the reference plugins'
		// net.ParseIP refuses them.
		"leading-zero PA":     {map[string]any{"providerAddress": "010.0.0.11"}, types.ErrInvalidNetworkConfig},
		"zoned PA":            {map[string]any{"providerAddress": "fe80::11%eth0"}, types.ErrInvalidNetworkConfig},
		"zoned host IP":       {map[string]any{"runtimeConfig": map[string]any{"portMappings": []map[string]any{{"hostPort": 80, "containerPort": 80, "hostIP": "fe80::11%eth0"}}}}, types.ErrInvalidNetworkConfig},
		"zoned policy PA":     {map[string]any{"policies": []any{map[string]any{"name": "EndpointPolicy", "value": map[string]any{"Type": "PA", "PA": "fe80::11%eth0"}}}}, types.ErrInvalidNetworkConfig},
		"route to a zoned IP": {map[string]any{"policies": []any{map[string]any{"name": "EndpointPolicy", "value": map[string]any{"Type": "ROUTE", "DestinationPrefix": "fe80::11%eth0"}}}}, types.ErrInvalidNetworkConfig},
		"wrong field types":   {map[string]any{"loopbackDSR": "yes"}, types.ErrDecodingFailure},
		"bad prevResult":      {map[string]any{"prevResult": map[string]any{"ips": "none"}}, types.ErrDecodingFailure},
	} {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range c.change {
			m[k] = v
		}
		b, _ := json.Marshal(m)
		n, err := parseConfig(b)
		if err == nil {
			err = n.checkPortMappings() // ADD's check
		}
		te, ok := err.(*types.Error)
		if !ok || te.Code != c.code || te.Msg == "" {
			t.Errorf("%s: %v, want code %d", name, err, c.code)
		}
	}
}

// TestPortMappingsTakeEveryPortUpTo65535: a port mapping's host and
// container ports are 1-65535, both ends included.
func TestPortMappingsTakeEveryPortUpTo65535(t *testing.T) {
	n, err := parseConfig([]byte(`{"cniVersion": "1.1.0", "name": "pods", "type": "hnscni", "mode": "l2bridge",
		"runtimeConfig": {"portMappings": [{"hostPort": 65535, "containerPort": 65535}, {"hostPort": 1, "containerPort": 1}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := n.checkPortMappings(); err != nil {
		t.Errorf("ports 65535 and 1: %v", err)
	}
}

// TestShortUnknownFieldsAreNeverTypos: a field shorter than five letters
// hnscni does not know ("node", two edits from "mode" and "name") is
// another plugin's and ignored with a warning, never refused as a typo.
func TestShortUnknownFieldsAreNeverTypos(t *testing.T) {
	n, err := parseConfig([]byte(`{"cniVersion": "1.1.0", "name": "pods", "type": "hnscni", "mode": "l2bridge", "node": "n1"}`))
	if err != nil {
		t.Fatalf("a configuration with \"node\": %v", err)
	}
	if !slices.Equal(n.warnings, []string{`unknown configuration field "node" ignored`}) {
		t.Errorf("warnings %q, want the one for \"node\"", n.warnings)
	}
}

// TestHNSAssignedGatewaysKeepTheirFamily: an endpoint HNS gave an address
// per family carries a default route per family; each address's gateway
// is its own family's route's next hop.
func TestHNSAssignedGatewaysKeepTheirFamily(t *testing.T) {
	ep := &hnslb.Endpoint{Name: "c1_cbr0",
		IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.1.7", PrefixLength: 24}, {IpAddress: "fd00:10:244:1::7", PrefixLength: 64}},
		Routes:           []hnslb.Route{{NextHop: "10.244.1.1", DestinationPrefix: "0.0.0.0/0"}, {NextHop: "fd00:10:244:1::1", DestinationPrefix: "::/0"}}}
	got, err := hnsAssigned(ep, &hnslb.Network{Name: "cbr0"})
	if err != nil {
		t.Fatal(err)
	}
	var gateways []string
	for _, a := range got {
		gateways = append(gateways, a.gateway.String())
	}
	if want := []string{"10.244.1.1", "fd00:10:244:1::1"}; !slices.Equal(gateways, want) {
		t.Errorf("gateways %v, want each address's own family's %v", gateways, want)
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
		name:            "c1_vxlan0",
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
	e := n.buildEndpoint(endpointSpec{name: "c1_cbr0", addrs: []podAddr{
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

// TestAnAttachmentWithoutAnInterfaceNameIsEth0: an attachment that names
// no interface (a GC list entry without "ifname") stands for the pod's
// first one: its endpoint is "<containerID>_<network>", which GC then keeps.
func TestAnAttachmentWithoutAnInterfaceNameIsEth0(t *testing.T) {
	if got := endpointName("abc", "cbr0", ""); got != "abc_cbr0" {
		t.Errorf("endpointName without an interface = %q, want abc_cbr0", got)
	}
}

func TestEndpointNamesAndNamespaceID(t *testing.T) {
	for _, tc := range []struct{ cid, ifName, name string }{
		{"abc123", "eth0", "abc123_cbr0"}, // the reference plugins' name
		{"my_pod.1-x", "eth0", "my_pod.1-x_cbr0"},
		{"abc", "net1", "abc_cbr0:net1"}, // a second interface
		{"abc", "eth_1", "abc_cbr0:eth_1"},
		{"a_cbr0", "cbr0", "a_cbr0_cbr0:cbr0"}, // an interface named as the network
		{"a", "cbr0", "a_cbr0:cbr0"},
	} {
		if got := endpointName(tc.cid, "cbr0", tc.ifName); got != tc.name {
			t.Errorf("endpointName(%q, %q) = %q, want %q", tc.cid, tc.ifName, got, tc.name)
		}
		if c, i, ok := attachmentOf(tc.name, "cbr0"); !ok || c != tc.cid || i != tc.ifName {
			t.Errorf("attachmentOf(%q) = %q, %q, %v", tc.name, c, i, ok)
		}
	}
	for _, name := range []string{"cbr0_ep", "hnsproxy-source-vip", "_cbr0", "abc_cbr0:sixteen-chars-ifx", "abc_vxlan0", "abc_cbr0:"} {
		if c, i, ok := attachmentOf(name, "cbr0"); ok {
			t.Errorf("attachmentOf(%q) = %q, %q: not a name endpointName builds", name, c, i)
		}
	}
	if c, i, ok := legacyAttachmentOf(legacyEndpointName("abc_1", "eth_0")); !ok || c != "abc_1" || i != "eth_0" {
		t.Errorf("legacy name reads back as %q, %q, %v", c, i, ok)
	}
	withIPAM, err := parseConfig([]byte(`{"cniVersion": "1.1.0", "name": "cbr0", "type": "win-bridge", "ipam": {"type": "host-local"}}`))
	if err != nil {
		t.Fatal(err)
	}
	addr := []hnslb.IPConfig{{IpAddress: "10.244.1.7"}}
	for _, name := range []string{"abc_cbr0", "abc_eth0"} {
		if !withIPAM.ours(&hnslb.Endpoint{Name: name, MacAddress: "0e-2a-0a-f4-01-07", IpConfigurations: addr}) {
			t.Errorf("%s, an endpoint hnscni made, is not recognised", name)
		}
	}
	for what, e := range map[string]hnslb.Endpoint{
		"other MAC":  {Name: "abc_cbr0", MacAddress: "00-15-5D-01-02-03", IpConfigurations: addr},
		"remote":     {Name: "abc_cbr0", MacAddress: "0e-2a-0a-f4-01-07", IpConfigurations: addr, Flags: hnslb.EndpointFlagsRemoteEndpoint},
		"other name": {Name: "sourcevip", MacAddress: "0e-2a-0a-f4-01-07", IpConfigurations: addr},
		"no address": {Name: "abc_cbr0", MacAddress: "0e-2a-0a-f4-01-07"},
	} {
		if withIPAM.ours(&e) {
			t.Errorf("%s: taken for hnscni's", what)
		}
	}
	// Without IPAM HNS picks the MAC: the name alone marks an endpoint,
	// and legacy names (which always had IPAM) are not ours.
	noIPAM, err := parseConfig([]byte(`{"cniVersion": "1.1.0", "name": "cbr0", "type": "win-bridge"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !noIPAM.ours(&hnslb.Endpoint{Name: "abc_cbr0", MacAddress: "00-15-5D-01-02-03", IpConfigurations: addr}) ||
		noIPAM.ours(&hnslb.Endpoint{Name: "cbr0_ep", MacAddress: "00-15-5D-01-02-03", IpConfigurations: addr}) {
		t.Error("without IPAM: wrong endpoints taken for hnscni's")
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

// TestPrevResultSubnet: a DEL's prevResult gives the pod CIDR a release
// needs only where host-local can take it as a range; anything else,
// however malformed, gives none (and the placeholder is used).
func TestPrevResultSubnet(t *testing.T) {
	for raw, want := range map[string]string{
		`{"cniVersion": "1.0.0", "ips": [{"address": "10.244.3.7/24"}]}`:                                                "10.244.3.0/24",
		`{"cniVersion": "1.0.0", "ips": [{"address": "fd00::7/64"}, {"address": "10.244.3.7/24"}]}`:                     "10.244.3.0/24",
		`{"cniVersion": "1.0.0", "ips": [{"address": "10.244.3.7/32"}]}`:                                                "invalid Prefix",
		`{"cniVersion": "1.0.0", "ips": [{"address": "fd00::7/64"}]}`:                                                   "invalid Prefix",
		`{"cniVersion": "1.0.0", "ips": []}`:                                                                            "invalid Prefix",
		`{"cniVersion": "1.0.0", "interfaces": [{"name": "x"}], "ips": [{"interface": 5, "address": "10.244.3.7/24"}]}`: "10.244.3.0/24",
	} {
		n, err := parseConfig([]byte(`{"cniVersion": "1.0.0", "name": "Calico", "type": "calico", "prevResult": ` + raw + `}`))
		if err != nil {
			t.Errorf("%s: %v", raw, err)
			continue
		}
		if got := prevResultSubnet(n.PrevResult).String(); got != want {
			t.Errorf("%s: %s, want %s", raw, got, want)
		}
	}
	if p := prevResultSubnet(nil); p.IsValid() {
		t.Errorf("no prevResult: %s", p)
	}
}

// TestCalicoRuntimeDNSReplacesTheConfiguredDNS: Calico for Windows takes
// the runtime's DNS whole when it names a server (servers, searches and
// options, an empty one included) and the configured DNS whole otherwise
// (projectcalico/calico cni-plugin/pkg/dataplane/windows/dataplane_windows.go,
// DoNetworking), where win-bridge and win-overlay replace servers and
// searches one by one.
func TestCalicoRuntimeDNSReplacesTheConfiguredDNS(t *testing.T) {
	configured := types.DNS{Nameservers: []string{"10.96.0.10"}, Search: []string{"svc.cluster.local"}, Options: []string{"ndots:5"}}
	for name, c := range map[string]struct {
		runtime map[string]any
		want    types.DNS
	}{
		"servers only: searches and options go too": {
			map[string]any{"servers": []string{"8.8.8.8"}},
			types.DNS{Nameservers: []string{"8.8.8.8"}},
		},
		"no server: the runtime's searches are not taken": {
			map[string]any{"searches": []string{"example.com"}, "options": []string{"ndots:1"}},
			configured,
		},
		"kubelet's ClusterFirst": {
			map[string]any{"servers": []string{"10.96.0.10"}, "searches": []string{"ns1.svc.cluster.local", "svc.cluster.local", "cluster.local"}, "options": []string{"ndots:5"}},
			types.DNS{Nameservers: []string{"10.96.0.10"}, Search: []string{"ns1.svc.cluster.local", "svc.cluster.local", "cluster.local"}, Options: []string{"ndots:5"}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			doc, err := json.Marshal(map[string]any{
				"cniVersion": "0.3.1", "name": "Calico", "type": "calico", "mode": "windows-bgp",
				"ipam":          map[string]any{"type": "host-local"},
				"capabilities":  map[string]any{"dns": true},
				"DNS":           map[string]any{"Nameservers": configured.Nameservers, "Search": configured.Search, "Options": configured.Options},
				"runtimeConfig": map[string]any{"dns": c.runtime},
			})
			if err != nil {
				t.Fatal(err)
			}
			n, err := parseConfig(doc)
			if err != nil {
				t.Fatal(err)
			}
			if got := n.dns("ns1"); !reflect.DeepEqual(got, c.want) {
				t.Errorf("dns %+v, want %+v", got, c.want)
			}
		})
	}
}
