package proxier

import (
	"net/netip"
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/proxier/desired"
)

func TestTallyOfCarriesTheResultsCounts(t *testing.T) {
	res := desired.ServiceResult{Truncated: 3, MixedPortDropped: 2, NoLocalInternal: 1, NoLocalExternal: 4}
	if got, want := tallyOf(res), (serviceTally{truncated: 3, mixedPortDropped: 2, noLocalInternal: 1, noLocalExternal: 4}); got != want {
		t.Errorf("tallyOf = %+v, want %+v", got, want)
	}
}

func TestTalliesSumReplaceAndRemove(t *testing.T) {
	a, b := types.NamespacedName{Namespace: "ns", Name: "a"}, types.NamespacedName{Namespace: "ns", Name: "b"}
	ts := newTallies()
	ts.set(a, serviceTally{truncated: 2, noLocalInternal: 1})
	ts.set(b, serviceTally{truncated: 5, mixedPortDropped: 1, noLocalExternal: 1})
	if want := (serviceTally{truncated: 7, mixedPortDropped: 1, noLocalInternal: 1, noLocalExternal: 1}); ts.total != want {
		t.Fatalf("total after two sets = %+v, want %+v", ts.total, want)
	}
	ts.set(a, serviceTally{truncated: 1}) // recomputed: replaces, never adds twice
	ts.remove(b)
	ts.remove(b) // removing an unknown Service changes nothing
	if want := (serviceTally{truncated: 1}); ts.total != want {
		t.Fatalf("total after replace and remove = %+v, want %+v", ts.total, want)
	}
	if got, want := ts.noLocalEndpoints(), map[string]int{"internal": 0, "external": 0}; !reflect.DeepEqual(got, want) {
		t.Errorf("noLocalEndpoints = %v, want %v", got, want)
	}
	ts.set(b, serviceTally{})
	ts.set(a, serviceTally{}) // counts nothing now: nothing is kept of it
	if ts.total != (serviceTally{}) || len(ts.per) != 0 {
		t.Errorf("after zero tallies: total %+v, %d kept; want zero and none", ts.total, len(ts.per))
	}
}

// TestNoLocalEndpointsCountsAsKubeProxy: kube-proxy's
// sync_proxy_rules_no_local_endpoints_total counts Service ports with a
// Local policy whose endpoints are usable somewhere in the cluster but not
// on this node (iptables proxier: hasEndpoints && no local endpoints).
func TestNoLocalEndpointsCountsAsKubeProxy(t *testing.T) {
	const node = "node-a"
	cfg := desired.Config{
		NodeName: node, NodeIPs: map[intent.IPFamily]netip.Addr{intent.IPv4: netip.MustParseAddr("10.0.0.11")},
		Mode: desired.L2Bridge, Features: hnslb.FeaturesFor(hnslb.Version{Major: 15, Minor: 5}),
		ForwardHealthCheckVIP: true, HealthzPort: 10256,
		HealthCheckGateway: map[intent.IPFamily]netip.Addr{intent.IPv4: netip.MustParseAddr("10.244.1.2")},
	}
	itpLocal := func(s *v1.Service) { s.Spec.InternalTrafficPolicy = ptr.To(v1.ServiceInternalTrafficPolicyLocal) }
	twoPorts := func(s *v1.Service) {
		s.Spec.Ports = append(s.Spec.Ports, v1.ServicePort{Name: "https", Protocol: v1.ProtocolTCP, Port: 443})
	}
	twoPortSlice := func(eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
		s := sliceOf("a", "a-1", discoveryv1.AddressTypeIPv4, eps...)
		s.Ports = append(s.Ports, discoveryv1.EndpointPort{Name: ptr.To("https"), Port: ptr.To[int32](8443), Protocol: ptr.To(v1.ProtocolTCP)})
		return s
	}
	for _, tc := range []struct {
		name   string
		svc    *v1.Service
		slices []*discoveryv1.EndpointSlice
		want   map[string]int
	}{
		{"ITP=Local, no endpoints anywhere: nothing to miss", service("a", "10.96.0.1", itpLocal), nil,
			map[string]int{"internal": 0, "external": 0}},
		{"ITP=Local, only non-serving endpoints elsewhere: none usable anywhere", service("a", "10.96.0.1", itpLocal),
			[]*discoveryv1.EndpointSlice{sliceOf("a", "a-1", discoveryv1.AddressTypeIPv4, terminatingEP("10.244.2.7", "node-b", false))},
			map[string]int{"internal": 0, "external": 0}},
		{"ITP=Local, ready endpoints elsewhere, one per port", service("a", "10.96.0.1", itpLocal, twoPorts),
			[]*discoveryv1.EndpointSlice{twoPortSlice(readyEP("10.244.2.7", "node-b"))},
			map[string]int{"internal": 2, "external": 0}},
		{"ETP=Local on a ClusterIP Service with external IPs", service("a", "10.96.0.1", func(s *v1.Service) {
			s.Spec.ExternalIPs = []string{"203.0.113.7"}
			s.Spec.ExternalTrafficPolicy = v1.ServiceExternalTrafficPolicyLocal
		}), []*discoveryv1.EndpointSlice{sliceOf("a", "a-1", discoveryv1.AddressTypeIPv4, readyEP("10.244.2.7", "node-b"))},
			map[string]int{"internal": 0, "external": 1}},
		{"ITP=Local: the forwarded health check's gateway backend is no local endpoint", service("a", "10.96.0.1", itpLocal, func(s *v1.Service) {
			s.Spec.Type = v1.ServiceTypeLoadBalancer
			s.Status.LoadBalancer.Ingress = []v1.LoadBalancerIngress{{IP: "203.0.113.8"}}
		}), []*discoveryv1.EndpointSlice{sliceOf("a", "a-1", discoveryv1.AddressTypeIPv4, readyEP("10.244.2.7", "node-b"))},
			map[string]int{"internal": 1, "external": 0}},
		{"ETP=Local with a local serving-terminating endpoint: it is used, nothing missing", service("a", "10.96.0.1", func(s *v1.Service) {
			s.Spec.Type = v1.ServiceTypeNodePort
			s.Spec.Ports[0].NodePort = 30080
			s.Spec.ExternalTrafficPolicy = v1.ServiceExternalTrafficPolicyLocal
		}), []*discoveryv1.EndpointSlice{sliceOf("a", "a-1", discoveryv1.AddressTypeIPv4,
			terminatingEP("10.244.1.7", node, true), readyEP("10.244.2.7", "node-b"))},
			map[string]int{"internal": 0, "external": 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var slices []*desired.EndpointSlice
			for _, s := range tc.slices {
				c := desired.SliceOf(s)
				slices = append(slices, &c)
			}
			res := desired.ForService(desired.ServiceInput{Service: tc.svc, Slices: slices}, cfg)
			ts := newTallies()
			ts.set(types.NamespacedName{Namespace: "default", Name: "a"}, tallyOf(res))
			if got := ts.noLocalEndpoints(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("noLocalEndpoints = %v, want %v", got, tc.want)
			}
		})
	}
}
