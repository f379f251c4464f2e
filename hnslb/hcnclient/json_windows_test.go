//go:build windows

package hcnclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/Microsoft/hcsshim/hcn"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// These tests prove that hnslb's copies of the HNS v2 types produce exactly
// the JSON hcn produces, so what hnsproxy sends through the simulator is what
// it sends to HNS. Three angles, each for every object kind and policy
// setting we use:
//   - realistic objects as hnsproxy and hnscni build them;
//   - every field set (by reflection, on both sides), which catches a field
//     one side lacks or names differently, in either direction;
//   - every field zero, which catches an omitempty one side lacks.

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %T: %v", v, err)
	}
	return raw
}

// assertSameJSON converts from (one side's type) to To and back to From,
// and requires all three JSON documents to be byte-identical.
func assertSameJSON[To, From any](t *testing.T, from *From) {
	t.Helper()
	want := mustJSON(t, from)
	to, err := convert[To](from)
	if err != nil {
		t.Fatalf("convert %T: %v", from, err)
	}
	if got := mustJSON(t, to); !bytes.Equal(want, got) {
		t.Errorf("%T -> %T changes the JSON %s:\n %T: %s\n %T: %s", from, to, firstDiff(want, got), from, want, to, got)
	}
	back, err := convert[From](to)
	if err != nil {
		t.Fatalf("convert back %T: %v", to, err)
	}
	if got := mustJSON(t, back); !bytes.Equal(want, got) {
		t.Errorf("%T -> %T -> %T changes the JSON %s:\n want %s\n got  %s", from, to, back, firstDiff(want, got), want, got)
	}
}

// firstDiff says where two JSON documents part, with a little context.
func firstDiff(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(0, i-30)
	return fmt.Sprintf("from byte %d: %q vs %q", i, a[from:min(len(a), i+30)], b[from:min(len(b), i+30)])
}

// assertPairJSON checks one pair of mirror types with realistic, fully
// populated and zero values, in both directions.
func assertPairJSON[Ours, Hcn any](t *testing.T, realistic ...*Ours) {
	t.Helper()
	for _, o := range realistic {
		assertSameJSON[Hcn](t, o)
	}
	fullOurs, fullHcn := new(Ours), new(Hcn)
	fill(reflect.ValueOf(fullOurs).Elem(), "")
	fill(reflect.ValueOf(fullHcn).Elem(), "")
	assertSameJSON[Hcn](t, fullOurs)
	assertSameJSON[Ours](t, fullHcn)
	assertSameJSON[Hcn](t, new(Ours))
	assertSameJSON[Ours](t, new(Hcn))
}

// fill sets every field of v to a non-zero value derived from its path.
func fill(v reflect.Value, path string) {
	switch {
	case v.Type() == reflect.TypeFor[json.RawMessage]():
		v.SetBytes([]byte(fmt.Sprintf(`{"filled":%q}`, path)))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("v" + path)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(7 + len(path)%50))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		v.SetUint(uint64(7 + len(path)%50))
	case reflect.Interface:
		v.Set(reflect.ValueOf("any" + path))
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), path)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := 0; i < 2; i++ {
			fill(v.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, path+".key")
		fill(e, path+".val")
		v.SetMapIndex(k, e)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), path+"."+v.Type().Field(i).Name)
			}
		}
	default:
		panic(fmt.Sprintf("fill: unhandled kind %s at %s", v.Kind(), path))
	}
}

const (
	podNet   = "6e4bf6a4-8a37-4c9d-b6c2-0d1e2f3a4b5c"
	localEP  = "0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9"
	remoteEP = "9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a"
	sourceEP = "1a2b3c4d-5e6f-4708-9a1b-2c3d4e5f6a7b"
)

func TestLoadBalancerJSONMatchesHcn(t *testing.T) {
	clusterIP := &hnslb.LoadBalancer{
		ID:                   "c0ffee00-0000-4000-8000-000000000001",
		HostComputeEndpoints: []string{localEP, remoteEP},
		SourceVIP:            "10.244.1.2",
		FrontendVIPs:         []string{"10.96.0.10"},
		PortMappings: []hnslb.PortMapping{{
			Protocol: hnslb.ProtocolUDP, InternalPort: 53, ExternalPort: 53,
			DistributionType: hnslb.DistributionSourceIP,
		}},
		SchemaVersion: hnslb.V2,
		Flags:         hnslb.LoadBalancerFlagsDSR | hnslb.LoadBalancerFlagsIPv6,
	}
	nodePort := &hnslb.LoadBalancer{
		HostComputeEndpoints: []string{localEP},
		SourceVIP:            "10.244.1.2",
		PortMappings: []hnslb.PortMapping{{
			Protocol: hnslb.ProtocolTCP, InternalPort: 8080, ExternalPort: 30080,
			DistributionType: hnslb.DistributionSourceIPProtocol,
			Flags:            hnslb.PortMappingFlagsLocalRoutedVIP | hnslb.PortMappingFlagsVipExternalIP,
		}},
		SchemaVersion: hnslb.V2,
	}
	preserveDIP := &hnslb.LoadBalancer{
		HostComputeEndpoints: []string{localEP},
		SourceVIP:            "10.244.1.2",
		FrontendVIPs:         []string{"203.0.113.7"},
		PortMappings: []hnslb.PortMapping{{
			Protocol: hnslb.ProtocolTCP, InternalPort: 443, ExternalPort: 443,
			Flags: hnslb.PortMappingFlagsILB | hnslb.PortMappingFlagsUseMux |
				hnslb.PortMappingFlagsPreserveDIP | hnslb.PortMappingFlagsVipExternalIP,
		}},
		SchemaVersion: hnslb.V2,
		Flags:         hnslb.LoadBalancerFlagsDSR,
	}
	assertPairJSON[hnslb.LoadBalancer, hcn.HostComputeLoadBalancer](t, clusterIP, nodePort, preserveDIP)
	assertPairJSON[hnslb.PortMapping, hcn.LoadBalancerPortMapping](t, &preserveDIP.PortMappings[0])

	// The document HNS receives for a ClusterIP load balancer, as hcn writes it.
	h, err := convert[hcn.HostComputeLoadBalancer](clusterIP)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"ID":"c0ffee00-0000-4000-8000-000000000001","HostComputeEndpoints":["` + localEP + `","` + remoteEP + `"],` +
		`"SourceVIP":"10.244.1.2","FrontendVIPs":["10.96.0.10"],` +
		`"PortMappings":[{"Protocol":17,"InternalPort":53,"ExternalPort":53,"DistributionType":2}],` +
		`"SchemaVersion":{"Major":2,"Minor":0},"Flags":3}`
	if got := string(mustJSON(t, h)); got != want {
		t.Errorf("hcn JSON of a ClusterIP load balancer:\n got  %s\n want %s", got, want)
	}
}

func TestEndpointJSONMatchesHcn(t *testing.T) {
	local := &hnslb.Endpoint{
		ID:                 localEP,
		Name:               "0123456789ab_eth0",
		HostComputeNetwork: podNet,
		Policies: []hnslb.EndpointPolicy{
			hnslb.NewEndpointPolicy(hnslb.EndpointPolicyOutBoundNAT, hnslb.OutboundNatPolicySetting{
				VirtualIP:        "192.168.1.10",
				Exceptions:       []string{"10.244.0.0/16", "10.96.0.0/12", "192.168.1.0/24"},
				Destinations:     []string{"0.0.0.0/0"},
				Flags:            hnslb.NatFlagsLocalRoutedVip,
				MaxPortPoolUsage: 80,
			}),
			hnslb.NewEndpointPolicy(hnslb.EndpointPolicySDNRoute, hnslb.SDNRoutePolicySetting{
				DestinationPrefix: "10.96.0.0/12", NeedEncap: true,
			}),
			hnslb.NewEndpointPolicy(hnslb.EndpointPolicySDNRoute, hnslb.SDNRoutePolicySetting{
				DestinationPrefix: "192.168.1.10/32", NextHop: "10.244.1.1",
			}),
			hnslb.NewEndpointPolicy(hnslb.EndpointPolicyProviderAddress, hnslb.ProviderAddressEndpointPolicySetting{
				ProviderAddress: "192.168.1.10",
			}),
			hnslb.NewEndpointPolicy(hnslb.EndpointPolicyPortMapping, hnslb.PortMappingPolicySetting{
				Protocol: hnslb.ProtocolTCP, InternalPort: 80, ExternalPort: 8080, VIP: "192.168.1.10",
				Flags: hnslb.NatFlagsLocalRoutedVip | hnslb.NatFlagsIPv6,
			}),
			{Type: hnslb.EndpointPolicyEncapOverhead, Settings: json.RawMessage(`{"Overhead":50}`)},
		},
		IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.1.5", PrefixLength: 24}, {IpAddress: "fd00:10:244:1::5", PrefixLength: 64}},
		Dns: hnslb.DNS{
			Domain: "default.svc.cluster.local", Search: []string{"default.svc.cluster.local", "svc.cluster.local"},
			ServerList: []string{"10.96.0.10"}, Options: []string{"ndots:5"},
		},
		Routes:        []hnslb.Route{{NextHop: "10.244.1.1", DestinationPrefix: "0.0.0.0/0", Metric: 5}},
		MacAddress:    "00-15-5D-01-02-05",
		SchemaVersion: hnslb.V2,
	}
	remote := &hnslb.Endpoint{
		ID:                 remoteEP,
		HostComputeNetwork: podNet,
		Policies: []hnslb.EndpointPolicy{
			hnslb.NewEndpointPolicy(hnslb.EndpointPolicyProviderAddress, hnslb.ProviderAddressEndpointPolicySetting{
				ProviderAddress: "192.168.1.11",
			}),
		},
		IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.244.2.7"}},
		MacAddress:       "02-11-0a-f4-02-07",
		Flags:            hnslb.EndpointFlagsRemoteEndpoint,
		SchemaVersion:    hnslb.V2,
	}
	// What HNS returns for a local endpoint: attached to a namespace, with health.
	returned := *local
	returned.HostComputeNamespace = "5d2c9a1e-0f3b-4c6d-8e7f-a1b2c3d4e5f6"
	returned.Health = hnslb.Health{Extra: hnslb.ExtraParams{
		Resources:  json.RawMessage(`{"Allocators":[{"Tag":"Endpoint Port"}]}`),
		SwitchGuid: "a1b2c3d4-0000-4000-8000-000000000000",
	}}
	assertPairJSON[hnslb.Endpoint, hcn.HostComputeEndpoint](t, local, remote, &returned)
	assertPairJSON[hnslb.EndpointPolicy, hcn.EndpointPolicy](t, &local.Policies[0])
	assertPairJSON[hnslb.IPConfig, hcn.IpConfig](t)
	assertPairJSON[hnslb.Route, hcn.Route](t)
	assertPairJSON[hnslb.DNS, hcn.Dns](t)
	assertPairJSON[hnslb.Health, hcn.Health](t)
	assertPairJSON[hnslb.ExtraParams, hcn.ExtraParams](t)
}

func TestNetworkJSONMatchesHcn(t *testing.T) {
	l2bridge := &hnslb.Network{
		Name: "cbr0",
		Type: hnslb.NetworkTypeL2Bridge,
		Policies: []hnslb.NetworkPolicy{
			hnslb.NewNetworkPolicy(hnslb.NetworkPolicyNetAdapterName, json.RawMessage(`{"NetworkAdapterName":"Ethernet"}`)),
			hnslb.NewNetworkPolicy(hnslb.NetworkPolicySourceMacAddress, hnslb.SourceMacAddressNetworkPolicySetting{SourceMacAddress: "00-15-5D-01-02-03"}),
		},
		MacPool: hnslb.MacPool{Ranges: []hnslb.MacRange{{StartMacAddress: "00-15-5D-52-C0-00", EndMacAddress: "00-15-5D-52-CF-FF"}}},
		Dns:     hnslb.DNS{ServerList: []string{"10.96.0.10"}, Search: []string{"svc.cluster.local"}},
		Ipams: []hnslb.Ipam{{Type: "Static", Subnets: []hnslb.Subnet{{
			IpAddressPrefix: "10.244.1.0/24",
			Policies:        []json.RawMessage{json.RawMessage(`{"Type":"VLAN","Settings":{"IsolationId":0}}`)},
			Routes:          []hnslb.Route{{NextHop: "10.244.1.1", DestinationPrefix: "0.0.0.0/0"}},
			Flags:           1,
		}}}},
		Flags:         hnslb.NetworkFlagsEnableNonPersistent,
		SchemaVersion: hnslb.V2,
	}
	overlay := &hnslb.Network{
		ID:   podNet,
		Name: "vxlan0",
		Type: hnslb.NetworkTypeOverlay,
		Policies: []hnslb.NetworkPolicy{
			hnslb.NewNetworkPolicy(hnslb.NetworkPolicyProviderAddress, hnslb.ProviderAddressNetworkPolicySetting{ProviderAddress: "192.168.1.10"}),
			hnslb.NewNetworkPolicy(hnslb.NetworkPolicyDrMacAddress, hnslb.DrMacAddressNetworkPolicySetting{Address: "01-02-03-04-05-06"}),
			hnslb.NewNetworkPolicy(hnslb.NetworkPolicyRemoteSubnetRoute, hnslb.RemoteSubnetRoutePolicySetting{
				DestinationPrefix: "10.244.2.0/24", IsolationId: 4096, ProviderAddress: "192.168.1.11",
				DistributedRouterMacAddress: "02-11-c0-a8-01-0b",
			}),
			hnslb.NewNetworkPolicy(hnslb.NetworkPolicyVxlanPort, hnslb.VxlanPortPolicySetting{Port: 4789}),
			hnslb.NewNetworkPolicy(hnslb.NetworkPolicyHostRoute, json.RawMessage(`{}`)),
		},
		Ipams: []hnslb.Ipam{{Type: "Static", Subnets: []hnslb.Subnet{{
			IpAddressPrefix: "10.244.1.0/24",
			Policies:        []json.RawMessage{json.RawMessage(`{"Type":"VSID","Settings":{"IsolationId":4096}}`)},
			Routes:          []hnslb.Route{{NextHop: "10.244.1.1", DestinationPrefix: "0.0.0.0/0"}},
		}}}},
		Flags:         hnslb.NetworkFlagsDisableHostPort,
		SchemaVersion: hnslb.V2,
	}
	assertPairJSON[hnslb.Network, hcn.HostComputeNetwork](t, l2bridge, overlay)
	assertPairJSON[hnslb.NetworkPolicy, hcn.NetworkPolicy](t, &overlay.Policies[2])
	assertPairJSON[hnslb.Ipam, hcn.Ipam](t, &overlay.Ipams[0])
	assertPairJSON[hnslb.Subnet, hcn.Subnet](t)
	assertPairJSON[hnslb.MacPool, hcn.MacPool](t)
	assertPairJSON[hnslb.MacRange, hcn.MacRange](t)
}

func TestNamespaceJSONMatchesHcn(t *testing.T) {
	ns := &hnslb.Namespace{
		ID:          "5d2c9a1e-0f3b-4c6d-8e7f-a1b2c3d4e5f6",
		NamespaceId: 3,
		Type:        hnslb.NamespaceTypeGuestDefault,
		Resources: []hnslb.NamespaceResource{{
			Type: hnslb.NamespaceResourceTypeEndpoint,
			Data: mustJSON(t, hnslb.NamespaceResourceEndpoint{ID: localEP}),
		}},
		SchemaVersion: hnslb.V2,
	}
	assertPairJSON[hnslb.Namespace, hcn.HostComputeNamespace](t, ns, &hnslb.Namespace{Type: hnslb.NamespaceTypeHost, SchemaVersion: hnslb.V2})
	assertPairJSON[hnslb.NamespaceResource, hcn.NamespaceResource](t, &ns.Resources[0])
	assertPairJSON[hnslb.NamespaceResourceEndpoint, hcn.NamespaceResourceEndpoint](t, &hnslb.NamespaceResourceEndpoint{ID: localEP})
}

// Policy settings travel as raw JSON inside a policy, so the object tests
// above cannot see their fields; each settings type is compared on its own.
func TestPolicySettingsJSONMatchesHcn(t *testing.T) {
	assertPairJSON[hnslb.PortMappingPolicySetting, hcn.PortMappingPolicySetting](t)
	assertPairJSON[hnslb.OutboundNatPolicySetting, hcn.OutboundNatPolicySetting](t)
	assertPairJSON[hnslb.SDNRoutePolicySetting, hcn.SDNRoutePolicySetting](t)
	assertPairJSON[hnslb.ProviderAddressEndpointPolicySetting, hcn.ProviderAddressEndpointPolicySetting](t)
	assertPairJSON[hnslb.SourceMacAddressNetworkPolicySetting, hcn.SourceMacAddressNetworkPolicySetting](t)
	assertPairJSON[hnslb.DrMacAddressNetworkPolicySetting, hcn.DrMacAddressNetworkPolicySetting](t)
	assertPairJSON[hnslb.ProviderAddressNetworkPolicySetting, hcn.ProviderAddressNetworkPolicySetting](t)
	assertPairJSON[hnslb.RemoteSubnetRoutePolicySetting, hcn.RemoteSubnetRoutePolicySetting](t)
	assertPairJSON[hnslb.VxlanPortPolicySetting, hcn.VxlanPortPolicySetting](t)
	assertPairJSON[hnslb.Version, hcn.Version](t)
	assertPairJSON[hnslb.SchemaVersion, hcn.SchemaVersion](t, &hnslb.V2)
}

// The flag and enum values hnslb declares must be hcn's.
func TestConstantsMatchHcn(t *testing.T) {
	for _, c := range []struct {
		name       string
		ours, hcns any
	}{
		{"LoadBalancerFlagsNone", uint32(hnslb.LoadBalancerFlagsNone), uint32(hcn.LoadBalancerFlagsNone)},
		{"LoadBalancerFlagsDSR", uint32(hnslb.LoadBalancerFlagsDSR), uint32(hcn.LoadBalancerFlagsDSR)},
		{"LoadBalancerFlagsIPv6", uint32(hnslb.LoadBalancerFlagsIPv6), uint32(hcn.LoadBalancerFlagsIPv6)},
		{"PortMappingFlagsNone", uint32(hnslb.PortMappingFlagsNone), uint32(hcn.LoadBalancerPortMappingFlagsNone)},
		{"PortMappingFlagsILB", uint32(hnslb.PortMappingFlagsILB), uint32(hcn.LoadBalancerPortMappingFlagsILB)},
		{"PortMappingFlagsLocalRoutedVIP", uint32(hnslb.PortMappingFlagsLocalRoutedVIP), uint32(hcn.LoadBalancerPortMappingFlagsLocalRoutedVIP)},
		{"PortMappingFlagsUseMux", uint32(hnslb.PortMappingFlagsUseMux), uint32(hcn.LoadBalancerPortMappingFlagsUseMux)},
		{"PortMappingFlagsPreserveDIP", uint32(hnslb.PortMappingFlagsPreserveDIP), uint32(hcn.LoadBalancerPortMappingFlagsPreserveDIP)},
		{"DistributionNone", uint32(hnslb.DistributionNone), uint32(hcn.LoadBalancerDistributionNone)},
		{"DistributionSourceIPProtocol", uint32(hnslb.DistributionSourceIPProtocol), uint32(hcn.LoadBalancerDistributionSourceIPProtocol)},
		{"DistributionSourceIP", uint32(hnslb.DistributionSourceIP), uint32(hcn.LoadBalancerDistributionSourceIP)},
		{"EndpointFlagsNone", uint32(hnslb.EndpointFlagsNone), uint32(hcn.EndpointFlagsNone)},
		{"EndpointFlagsRemoteEndpoint", uint32(hnslb.EndpointFlagsRemoteEndpoint), uint32(hcn.EndpointFlagsRemoteEndpoint)},
		{"NatFlagsNone", uint32(hnslb.NatFlagsNone), uint32(hcn.NatFlagsNone)},
		{"NatFlagsLocalRoutedVip", uint32(hnslb.NatFlagsLocalRoutedVip), uint32(hcn.NatFlagsLocalRoutedVip)},
		{"NatFlagsIPv6", uint32(hnslb.NatFlagsIPv6), uint32(hcn.NatFlagsIPv6)},
		{"NetworkFlagsNone", uint32(hnslb.NetworkFlagsNone), uint32(hcn.None)},
		{"NetworkFlagsEnableNonPersistent", uint32(hnslb.NetworkFlagsEnableNonPersistent), uint32(hcn.EnableNonPersistent)},
		{"NetworkFlagsDisableHostPort", uint32(hnslb.NetworkFlagsDisableHostPort), uint32(hcn.DisableHostPort)},
		{"NetworkFlagsEnableIov", uint32(hnslb.NetworkFlagsEnableIov), uint32(hcn.EnableIov)},
		{"NetworkTypeNAT", string(hnslb.NetworkTypeNAT), string(hcn.NAT)},
		{"NetworkTypeTransparent", string(hnslb.NetworkTypeTransparent), string(hcn.Transparent)},
		{"NetworkTypeL2Bridge", string(hnslb.NetworkTypeL2Bridge), string(hcn.L2Bridge)},
		{"NetworkTypeL2Tunnel", string(hnslb.NetworkTypeL2Tunnel), string(hcn.L2Tunnel)},
		{"NetworkTypeICS", string(hnslb.NetworkTypeICS), string(hcn.ICS)},
		{"NetworkTypePrivate", string(hnslb.NetworkTypePrivate), string(hcn.Private)},
		{"NetworkTypeOverlay", string(hnslb.NetworkTypeOverlay), string(hcn.Overlay)},
		{"EndpointPolicyPortMapping", string(hnslb.EndpointPolicyPortMapping), string(hcn.PortMapping)},
		{"EndpointPolicyACL", string(hnslb.EndpointPolicyACL), string(hcn.ACL)},
		{"EndpointPolicyOutBoundNAT", string(hnslb.EndpointPolicyOutBoundNAT), string(hcn.OutBoundNAT)},
		{"EndpointPolicySDNRoute", string(hnslb.EndpointPolicySDNRoute), string(hcn.SDNRoute)},
		{"EndpointPolicyProviderAddress", string(hnslb.EndpointPolicyProviderAddress), string(hcn.NetworkProviderAddress)},
		{"EndpointPolicyEncapOverhead", string(hnslb.EndpointPolicyEncapOverhead), string(hcn.EncapOverhead)},
		{"NetworkPolicySourceMacAddress", string(hnslb.NetworkPolicySourceMacAddress), string(hcn.SourceMacAddress)},
		{"NetworkPolicyNetAdapterName", string(hnslb.NetworkPolicyNetAdapterName), string(hcn.NetAdapterName)},
		{"NetworkPolicyDrMacAddress", string(hnslb.NetworkPolicyDrMacAddress), string(hcn.DrMacAddress)},
		{"NetworkPolicyProviderAddress", string(hnslb.NetworkPolicyProviderAddress), string(hcn.ProviderAddress)},
		{"NetworkPolicyRemoteSubnetRoute", string(hnslb.NetworkPolicyRemoteSubnetRoute), string(hcn.RemoteSubnetRoute)},
		{"NetworkPolicyVxlanPort", string(hnslb.NetworkPolicyVxlanPort), string(hcn.VxlanPort)},
		{"NetworkPolicyHostRoute", string(hnslb.NetworkPolicyHostRoute), string(hcn.HostRoute)},
		{"NamespaceTypeHost", string(hnslb.NamespaceTypeHost), string(hcn.NamespaceTypeHost)},
		{"NamespaceTypeHostDefault", string(hnslb.NamespaceTypeHostDefault), string(hcn.NamespaceTypeHostDefault)},
		{"NamespaceTypeGuest", string(hnslb.NamespaceTypeGuest), string(hcn.NamespaceTypeGuest)},
		{"NamespaceTypeGuestDefault", string(hnslb.NamespaceTypeGuestDefault), string(hcn.NamespaceTypeGuestDefault)},
		{"NamespaceResourceTypeContainer", string(hnslb.NamespaceResourceTypeContainer), string(hcn.NamespaceResourceTypeContainer)},
		{"NamespaceResourceTypeEndpoint", string(hnslb.NamespaceResourceTypeEndpoint), string(hcn.NamespaceResourceTypeEndpoint)},
		{"CodeNotFound", uint32(hnslb.CodeNotFound), uint32(hcn.ERROR_NOT_FOUND)},
		{"CodePortAlreadyExists", uint32(hnslb.CodePortAlreadyExists), uint32(hcn.HCN_E_PORT_ALREADY_EXISTS)},
		{"CodeNotImplemented", uint32(hnslb.CodeNotImplemented), uint32(hcn.HCN_E_NOTIMPL)},
	} {
		if c.ours != c.hcns {
			t.Errorf("%s = %v, hcn has %v", c.name, c.ours, c.hcns)
		}
	}
}
