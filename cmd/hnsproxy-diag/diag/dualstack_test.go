package diag

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
)

// dualStack is a dual-stack NodePort Service web/dual (node port 30060) on
// pod dual-a (win-a) and, in IPv6, a pod on win-b: IPv6 load balancers,
// whose flag and addresses HNS may echo otherwise, and a dual-stack
// backend endpoint.
func dualStack() []runtime.Object {
	svc := &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "dual"},
		Spec: v1.ServiceSpec{Type: v1.ServiceTypeNodePort, ClusterIP: "10.96.0.60", ClusterIPs: []string{"10.96.0.60", "fd00:10:96::60"},
			IPFamilies: []v1.IPFamily{v1.IPv4Protocol, v1.IPv6Protocol},
			Ports:      []v1.ServicePort{{Name: "http", Protocol: v1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(8080), NodePort: 30060}}}}
	return []runtime.Object{svc,
		webSlice("dual", "dual-4", discoveryv1.AddressTypeIPv4, map[string][2]string{dualA: {"dual-a", self}}),
		webSlice("dual", "dual-6", discoveryv1.AddressTypeIPv6, map[string][2]string{dualA6: {"dual-a", self}, "fd00:10:244:2::60": {"dual-b", other}}),
	}
}

// webSlice is an EndpointSlice name of Service web/service, port http to
// 8080, with the ready pods (pod name and node, by address).
func webSlice(service, name string, typ discoveryv1.AddressType, pods map[string][2]string) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "web", Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: service}},
		AddressType: typ,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Protocol: ptr.To(v1.ProtocolTCP), Port: ptr.To(int32(8080))}},
	}
	for ip, at := range pods {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
			NodeName: ptr.To(at[1]), TargetRef: &v1.ObjectReference{Kind: "Pod", Namespace: "web", Name: at[0]}})
	}
	return s
}

// TestDualStackWhereHNSDoesNotEchoTheIPv6Flag: no public capture shows
// HNS echoing load balancer flag 2 (IPv6; docs/simulator.md, echo
// drop-unconfirmed-flags), and HNS refuses an IPv6 frontend without it, so
// a listed load balancer on an IPv6 VIP is IPv6 whatever the listing
// says. The table reads its backends by their IPv6 addresses (ok, nothing
// to correct, as the reconciler adopts it) and a trace to its VIP is
// load-balanced there.
func TestDualStackWhereHNSDoesNotEchoTheIPv6Flag(t *testing.T) {
	for _, echo := range []sim.Echo{{}, {DropUnconfirmedFlags: true}} {
		in := newFixtureOn(t, fixtureNode{profile: sim.ProfileWS2025, network: hnslb.NetworkTypeL2Bridge, dualStack: true}, echo).read()
		r := Diagnose(in)
		var v6 *Row
		for i, row := range r.LoadBalancers {
			if row.Service == "web/dual:http" && strings.HasPrefix(row.Frontend, "[fd00:10:96::60]") {
				v6 = &r.LoadBalancers[i]
			}
		}
		if v6 == nil || v6.State != StateOK || len(v6.Backends) != 2 || r.ToCorrect() != 0 {
			t.Errorf("echo %+v: IPv6 row %+v, %d to correct", echo, v6, r.ToCorrect())
		}
		tr, err := Trace(in, mustPacket(t, "["+dualA6+"]:40000", "[fd00:10:96::60]:80", "tcp"))
		if err != nil {
			t.Fatal(err)
		}
		if tr.LoadBalancer == nil || tr.LoadBalancer.Service != "web/dual:http" {
			t.Errorf("echo %+v: a pod to the IPv6 cluster IP: %s", echo, tr.Summary)
		}
	}
}
