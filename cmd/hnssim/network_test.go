package main

import (
	"net/netip"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

func TestOverlayNetworkDocument(t *testing.T) {
	o := networkOptions{name: "vxlan0", kind: "overlay", subnets: []string{"10.244.1.9/24"}, vni: 4096,
		remoteSubnets: []string{"10.244.2.0/24=192.168.0.12", "10.244.3.0/24=192.168.0.13"}}
	n, pa, err := o.document([]netip.Addr{netip.MustParseAddr("192.168.0.11")})
	if err != nil {
		t.Fatal(err)
	}
	if n.Type != hnslb.NetworkTypeOverlay || pa.String() != "192.168.0.11" || n.ProviderAddress() != "192.168.0.11" {
		t.Errorf("type %s, PA %s / %s", n.Type, pa, n.ProviderAddress())
	}
	sn := n.Ipams[0].Subnets[0]
	if sn.IpAddressPrefix != "10.244.1.0/24" || sn.Routes[0].NextHop != "10.244.1.1" || len(sn.Policies) != 1 {
		t.Errorf("subnet %+v", sn)
	}
	routes := n.RemoteSubnetRoutes()
	if len(routes) != 2 || routes[1] != (hnslb.RemoteSubnetRoutePolicySetting{DestinationPrefix: "10.244.3.0/24", IsolationId: 4096,
		ProviderAddress: "192.168.0.13", DistributedRouterMacAddress: "0E-2A-C0-A8-00-0D"}) {
		t.Errorf("routes %+v", routes)
	}
	// Replacing remote subnets keeps the other policies.
	n.Policies = withRemoteSubnets(n.Policies, routes[:1])
	if got := n.RemoteSubnetRoutes(); len(got) != 1 || n.ProviderAddress() != "192.168.0.11" || len(n.Policies) != 3 {
		t.Errorf("after replacing: %+v", n.Policies)
	}
	// --vxlan-port other than 4789 is a VxlanPort policy.
	o.vxlanPort = 8472
	if n, _, err = o.document([]netip.Addr{pa}); err != nil {
		t.Fatal(err)
	}
	last := n.Policies[len(n.Policies)-1]
	if last.Type != hnslb.NetworkPolicyVxlanPort || string(last.Settings) != `{"Port":8472}` {
		t.Errorf("with --vxlan-port 8472 the last policy is %s %s", last.Type, last.Settings)
	}
}

func TestNetworkDocumentRejects(t *testing.T) {
	for name, o := range map[string]networkOptions{
		"bad subnet":             {name: "x", kind: "l2bridge", subnets: []string{"10.244.1.0"}},
		"gateway outside subnet": {name: "x", kind: "l2bridge", subnets: []string{"10.244.1.0/24"}, gateway: "10.244.2.1"},
		"overlay flags on l2":    {name: "x", kind: "l2bridge", subnets: []string{"10.244.1.0/24"}, remoteSubnets: []string{"10.244.2.0/24=1.2.3.4"}},
		"unknown type":           {name: "x", kind: "nat", subnets: []string{"10.244.1.0/24"}},
		"overlay without PA":     {name: "x", kind: "overlay", subnets: []string{"10.244.1.0/24"}},
		"bad remote subnet":      {name: "x", kind: "overlay", subnets: []string{"10.244.1.0/24"}, providerAddress: "1.2.3.4", remoteSubnets: []string{"10.244.2.0/24"}},
		"bad remote PA":          {name: "x", kind: "overlay", subnets: []string{"10.244.1.0/24"}, providerAddress: "1.2.3.4", remoteSubnets: []string{"10.244.2.0/24=pa"}},
		"no subnet":              {name: "x", kind: "l2bridge"},
		"two IPv4 subnets":       {name: "x", kind: "l2bridge", subnets: []string{"10.244.1.0/24", "10.245.1.0/24"}},
		"IPv6 on overlay":        {name: "x", kind: "overlay", subnets: []string{"10.244.1.0/24", "fd00:10:244:1::/64"}, providerAddress: "1.2.3.4"},
	} {
		if _, _, err := o.document(nil); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestNetworkDocumentDualStack(t *testing.T) {
	o := networkOptions{name: "cbr0", kind: "l2bridge", subnets: []string{"10.244.1.0/24", "fd00:10:244:1::/64"}, gateway: "fd00:10:244:1::fe"}
	n, _, err := o.document(nil)
	if err != nil {
		t.Fatal(err)
	}
	got := n.Ipams[0].Subnets
	if len(got) != 2 || got[0].IpAddressPrefix != "10.244.1.0/24" || got[0].Routes[0] != (hnslb.Route{NextHop: "10.244.1.1", DestinationPrefix: "0.0.0.0/0"}) ||
		got[1].IpAddressPrefix != "fd00:10:244:1::/64" || got[1].Routes[0] != (hnslb.Route{NextHop: "fd00:10:244:1::fe", DestinationPrefix: "::/0"}) {
		t.Errorf("subnets %+v", got)
	}
}
