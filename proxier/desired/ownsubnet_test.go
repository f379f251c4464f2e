package desired

import (
	"net/netip"
	"reflect"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

// ownSubnet is this node's pod subnet, as both the Node (spec.podCIDRs) and
// its HNS network (the CNI's IPAM) give it.
func ownSubnet(c *Config) {
	own := []netip.Prefix{netip.MustParsePrefix("10.9.0.0/24")}
	c.PodCIDRs, c.NetworkSubnets = own, own
}

// TestEndpointWithoutNodeInThisNodesOwnSubnetIsLocal: an address its slice
// places on no node that lies in this node's pod subnet, by the Node and by
// the HNS network alike, can only be a pod of this node. Its backend is
// local (served by the pod's local endpoint, left out while the CNI has
// none) and no remote endpoint is wanted for it: on Windows Server 2025 one
// would keep the CNI from wiring the next pod given the address. On overlay
// its load balancer keeps the source VIP. Where one signal lacks (a pod
// CIDR the CNI does not use, as with Calico IPAM, or a network subnet
// shared by every node with no pod CIDR, as with Azure CNI) or the
// address lies outside, the backend is of unknown node as before.
func TestEndpointWithoutNodeInThisNodesOwnSubnetIsLocal(t *testing.T) {
	unknown := func(pa string) []intent.Backend {
		return []intent.Backend{{IP: "10.9.0.5", NodeUnknown: true, ProviderAddress: pa}}
	}
	for _, tc := range []struct {
		name    string
		cfg     func(*Config)
		ip      string
		want    []intent.Backend
		wantSrc string
	}{
		{"l2bridge", ownSubnet, "10.9.0.5", []intent.Backend{{IP: "10.9.0.5", Local: true}}, ""},
		{"overlay", func(c *Config) { overlay(c); ownSubnet(c) }, "10.9.0.5", []intent.Backend{{IP: "10.9.0.5", Local: true}}, "10.1.0.250"},
		{"outside the subnets", ownSubnet, "10.1.0.5", []intent.Backend{{IP: "10.1.0.5", NodeUnknown: true}}, ""},
		{"pod CIDR the network does not hold", func(c *Config) {
			c.PodCIDRs = []netip.Prefix{netip.MustParsePrefix("10.9.0.0/24")}
			c.NetworkSubnets = []netip.Prefix{netip.MustParsePrefix("10.7.0.0/26")}
		}, "10.9.0.5", unknown(""), ""},
		{"network subnet without pod CIDRs", func(c *Config) {
			c.NetworkSubnets = []netip.Prefix{netip.MustParsePrefix("10.9.0.0/16")}
		}, "10.9.0.5", unknown(""), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config()
			tc.cfg(&cfg)
			s := Compute([]ServiceInput{{Service: service("web"), Slices: slicesOf(slice("web-1", 8080, ep(tc.ip, noNode)))}}, cfg)
			lb, ok := s.LBs[key("10.0.0.1", 80)]
			if !ok {
				t.Fatalf("no load balancer: %+v", s.LBs)
			}
			if !reflect.DeepEqual(lb.Backends, tc.want) {
				t.Errorf("backends %+v, want %+v", lb.Backends, tc.want)
			}
			_, wanted := s.RemoteEndpoints[tc.ip]
			if wantRemote := !tc.want[0].Local; wanted != wantRemote {
				t.Errorf("remote endpoint at %s wanted: %v, want %v (%+v)", tc.ip, wanted, wantRemote, s.RemoteEndpoints)
			}
			if tc.wantSrc != "" && lb.SourceVIP != tc.wantSrc {
				t.Errorf("source VIP %s, want %s", lb.SourceVIP, tc.wantSrc)
			}
		})
	}
}

// TestEndpointWithoutNodeInThisNodesOwnSubnetCountsRemoteForPolicies: the
// backend is served locally, but as in kube-proxy an endpoint that names no
// node is not this node's for internalTrafficPolicy: Local.
func TestEndpointWithoutNodeInThisNodesOwnSubnetCountsRemoteForPolicies(t *testing.T) {
	cfg := config()
	ownSubnet(&cfg)
	s := Compute([]ServiceInput{{Service: service("web", itpLocal), Slices: slicesOf(slice("web-1", 8080, ep("10.9.0.5", noNode)))}}, cfg)
	if lb, ok := s.LBs[key("10.0.0.1", 80)]; ok && len(lb.Backends) > 0 {
		t.Errorf("internalTrafficPolicy Local: backends %+v, want none", lb.Backends)
	}
}

// TestOwnSubnetAddressAnotherServicePlacesElsewhereKeepsItsRemoteEndpoint:
// one Service's slice places the address on another node, another's on no
// node. The placing one still gets a remote backend and its remote
// endpoint outright, as before; the one naming no node is served locally.
func TestOwnSubnetAddressAnotherServicePlacesElsewhereKeepsItsRemoteEndpoint(t *testing.T) {
	cfg := config()
	ownSubnet(&cfg)
	placed := ServiceInput{Service: service("placed", clusterIPs("10.0.0.1")), Slices: slicesOf(slice("placed-1", 8080, ep("10.9.0.5")))}
	unplaced := ServiceInput{Service: service("unplaced", clusterIPs("10.0.0.2")), Slices: slicesOf(slice("unplaced-1", 8080, ep("10.9.0.5", noNode)))}
	s := Compute([]ServiceInput{placed, unplaced}, cfg)
	if got := s.LBs[key("10.0.0.1", 80)].Backends; !reflect.DeepEqual(got, []intent.Backend{{IP: "10.9.0.5"}}) {
		t.Errorf("placed: backends %+v, want one remote", got)
	}
	if got := s.LBs[key("10.0.0.2", 80)].Backends; !reflect.DeepEqual(got, []intent.Backend{{IP: "10.9.0.5", Local: true}}) {
		t.Errorf("unplaced: backends %+v, want one local", got)
	}
	if got, want := s.RemoteEndpoints["10.9.0.5"], (intent.RemoteEndpoint{IP: "10.9.0.5", MAC: "02-11-0a-09-00-05"}); got != want {
		t.Errorf("remote endpoint %+v, want %+v", got, want)
	}
}

// TestNetworkSubnetsOf: every IPAM subnet, masked; one that does not parse
// is left out.
func TestNetworkSubnetsOf(t *testing.T) {
	n := &hnslb.Network{Ipams: []hnslb.Ipam{
		{Subnets: []hnslb.Subnet{{IpAddressPrefix: "10.244.1.7/24"}, {IpAddressPrefix: "bogus"}}},
		{Subnets: []hnslb.Subnet{{IpAddressPrefix: "fd00:10:244:1::/64"}}},
	}}
	want := []netip.Prefix{netip.MustParsePrefix("10.244.1.0/24"), netip.MustParsePrefix("fd00:10:244:1::/64")}
	if got := NetworkSubnetsOf(n); !reflect.DeepEqual(got, want) {
		t.Errorf("NetworkSubnetsOf = %v, want %v", got, want)
	}
}

// TestOwnSubnetAddressOverTheCapHasASpare: a backend served by a local
// endpoint the CNI may not have made yet is one the reconciler may leave
// out, so over the backend cap a spare stands ready for it, as for a pod
// its slice places on this node.
func TestOwnSubnetAddressOverTheCapHasASpare(t *testing.T) {
	cfg := config()
	ownSubnet(&cfg)
	cfg.MaxBackends = 1
	for i := 1; i < 64; i++ {
		own := netip.AddrFrom4([4]byte{10, 9, 0, byte(i)}).String()
		in := ServiceInput{Service: service("web"), Slices: slicesOf(slice("web-1", 8080, ep(own, noNode), ep("10.1.0.3")))}
		lb := Compute([]ServiceInput{in}, cfg).LBs[key("10.0.0.1", 80)]
		if len(lb.Backends) != 1 || lb.Backends[0].IP != own {
			continue // the remote one ranks first here: nothing can be missing
		}
		if want := []intent.Backend{{IP: "10.1.0.3"}}; !reflect.DeepEqual(lb.Spares, want) {
			t.Errorf("kept %+v: spares %+v, want %+v", lb.Backends, lb.Spares, want)
		}
		return
	}
	t.Fatal("no address of the subnet ranked first")
}

// TestOwnSubnetRuleIsPerFamily: on a dual-stack node whose Node has a pod
// CIDR of each family but whose HNS network holds only the IPv4 one (a CNI
// that gives pods IPv6 addresses from elsewhere), an IPv6 address its slice
// places on no node is not taken for this node's pod: only the IPv4 one,
// which both signals place here, is served locally.
func TestOwnSubnetRuleIsPerFamily(t *testing.T) {
	cfg := config()
	cfg.PodCIDRs = []netip.Prefix{netip.MustParsePrefix("10.9.0.0/24"), netip.MustParsePrefix("fd09::/64")}
	cfg.NetworkSubnets = []netip.Prefix{netip.MustParsePrefix("10.9.0.0/24")}
	svc := service("web", clusterIPs("10.0.0.1", "fd00:96::1"))
	s := Compute([]ServiceInput{{Service: svc, Slices: slicesOf(
		slice("web-v4", 8080, ep("10.9.0.5", noNode)), slice("web-v6", 8080, ep("fd09::5", noNode)))}}, cfg)
	if got, want := s.LBs[key("10.0.0.1", 80)].Backends, []intent.Backend{{IP: "10.9.0.5", Local: true}}; !reflect.DeepEqual(got, want) {
		t.Errorf("IPv4: backends %+v, want %+v", got, want)
	}
	if got, want := s.LBs[key("fd00:96::1", 80)].Backends, []intent.Backend{{IP: "fd09::5", NodeUnknown: true}}; !reflect.DeepEqual(got, want) {
		t.Errorf("IPv6: backends %+v, want %+v", got, want)
	}
	if _, ok := s.RemoteEndpoints["fd09::5"]; !ok {
		t.Errorf("no remote endpoint wanted at fd09::5: %+v", s.RemoteEndpoints)
	}
	if _, ok := s.RemoteEndpoints["10.9.0.5"]; ok {
		t.Errorf("a remote endpoint wanted at this node's pod address 10.9.0.5")
	}
}
