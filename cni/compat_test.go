package cni

import (
	"encoding/json"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/containernetworking/cni/pkg/skel"
	current "github.com/containernetworking/cni/pkg/types/100"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// TestPolicyForms: v1 flat policies (win-* without apiVersion 2, Calico)
// become their v2 successors; v2 ones keep their settings; type names
// match without regard to case; win-* match "EndpointPolicy" ignoring
// case, sdn* exactly, and other names are skipped with a warning.
func TestPolicyForms(t *testing.T) {
	n, err := parseConfig([]byte(`{"cniVersion": "0.2.0", "name": "cbr0", "type": "win-bridge",
		"Policies": [
			{"Name": "EndpointPolicy", "Value": {"Type": "OutBoundNAT", "ExceptionList": ["10.244.0.0/16"]}},
			{"name": "endpointpolicy", "value": {"Type": "ROUTE", "DestinationPrefix": "10.96.0.0/12", "NeedEncap": true}},
			{"name": "EndpointPolicy", "value": {"Type": "PA", "PA": "192.168.0.11"}},
			{"name": "EndpointPolicy", "value": {"Type": "NAT", "InternalPort": 80, "ExternalPort": 8080, "Protocol": "udp"}},
			{"name": "EndpointPolicy", "value": {"Type": "SDNROUTE", "Settings": {"DestinationPrefix": "10.0.0.4/32", "NeedEncap": true}}},
			{"name": "EndpointPolicy", "value": {"Type": "ACL", "Protocols": "6", "Action": "Block"}},
			{"name": "NetworkPolicy", "value": {"Type": "OutBoundNAT"}}
		]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []hnslb.EndpointPolicy{
		hnslb.NewEndpointPolicy(hnslb.EndpointPolicyOutBoundNAT, hnslb.OutboundNatPolicySetting{Exceptions: []string{"10.244.0.0/16"}}),
		hnslb.NewEndpointPolicy(hnslb.EndpointPolicySDNRoute, hnslb.SDNRoutePolicySetting{DestinationPrefix: "10.96.0.0/12", NeedEncap: true}),
		hnslb.NewEndpointPolicy(hnslb.EndpointPolicyProviderAddress, hnslb.ProviderAddressEndpointPolicySetting{ProviderAddress: "192.168.0.11"}),
		hnslb.NewEndpointPolicy(hnslb.EndpointPolicyPortMapping, hnslb.PortMappingPolicySetting{Protocol: 17, InternalPort: 80, ExternalPort: 8080}),
		{Type: hnslb.EndpointPolicySDNRoute, Settings: json.RawMessage(`{"DestinationPrefix": "10.0.0.4/32", "NeedEncap": true}`)},
		{Type: hnslb.EndpointPolicyACL, Settings: json.RawMessage(`{"Action":"Block","Protocols":"6"}`)},
	}
	if len(n.configPolicies) != len(want) {
		t.Fatalf("policies %+v, want %d", n.configPolicies, len(want))
	}
	for i := range want {
		if n.configPolicies[i].Type != want[i].Type || !jsonEqual(n.configPolicies[i].Settings, want[i].Settings) {
			t.Errorf("policy %d: %s %s, want %s %s", i, n.configPolicies[i].Type, n.configPolicies[i].Settings, want[i].Type, want[i].Settings)
		}
	}
	if n.family != familyWin || n.Mode != ModeL2Bridge || n.Network != "cbr0" || len(n.warnings) != 1 {
		t.Errorf("family %d mode %q network %q warnings %q", n.family, n.Mode, n.Network, n.warnings)
	}

	sdn, err := parseConfig([]byte(`{"cniVersion": "0.3.0", "name": "vxlan0", "type": "sdnoverlay",
		"AdditionalArgs": [
			{"Name": "endpointpolicy", "Value": {"Type": "OutBoundNAT", "Settings": {"Exceptions": ["10.244.0.0/16"]}}},
			{"Name": "NetworkPolicy", "Value": {"Type": "VxlanPort", "Settings": {"Port": 8472}}}
		]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(sdn.configPolicies) != 0 || len(sdn.networkPolicies) != 1 || sdn.family != familySDN || sdn.Mode != ModeOverlay || len(sdn.warnings) != 1 {
		t.Errorf("sdn: policies %+v network policies %d family %d mode %q warnings %q", sdn.configPolicies, len(sdn.networkPolicies), sdn.family, sdn.Mode, sdn.warnings)
	}
}

// TestMergePolicies: hnscni's own policies join the configuration's
// without duplicates: NAT exceptions as one set in the configured
// OutBoundNAT (its other settings kept), an SDNRoute to a prefix already
// routed and a second ProviderAddress dropped, a loopback DSR policy
// already listed not repeated.
func TestMergePolicies(t *testing.T) {
	nat := func(s hnslb.OutboundNatPolicySetting) hnslb.EndpointPolicy {
		return hnslb.NewEndpointPolicy(hnslb.EndpointPolicyOutBoundNAT, s)
	}
	route := func(p string) hnslb.EndpointPolicy {
		return hnslb.NewEndpointPolicy(hnslb.EndpointPolicySDNRoute, hnslb.SDNRoutePolicySetting{DestinationPrefix: p, NeedEncap: true})
	}
	pa := func(a string) hnslb.EndpointPolicy {
		return hnslb.NewEndpointPolicy(hnslb.EndpointPolicyProviderAddress, hnslb.ProviderAddressEndpointPolicySetting{ProviderAddress: a})
	}
	config := []hnslb.EndpointPolicy{
		{Type: hnslb.EndpointPolicyOutBoundNAT, Settings: json.RawMessage(`{"Exceptions": ["10.244.0.0/16"], "VirtualIP": "192.168.0.11"}`)},
		route("10.96.0.0/12"),
		pa("192.168.0.11"),
		nat(hnslb.OutboundNatPolicySetting{Destinations: []string{"10.244.1.7"}}),
	}
	own := []hnslb.EndpointPolicy{
		nat(hnslb.OutboundNatPolicySetting{Exceptions: []string{"10.244.0.5/16", "10.96.0.0/12"}}),
		route("10.96.0.1/12"),
		route("192.168.0.11/32"),
		pa("192.168.0.99"),
		nat(hnslb.OutboundNatPolicySetting{Destinations: []string{"10.244.1.7"}}),
	}
	got := mergePolicies(config, own)
	want := []hnslb.EndpointPolicy{
		nat(hnslb.OutboundNatPolicySetting{VirtualIP: "192.168.0.11", Exceptions: []string{"10.244.0.0/16", "10.96.0.0/12"}}),
		route("10.96.0.0/12"),
		pa("192.168.0.11"),
		nat(hnslb.OutboundNatPolicySetting{Destinations: []string{"10.244.1.7"}}),
		route("192.168.0.11/32"),
	}
	if len(got) != len(want) {
		t.Fatalf("merged %d policies %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i].Type != want[i].Type || !jsonEqual(got[i].Settings, want[i].Settings) {
			t.Errorf("policy %d: %s %s, want %s %s", i, got[i].Type, got[i].Settings, want[i].Type, want[i].Settings)
		}
	}
}

// TestV1OutBoundNATKeepsItsDestinations: an HNS v1 OutBoundNAT with
// Destinations (loopback DSR as Calico and win-* write it) keeps them in
// v2 form; without them it would NAT every destination, and hnscni's own
// exceptions would join it.
func TestV1OutBoundNATKeepsItsDestinations(t *testing.T) {
	p, err := decodePolicy("policies[0]", json.RawMessage(`{"Type": "OutBoundNAT", "Destinations": ["10.244.1.7"]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := hnslb.NewEndpointPolicy(hnslb.EndpointPolicyOutBoundNAT, hnslb.OutboundNatPolicySetting{Destinations: []string{"10.244.1.7"}})
	if p.Type != want.Type || !jsonEqual(p.Settings, want.Settings) {
		t.Errorf("policy %s %s, want %s %s", p.Type, p.Settings, want.Type, want.Settings)
	}
}

// TestOwnExceptionsStayOutOfALoopbackDSRPolicy: hnscni's NAT exceptions
// join the configuration's first OutBoundNAT with exceptions, never a
// loopback DSR one (an OutBoundNAT with Destinations) listed before it,
// which would then NAT neither the pod's own address nor the cluster.
func TestOwnExceptionsStayOutOfALoopbackDSRPolicy(t *testing.T) {
	dsr := hnslb.NewEndpointPolicy(hnslb.EndpointPolicyOutBoundNAT, hnslb.OutboundNatPolicySetting{Destinations: []string{"10.244.1.7"}})
	own := hnslb.NewEndpointPolicy(hnslb.EndpointPolicyOutBoundNAT, hnslb.OutboundNatPolicySetting{Exceptions: []string{"10.244.0.0/16"}})
	got := mergePolicies([]hnslb.EndpointPolicy{dsr}, []hnslb.EndpointPolicy{own})
	if len(got) != 2 || !jsonEqual(got[0].Settings, dsr.Settings) || !jsonEqual(got[1].Settings, own.Settings) {
		t.Errorf("merged %s, want the loopback DSR policy as it was, then hnscni's exceptions", got)
	}
}

// TestReferenceEndpointShapes: what hnscni adds per family. A reference
// configuration says itself whether it NATs: win-bridge adds ipMasqNetwork
// as an exception, win-overlay the node's subnet under ipMasq, sdn* neither;
// l2bridge pods of win-bridge (and sdnbridge under forceBridgeGateway) use
// the subnet's second address as gateway, other sdn* pods IPAM's, the
// rest the network's; the MAC prefix is configurable.
func TestReferenceEndpointShapes(t *testing.T) {
	spec := endpointSpec{name: "c1_x", addrs: []podAddr{{addr: netip.MustParsePrefix("10.244.1.7/24")}}, nodeSubnet: netip.MustParsePrefix("10.244.1.0/24")}
	for _, tc := range []struct {
		name, conf string
		nat        []string // nil: no OutBoundNAT
		mac        string
	}{
		{"win-bridge ipMasqNetwork", `{"name": "cbr0", "type": "win-bridge", "ipMasq": true, "ipMasqNetwork": "10.244.0.0/16"}`, []string{"10.244.0.0/16"}, "0E-2A-0A-F4-01-07"},
		{"win-overlay ipMasq", `{"name": "vxlan0", "type": "win-overlay", "ipMasq": true, "ipMasqNetwork": "10.244.0.0/16", "endpointMacPrefix": "0e-2b"}`, []string{"10.244.1.0/24"}, "0E-2B-0A-F4-01-07"},
		{"win-overlay without ipMasq", `{"name": "vxlan0", "type": "win-overlay"}`, nil, "0E-2A-0A-F4-01-07"},
		{"sdnbridge ignores both", `{"name": "cbr0", "type": "sdnbridge", "ipMasq": true, "ipMasqNetwork": "10.244.0.0/16"}`, nil, "0E-2A-0A-F4-01-07"},
		{"Calico MAC prefix", `{"name": "Calico", "type": "calico", "mode": "windows-bgp", "vxlan_mac_prefix": "0E-2C"}`, nil, "0E-2C-0A-F4-01-07"},
		{"hnscni's own always NATs", `{"name": "cbr0", "type": "hnscni", "mode": "l2bridge"}`, []string{}, "0E-2A-0A-F4-01-07"},
		{"sdnbridge with hnscni's own exceptions", `{"name": "cbr0", "type": "sdnbridge", "clusterCIDR": "10.244.0.0/16"}`, []string{"10.244.0.0/16"}, "0E-2A-0A-F4-01-07"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := parseConfig([]byte(tc.conf))
			if err != nil {
				t.Fatal(err)
			}
			e := n.buildEndpoint(spec)
			var nats [][]string
			for _, p := range e.Policies {
				if p.Type == hnslb.EndpointPolicyOutBoundNAT {
					var s hnslb.OutboundNatPolicySetting
					_ = json.Unmarshal(p.Settings, &s)
					nats = append(nats, append([]string{}, s.Exceptions...))
				}
			}
			if (tc.nat == nil) != (len(nats) == 0) || (tc.nat != nil && (len(nats) != 1 || !slices.Equal(nats[0], tc.nat))) {
				t.Errorf("OutBoundNAT exceptions %v, want %v", nats, tc.nat)
			}
			if e.MacAddress != tc.mac {
				t.Errorf("MAC %s, want %s", e.MacAddress, tc.mac)
			}
		})
	}
	subnet := netip.MustParsePrefix("10.244.1.0/24")
	network := &hnslb.Network{Ipams: []hnslb.Ipam{{Subnets: []hnslb.Subnet{{IpAddressPrefix: "10.244.1.0/24",
		Routes: []hnslb.Route{{NextHop: "10.244.1.1", DestinationPrefix: "0.0.0.0/0"}}}}}}}
	// The network routes via .1; IPAM, where it gives one, says .5.
	ipamGW := &current.IPConfig{Address: net.IPNet{IP: net.IPv4(10, 244, 1, 7), Mask: net.CIDRMask(24, 32)}, Gateway: net.IPv4(10, 244, 1, 5)}
	additional := `"optionalFlags": {"gatewayFromAdditionalRoutes": true}, "additionalRoutes": [{"dst": "0.0.0.0/0", "gw": "10.244.1.9"}]`
	for _, tc := range []struct {
		conf string
		ipc  *current.IPConfig
		want string
	}{
		{`{"name": "cbr0", "type": "win-bridge"}`, ipamGW, "10.244.1.2"},
		{`{"name": "cbr0", "type": "sdnbridge", "optionalFlags": {"forceBridgeGateway": true}}`, ipamGW, "10.244.1.2"},
		{`{"name": "cbr0", "type": "sdnbridge"}`, ipamGW, "10.244.1.5"}, // allocateIpam: IPAM's
		{`{"name": "cbr0", "type": "sdnbridge"}`, nil, "10.244.1.1"},
		{`{"name": "vxlan0", "type": "sdnoverlay"}`, ipamGW, "10.244.1.5"},
		{`{"name": "vxlan0", "type": "win-overlay"}`, ipamGW, "10.244.1.1"},
		{`{"name": "cbr0", "type": "hnscni", "mode": "l2bridge"}`, ipamGW, "10.244.1.1"},
		{`{"name": "cbr0", "type": "sdnbridge", ` + additional + `}`, nil, "10.244.1.9"},
		{`{"name": "cbr0", "type": "sdnbridge", ` + additional + `}`, ipamGW, "10.244.1.5"}, // only fills a gateway IPAM did not give
		// The default route's gateway, not that of a route listed before it.
		{`{"name": "cbr0", "type": "sdnbridge", "optionalFlags": {"gatewayFromAdditionalRoutes": true},
			"additionalRoutes": [{"dst": "10.0.0.0/8", "gw": "10.244.1.8"}, {"dst": "0.0.0.0/0", "gw": "10.244.1.9"}]}`, nil, "10.244.1.9"},
	} {
		n, err := parseConfig([]byte(tc.conf))
		if err != nil {
			t.Fatal(err)
		}
		if got := n.gateway(network, tc.ipc, subnet); got.String() != tc.want {
			t.Errorf("%s, IPAM gateway %v: gateway %s, want %s", tc.conf, tc.ipc != nil, got, tc.want)
		}
	}
}

// TestGatewayIsNoNetworkRouteOutsideThePodsSubnet: the network subnet's
// default route gives the pod's gateway only where its next hop is in
// that subnet, where the pod can reach it; otherwise IPAM's gateway does.
func TestGatewayIsNoNetworkRouteOutsideThePodsSubnet(t *testing.T) {
	n, err := parseConfig([]byte(`{"name": "cbr0", "type": "hnscni", "mode": "l2bridge"}`))
	if err != nil {
		t.Fatal(err)
	}
	network := &hnslb.Network{Ipams: []hnslb.Ipam{{Subnets: []hnslb.Subnet{{IpAddressPrefix: "10.244.1.0/24",
		Routes: []hnslb.Route{{NextHop: "192.168.0.1", DestinationPrefix: "0.0.0.0/0"}}}}}}}
	ipc := &current.IPConfig{Address: net.IPNet{IP: net.IPv4(10, 244, 1, 7), Mask: net.CIDRMask(24, 32)}, Gateway: net.IPv4(10, 244, 1, 5)}
	if got := n.gateway(network, ipc, netip.MustParsePrefix("10.244.1.0/24")); got.String() != "10.244.1.5" {
		t.Errorf("gateway %s, want IPAM's 10.244.1.5 (the network's route leaves the subnet)", got)
	}
}

// TestSDNFieldsAloneMakeAConfigurationSDN: a configuration whose type names
// no reference plugin belongs to sdnbridge/sdnoverlay by any field only
// they have (AdditionalArgs, optionalFlags, additionalRoutes), and gets
// their rules: here the pod's namespace before the first search domain.
func TestSDNFieldsAloneMakeAConfigurationSDN(t *testing.T) {
	for _, field := range []string{
		`"AdditionalArgs": [{"Name": "EndpointPolicy", "Value": {"Type": "ACL", "Settings": {"Action": "Allow"}}}]`,
		`"optionalFlags": {"allowAclPortMapping": true}`,
		`"additionalRoutes": [{"dst": "10.0.0.0/8", "gw": "10.244.1.1"}]`,
	} {
		n, err := parseConfig([]byte(`{"name": "cbr0", "type": "hnscni", "mode": "l2bridge", "dns": {"search": ["svc.cluster.local"]}, ` + field + `}`))
		if err != nil {
			t.Fatal(err)
		}
		if d := n.dns("ns1"); len(d.Search) != 1 || d.Search[0] != "ns1.svc.cluster.local" {
			t.Errorf("with %s: search %v, want sdn*'s ns1.svc.cluster.local", field, d.Search)
		}
	}
}

// TestWinPolicyOrder: for a win-* configuration the endpoint's policies
// are those win-bridge and win-overlay would send, in their order
// (containernetworking/plugins pkg/hns Apply*Policy, as each plugin's ADD
// calls them): ipMasqNetwork / ipMasq is an OutBoundNAT of its own unless
// an OutBoundNAT already lists the CIDR; win-bridge appends port mappings
// and then loopback DSR; win-overlay appends ProviderAddress and the ipMasq
// NAT, with loopback DSR before them under apiVersion 2 and after them in
// HNS v1.
func TestWinPolicyOrder(t *testing.T) {
	nat := func(exceptions ...string) string {
		return `OutBoundNAT{"Exceptions":["` + strings.Join(exceptions, `","`) + `"]}`
	}
	const (
		dsr   = `OutBoundNAT{"Destinations":["10.244.1.7"]}`
		pa    = `ProviderAddress{"ProviderAddress":"192.168.0.11"}`
		route = `SDNRoute{"DestinationPrefix":"10.96.0.0/12","NeedEncap":true}`
		ports = `PortMapping{"ExternalPort":8080,"InternalPort":80,"Protocol":6}`
	)
	natPolicy := `{"name": "EndpointPolicy", "value": {"Type": "OutBoundNAT", "Settings": {"Exceptions": ["10.96.0.0/12"]}}}`
	routePolicy := `{"name": "EndpointPolicy", "value": {"Type": "ROUTE", "DestinationPrefix": "10.96.0.0/12", "NeedEncap": true}}`
	portMap := `"runtimeConfig": {"portMappings": [{"hostPort": 8080, "containerPort": 80, "protocol": "tcp"}]}`
	spec := endpointSpec{name: "c1_x", addrs: []podAddr{{addr: netip.MustParsePrefix("10.244.1.7/24")}},
		nodeSubnet: netip.MustParsePrefix("10.244.1.0/24"), providerAddress: netip.MustParseAddr("192.168.0.11"), loopbackDSR: true}
	for _, tc := range []struct {
		name, conf string
		overlay    bool
		want       []string
	}{
		{"win-bridge, ipMasqNetwork not listed", `{"name": "cbr0", "type": "win-bridge", "apiVersion": 2, "ipMasqNetwork": "10.244.0.0/16", ` + portMap + `,
			"policies": [` + natPolicy + `]}`, false, []string{nat("10.96.0.0/12"), nat("10.244.0.0/16"), ports, dsr}},
		{"win-bridge, ipMasqNetwork listed", `{"name": "cbr0", "type": "win-bridge", "ipMasqNetwork": "10.96.0.0/12",
			"policies": [` + natPolicy + `]}`, false, []string{nat("10.96.0.0/12"), dsr}},
		{"win-overlay v1", `{"name": "vxlan0", "type": "win-overlay", "ipMasq": true, "policies": [` + natPolicy + `, ` + routePolicy + `]}`,
			true, []string{nat("10.96.0.0/12"), route, pa, nat("10.244.1.0/24"), dsr}},
		{"win-overlay apiVersion 2", `{"name": "vxlan0", "type": "win-overlay", "apiVersion": 2, "ipMasq": true, "policies": [` + natPolicy + `]}`,
			true, []string{nat("10.96.0.0/12"), dsr, pa, nat("10.244.1.0/24")}},
		{"win-overlay, subnet listed", `{"name": "vxlan0", "type": "win-overlay", "ipMasq": true,
			"policies": [{"name": "EndpointPolicy", "value": {"Type": "OutBoundNAT", "ExceptionList": ["10.244.1.0/24"]}}]}`,
			true, []string{nat("10.244.1.0/24"), pa, dsr}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := parseConfig([]byte(tc.conf))
			if err != nil {
				t.Fatal(err)
			}
			s := spec
			if !tc.overlay {
				s.providerAddress = netip.Addr{}
			}
			var got []string
			for _, p := range n.buildEndpoint(s).Policies {
				var v any
				_ = json.Unmarshal(p.Settings, &v)
				b, _ := json.Marshal(v)
				got = append(got, string(p.Type)+string(b))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("policies\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
}

// TestSDNSearchDomain: sdnbridge/sdnoverlay prefix the first search domain
// with the pod's namespace (K8S_POD_NAMESPACE); win-* do not, and neither
// does sdnbridge for a container a runtime names no namespace for (no
// ".svc.cluster.local").
func TestSDNSearchDomain(t *testing.T) {
	for conf, want := range map[string]string{
		`{"name": "cbr0", "type": "sdnbridge", "dns": {"Search": ["svc.cluster.local", "cluster.local"]}}`:  "ns1.svc.cluster.local",
		`{"name": "cbr0", "type": "win-bridge", "dns": {"search": ["svc.cluster.local", "cluster.local"]}}`: "svc.cluster.local",
	} {
		n, err := parseConfig([]byte(conf))
		if err != nil {
			t.Fatal(err)
		}
		if d := n.dns("ns1"); len(d.Search) != 2 || d.Search[0] != want || d.Search[1] != "cluster.local" || n.DNS.Search[0] != "svc.cluster.local" {
			t.Errorf("%s: search %v, want %s first (configuration left as it was: %v)", conf, d.Search, want, n.DNS.Search)
		}
		if d := n.dns(""); len(d.Search) != 2 || d.Search[0] != "svc.cluster.local" {
			t.Errorf("%s without a pod namespace: search %v, want svc.cluster.local first", conf, d.Search)
		}
	}
}

// TestSDNPortMappingFlags: sdnbridge's optionalFlags shape port mappings:
// localRoutedPortMapping sets NatFlagsLocalRoutedVip, enableDualStack adds
// an IPv6 twin of each mapping, allowAclPortMapping an inbound allow ACL
// for the container port.
func TestSDNPortMappingFlags(t *testing.T) {
	n, err := parseConfig([]byte(`{"name": "cbr0", "type": "sdnbridge",
		"optionalFlags": {"localRoutedPortMapping": true, "enableDualStack": true, "allowAclPortMapping": true},
		"runtimeConfig": {"portMappings": [{"hostPort": 8080, "containerPort": 80, "protocol": "tcp", "hostIP": "192.168.0.11"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	e := n.buildEndpoint(endpointSpec{name: "c1_cbr0", addrs: []podAddr{{addr: netip.MustParsePrefix("10.244.1.7/24")}}})
	want := []hnslb.EndpointPolicy{
		hnslb.NewEndpointPolicy(hnslb.EndpointPolicyPortMapping, hnslb.PortMappingPolicySetting{Protocol: 6, InternalPort: 80, ExternalPort: 8080, VIP: "192.168.0.11", Flags: hnslb.NatFlagsLocalRoutedVip}),
		hnslb.NewEndpointPolicy(hnslb.EndpointPolicyPortMapping, hnslb.PortMappingPolicySetting{Protocol: 6, InternalPort: 80, ExternalPort: 8080, Flags: hnslb.NatFlagsLocalRoutedVip | hnslb.NatFlagsIPv6}),
		{Type: hnslb.EndpointPolicyACL, Settings: json.RawMessage(`{"Protocols": "6", "Action": "Allow", "Direction": "In", "LocalPorts": "80", "Priority": 1000}`)},
	}
	if len(e.Policies) != len(want) {
		t.Fatalf("policies %s, want %d", e.Policies, len(want))
	}
	for i := range want {
		if e.Policies[i].Type != want[i].Type || !jsonEqual(e.Policies[i].Settings, want[i].Settings) {
			t.Errorf("policy %d: %s %s, want %s %s", i, e.Policies[i].Type, e.Policies[i].Settings, want[i].Type, want[i].Settings)
		}
	}
}

// TestCheckReadsReferenceResults: CHECK finds the attachment's interface in
// hnscni's prevResult (CNI_IFNAME in CNI_NETNS) and in one a reference
// plugin wrote: win-bridge/win-overlay name it after the endpoint, with
// HNS's MAC (pkg/hns ConstructHcnResult), sdnbridge/sdnoverlay CNI_IFNAME
// with the MAC's raw bytes (cni.GetCurrResult); neither records a sandbox.
// The address is checked in every shape, a MAC where it reads as one;
// malformed entries are an error, not a panic.
func TestCheckReadsReferenceResults(t *testing.T) {
	const netns = "0b9e1f9e-5a5e-4c57-9c0b-0123456789ab"
	ep := &hnslb.Endpoint{Name: "c1_cbr0", MacAddress: "00-15-5D-01-02-03", IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.1.7"}}}
	args := &skel.CmdArgs{ContainerID: "c1", IfName: "eth0", Netns: netns}
	for what, tc := range map[string]struct {
		prev string
		ok   bool
	}{
		"hnscni's":                {`"interfaces": [{"name": "eth0", "mac": "00:15:5d:01:02:03", "sandbox": "` + netns + `"}], "ips": [{"interface": 0, "address": "10.244.1.7/24"}]`, true},
		"hnscni's, other MAC":     {`"interfaces": [{"name": "eth0", "mac": "00:15:5d:01:02:04", "sandbox": "` + netns + `"}], "ips": [{"interface": 0, "address": "10.244.1.7/24"}]`, false},
		"win-bridge's":            {`"interfaces": [{"name": "c1_cbr0", "mac": "00-15-5D-01-02-03"}], "ips": [{"address": "10.244.1.7/24"}]`, true},
		"win-bridge's, other IP":  {`"interfaces": [{"name": "c1_cbr0", "mac": "00-15-5D-01-02-03"}], "ips": [{"address": "10.244.1.8/24"}]`, false},
		"win-bridge's, other MAC": {`"interfaces": [{"name": "c1_cbr0", "mac": "00-15-5D-01-02-04"}], "ips": [{"address": "10.244.1.7/24"}]`, false},
		"sdnbridge's":             {`"interfaces": [{"name": "eth0", "mac": "\u0000\u0015]\u0001\u0002\u0003"}], "ips": [{"interface": 0, "address": "10.244.1.7/24"}]`, true},
		"another endpoint's":      {`"interfaces": [{"name": "c2_cbr0", "mac": "00-15-5D-01-02-03"}], "ips": [{"address": "10.244.1.7/24"}]`, false},
		"another sandbox":         {`"interfaces": [{"name": "eth0", "mac": "00:15:5d:01:02:03", "sandbox": "elsewhere"}], "ips": [{"interface": 0, "address": "10.244.1.7/24"}]`, false},
		"null entries":            {`"interfaces": [null, {"name": "c1_cbr0"}], "ips": [null]`, false},
	} {
		n, err := parseConfig([]byte(`{"cniVersion": "1.0.0", "name": "cbr0", "type": "win-bridge", "prevResult": {"cniVersion": "1.0.0", ` + tc.prev + `}}`))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		prev, err := current.NewResultFromResult(n.PrevResult)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if err := matchPrevResult(prev, ep, args); (err == nil) != tc.ok {
			t.Errorf("%s: %v, want ok %v", what, err, tc.ok)
		}
	}
}
