package desired

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/hnsproxy/hnsproxy/intent"
)

// Every address the mapping reads from an API object is read as kube-proxy
// reads it (k8s.io/utils/net.ParseIPSloppy, through internal/kubeip): an
// IPv4 part with leading zeros is decimal and served as the canonical
// address; an IPv6 zone is refused, with a warning where the object is a
// Service and without losing the rest of the object. The Node's addresses
// are kube-proxy's GetNodeHostIPs (component-helpers node util), which
// skips what it cannot parse.
func TestAddressTextIsReadAsKubeProxyReadsItAtEverySite(t *testing.T) {
	for _, tc := range []struct {
		name      string
		node      []v1.NodeAddress
		svc       *v1.Service
		endpoints []string
		// wanted: the NodePort load balancers' source VIPs per family, the
		// frontends (a family without endpoints has none), the backends
		// and the problems' reasons.
		sourceVIPs map[intent.IPFamily]string
		frontends  []intent.LBKey
		backends   []intent.Backend
		problems   []string
	}{{
		name:       "Node InternalIP with leading zeros",
		node:       []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "010.0.0.11"}},
		svc:        service("web", nodePorts(30080)),
		endpoints:  []string{"10.1.0.3"},
		sourceVIPs: map[intent.IPFamily]string{intent.IPv4: "10.0.0.11"},
		frontends:  []intent.LBKey{nodePortKey(intent.IPv4, 30080), key("10.0.0.1", 80)},
		backends:   []intent.Backend{remote("10.1.0.3")},
	}, {
		name: "Node ExternalIP with leading zeros, no InternalIP",
		node: []v1.NodeAddress{
			{Type: v1.NodeInternalIP, Address: "not-an-ip"},
			{Type: v1.NodeExternalIP, Address: "198.051.100.001"},
		},
		svc:        service("web", nodePorts(30080)),
		endpoints:  []string{"10.1.0.3"},
		sourceVIPs: map[intent.IPFamily]string{intent.IPv4: "198.51.100.1"},
		frontends:  []intent.LBKey{nodePortKey(intent.IPv4, 30080), key("10.0.0.1", 80)},
		backends:   []intent.Backend{remote("10.1.0.3")},
	}, {
		name: "zoned Node InternalIP skipped for the next of its family",
		node: []v1.NodeAddress{
			{Type: v1.NodeInternalIP, Address: "10.0.0.11"},
			{Type: v1.NodeInternalIP, Address: "fe80::11%eth0"},
			{Type: v1.NodeInternalIP, Address: "fd00::11"},
		},
		svc:        service("web", clusterIPs("fd00::1"), nodePorts(30080)),
		endpoints:  []string{"fd00:244::5"},
		sourceVIPs: map[intent.IPFamily]string{intent.IPv6: "fd00::11"},
		frontends:  []intent.LBKey{nodePortKey(intent.IPv6, 30080), key("fd00::1", 80)},
		backends:   []intent.Backend{remote("fd00:244::5")},
	}, {
		name:      "endpoint with leading zeros",
		node:      []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.11"}},
		svc:       service("web"),
		endpoints: []string{"010.244.1.005"},
		frontends: []intent.LBKey{key("10.0.0.1", 80)},
		backends:  []intent.Backend{remote("10.244.1.5")},
	}, {
		name:      "zoned endpoint left out, the others kept",
		node:      []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.11"}},
		svc:       service("web", clusterIPs("fd00::1")),
		endpoints: []string{"fe80::5%eth0", "fd00:244::5"},
		frontends: []intent.LBKey{key("fd00::1", 80)},
		backends:  []intent.Backend{remote("fd00:244::5")},
		problems:  []string{ReasonInvalidEndpoint},
	}, {
		name:      "zoned external IP refused with a warning, the rest kept",
		node:      []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.11"}, {Type: v1.NodeInternalIP, Address: "fd00::11"}},
		svc:       service("web", clusterIPs("10.0.0.1", "fd00::1"), externalIPs("fd00::5%eth0", "203.0.113.009")),
		endpoints: []string{"10.1.0.3"},
		frontends: []intent.LBKey{key("10.0.0.1", 80), key("203.0.113.9", 80)},
		backends:  []intent.Backend{remote("10.1.0.3")},
		problems:  []string{ReasonInvalidIP},
	}, {
		name:      "zoned ingress IP and cluster IP refused with warnings, the rest kept",
		node:      []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.0.0.11"}, {Type: v1.NodeInternalIP, Address: "fd00::11"}},
		svc:       service("web", clusterIPs("010.000.000.001", "fd00::1%eth0"), loadBalancer(ingressIP("fd00::7%eth0"), ingressIP("198.051.100.007"))),
		endpoints: []string{"10.1.0.3"},
		frontends: []intent.LBKey{key("10.0.0.1", 80), key("198.51.100.7", 80)},
		backends:  []intent.Backend{remote("10.1.0.3")},
		problems:  []string{ReasonInvalidIP, ReasonInvalidIP},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config()
			cfg.NodeIPs = NodeHostIPs(&v1.Node{Status: v1.NodeStatus{Addresses: tc.node}})
			eps := make([]discoveryv1.Endpoint, len(tc.endpoints))
			for i, a := range tc.endpoints {
				eps[i] = ep(a)
			}
			s := slice("web-1", 8080, eps...)
			if !isIPv4Text(tc.endpoints[0]) {
				s.AddressType = discoveryv1.AddressTypeIPv6
			}
			r := ForService(ServiceInput{Service: tc.svc, Slices: slicesOf(s)}, cfg)
			var reasons []string
			for _, p := range r.Problems {
				reasons = append(reasons, p.Reason)
			}
			if !slices.Equal(reasons, tc.problems) {
				t.Errorf("problems %v, want reasons %v", r.Problems, tc.problems)
			}
			var keys []intent.LBKey
			for _, lb := range r.LBs {
				keys = append(keys, lb.Key)
				if want, ok := tc.sourceVIPs[lb.Key.Family]; ok && lb.Key.VIP == "" && lb.SourceVIP != want {
					t.Errorf("%s: source VIP %q, want the node address %q", lb.Key, lb.SourceVIP, want)
				}
				if !slices.Equal(lb.Backends, tc.backends) && lb.Key.Family == intent.FamilyOf(addr(tc.backends[0].IP)) {
					t.Errorf("%s: backends %v, want %v", lb.Key, lb.Backends, tc.backends)
				}
			}
			slices.SortFunc(keys, intent.CompareLBKeys)
			slices.SortFunc(tc.frontends, intent.CompareLBKeys)
			if !slices.Equal(keys, tc.frontends) {
				t.Errorf("load balancers %v, want %v", keys, tc.frontends)
			}
		})
	}
}

func isIPv4Text(s string) bool { return !slices.Contains([]byte(s), ':') }
