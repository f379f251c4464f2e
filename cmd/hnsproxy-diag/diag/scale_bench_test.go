package diag

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/hnsproxy/hnsproxy/sim"
)

// manyServices: n ClusterIP Services of 10 endpoints each on win-b.
func manyServices(n int) []runtime.Object {
	var objs []runtime.Object
	for i := range n {
		ip, name := fmt.Sprintf("10.97.%d.%d", i/250, i%250+1), fmt.Sprintf("s%d", i)
		svc := &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "load", Name: name},
			Spec: v1.ServiceSpec{Type: v1.ServiceTypeClusterIP, ClusterIP: ip, ClusterIPs: []string{ip},
				Ports: []v1.ServicePort{{Name: "http", Protocol: v1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(8080)}}}}
		s := &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Namespace: "load", Name: name + "-1", Labels: map[string]string{discoveryv1.LabelServiceName: name}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Protocol: ptr.To(v1.ProtocolTCP), Port: ptr.To[int32](8080)}},
		}
		for j := range 10 {
			pod := (i + j) % 250
			s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{fmt.Sprintf("10.244.2.%d", pod+1)},
				Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}, NodeName: ptr.To(other),
				TargetRef: &v1.ObjectReference{Kind: "Pod", Namespace: "load", Name: fmt.Sprintf("p%d", pod)}})
		}
		objs = append(objs, svc, s)
	}
	return objs
}

// BenchmarkDiagnose10kServices: the table and a trace of a node with
// 10,000 Services, its HNS programmed as hnsproxy would (each row and each
// load balancer a trace names looks its Service port up once).
func BenchmarkDiagnose10kServices(b *testing.B) {
	in := newFixtureWith(b, sim.Echo{}, manyServices(10000)...).read()
	p := mustPacket(b, client+":40000", "10.97.0.1:80", "tcp")
	b.ReportAllocs()
	for b.Loop() {
		if r := Diagnose(in); len(r.LoadBalancers) != 10003 {
			b.Fatalf("%d rows", len(r.LoadBalancers))
		}
		if _, err := Trace(in, p); err != nil {
			b.Fatal(err)
		}
	}
}
