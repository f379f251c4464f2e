package desired

import (
	"maps"
	"net/netip"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hnsproxy/hnsproxy/intent"
)

func TestNodeHostIPs(t *testing.T) {
	node := &v1.Node{Status: v1.NodeStatus{Addresses: []v1.NodeAddress{
		{Type: v1.NodeHostName, Address: "win-1"},
		{Type: v1.NodeExternalIP, Address: "198.51.100.1"},
		{Type: v1.NodeInternalIP, Address: "not-an-ip"},
		{Type: v1.NodeInternalIP, Address: "::ffff:10.0.0.11"},
		{Type: v1.NodeInternalIP, Address: "10.0.0.99"},
		{Type: v1.NodeInternalIP, Address: "fd00::11"},
	}}}
	got := NodeHostIPs(node)
	if len(got) != 2 || got[intent.IPv4] != netip.MustParseAddr("10.0.0.11") || got[intent.IPv6] != netip.MustParseAddr("fd00::11") {
		t.Errorf("NodeHostIPs = %v, want the first valid InternalIP per family, unmapped", got)
	}
	if got := NodeHostIPs(&v1.Node{}); len(got) != 0 {
		t.Errorf("a Node without addresses: %v", got)
	}
}

// A family with no InternalIP takes the Node's ExternalIP of that family,
// and a Node listing only ExternalIPs still has node IPs: kube-proxy's
// GetNodeHostIPs sorts InternalIPs before ExternalIPs and takes the first
// address of each family.
func TestNodeIPsFallBackToExternalIPPerFamily(t *testing.T) {
	addr := func(typ v1.NodeAddressType, ip string) v1.NodeAddress { return v1.NodeAddress{Type: typ, Address: ip} }
	for _, tc := range []struct {
		name  string
		addrs []v1.NodeAddress
		bound map[intent.IPFamily]netip.Addr
		want  map[intent.IPFamily]netip.Addr
	}{{
		name: "IPv6 listed only as ExternalIP",
		addrs: []v1.NodeAddress{addr(v1.NodeExternalIP, "198.51.100.1"), addr(v1.NodeExternalIP, "2001:db8::1"),
			addr(v1.NodeInternalIP, "10.0.0.11")},
		want: map[intent.IPFamily]netip.Addr{intent.IPv4: netip.MustParseAddr("10.0.0.11"), intent.IPv6: netip.MustParseAddr("2001:db8::1")},
	}, {
		name:  "only ExternalIPs, junk skipped",
		addrs: []v1.NodeAddress{addr(v1.NodeHostName, "win-1"), addr(v1.NodeExternalIP, "not-an-ip"), addr(v1.NodeExternalIP, "198.51.100.1"), addr(v1.NodeExternalIP, "198.51.100.2")},
		want:  map[intent.IPFamily]netip.Addr{intent.IPv4: netip.MustParseAddr("198.51.100.1")},
	}, {
		name:  "--bind-address keeps its own family only",
		addrs: []v1.NodeAddress{addr(v1.NodeExternalIP, "198.51.100.1"), addr(v1.NodeExternalIP, "2001:db8::1")},
		bound: map[intent.IPFamily]netip.Addr{intent.IPv4: netip.MustParseAddr("10.0.0.7")},
		want:  map[intent.IPFamily]netip.Addr{intent.IPv4: netip.MustParseAddr("10.0.0.7"), intent.IPv6: netip.MustParseAddr("2001:db8::1")},
	}} {
		got := NodeIPs(&v1.Node{Status: v1.NodeStatus{Addresses: tc.addrs}}, tc.bound)
		if !maps.Equal(got, tc.want) {
			t.Errorf("%s: NodeIPs = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestInputsOf(t *testing.T) {
	svc := func(ns, name string) v1.Service {
		return v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	slice := func(ns, name, service string) discoveryv1.EndpointSlice {
		s := discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if service != "" {
			s.Labels = map[string]string{discoveryv1.LabelServiceName: service}
		}
		return s
	}
	in := InputsOf(
		[]v1.Service{svc("web", "frontend"), svc("batch", "frontend"), svc("web", "lonely")},
		[]discoveryv1.EndpointSlice{slice("web", "frontend-a", "frontend"), slice("batch", "frontend-b", "frontend"),
			slice("web", "frontend-c", "frontend"), slice("web", "orphan", "gone"), slice("web", "unlabelled", "")},
	)
	names := func(i int) []string {
		var out []string
		for _, s := range in[i].Slices {
			out = append(out, s.Name)
		}
		return out
	}
	if len(in) != 3 || !slices.Equal(names(0), []string{"frontend-a", "frontend-c"}) || !slices.Equal(names(1), []string{"frontend-b"}) || len(names(2)) != 0 {
		t.Errorf("InputsOf: %v %v %v", names(0), names(1), names(2))
	}
}

// TestPodCIDRsOf: a Node's pod CIDRs as kube-proxy reads them, masked (the
// proxier keys the routes it waits for by them, and compares them on every
// Node update), from spec.podCIDR where spec.podCIDRs is empty, skipping
// what does not parse.
func TestPodCIDRsOf(t *testing.T) {
	p := netip.MustParsePrefix
	for _, tc := range []struct {
		name string
		spec v1.NodeSpec
		want []netip.Prefix
	}{
		{"host bits set: masked", v1.NodeSpec{PodCIDRs: []string{"10.244.1.5/24", "fd00:1::7/64"}}, []netip.Prefix{p("10.244.1.0/24"), p("fd00:1::/64")}},
		{"podCIDR alone", v1.NodeSpec{PodCIDR: "10.244.2.0/24"}, []netip.Prefix{p("10.244.2.0/24")}},
		{"podCIDRs win over podCIDR", v1.NodeSpec{PodCIDR: "10.244.2.0/24", PodCIDRs: []string{"10.244.3.0/24"}}, []netip.Prefix{p("10.244.3.0/24")}},
		{"unparsable skipped", v1.NodeSpec{PodCIDRs: []string{"not-a-cidr", "10.244.4.0/24"}}, []netip.Prefix{p("10.244.4.0/24")}},
		{"none", v1.NodeSpec{}, nil},
	} {
		if got := PodCIDRsOf(&v1.Node{Spec: tc.spec}); !slices.Equal(got, tc.want) {
			t.Errorf("%s: PodCIDRsOf = %v, want %v", tc.name, got, tc.want)
		}
	}
}
