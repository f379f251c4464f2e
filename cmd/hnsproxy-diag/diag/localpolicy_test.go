package diag

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/hnsproxy/hnsproxy/sim"
)

// localPolicyService is a Service of web whose one pod, at podIP, runs on
// win-b: on win-a a Local traffic policy leaves its frontends without a
// load balancer.
func localPolicyService(name, clusterIP, podIP string, edit func(*v1.Service)) []runtime.Object {
	svc := &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: name},
		Spec: v1.ServiceSpec{Type: v1.ServiceTypeClusterIP, ClusterIP: clusterIP, ClusterIPs: []string{clusterIP},
			Ports: []v1.ServicePort{{Name: "http", Protocol: v1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(8080)}}}}
	edit(svc)
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "web", Name: name + "-1", Labels: map[string]string{discoveryv1.LabelServiceName: name}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Protocol: ptr.To(v1.ProtocolTCP), Port: ptr.To(int32(8080))}},
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{podIP}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
			NodeName: ptr.To(other), TargetRef: &v1.ObjectReference{Kind: "Pod", Namespace: "web", Name: name + "-b"}}},
	}
	return []runtime.Object{svc, slice}
}

// TestLocalPoliciesWithoutALocalEndpointAreExplained: on a node without a
// pod of the Service, internalTrafficPolicy Local leaves its cluster IP
// without a load balancer (kube-proxy drops that traffic too), and
// externalTrafficPolicy Local its node port, external and ingress IPs,
// whether or not the other policy is Local as well, and for a ClusterIP
// Service with external IPs too (the API lets it set the policy). The
// notes say so, and a trace to the frontend names the policy that left it
// empty, not the other one. A Service whose cluster IP alone is Local has
// its external IP's load balancer here, and the note is about its cluster
// IP as a whole, not "some of its ports".
func TestLocalPoliciesWithoutALocalEndpointAreExplained(t *testing.T) {
	itp := v1.ServiceInternalTrafficPolicyLocal
	var more []runtime.Object
	more = append(more, localPolicyService("both", "10.96.0.40", "10.244.2.40", func(s *v1.Service) {
		s.Spec.Type = v1.ServiceTypeNodePort
		s.Spec.Ports[0].NodePort = 30081
		s.Spec.InternalTrafficPolicy = &itp
		s.Spec.ExternalTrafficPolicy = v1.ServiceExternalTrafficPolicyLocal
	})...)
	more = append(more, localPolicyService("internal", "10.96.0.41", "10.244.2.41", func(s *v1.Service) {
		s.Spec.InternalTrafficPolicy = &itp
	})...)
	more = append(more, localPolicyService("edge", "10.96.0.42", "10.244.2.42", func(s *v1.Service) {
		s.Spec.ExternalIPs = []string{"192.0.2.42"}
		s.Spec.ExternalTrafficPolicy = v1.ServiceExternalTrafficPolicyLocal
	})...)
	more = append(more, localPolicyService("reach", "10.96.0.44", "10.244.2.44", func(s *v1.Service) {
		s.Spec.InternalTrafficPolicy = &itp
		s.Spec.ExternalIPs = []string{"192.0.2.44"}
	})...)
	in := newFixtureWith(t, sim.Echo{}, more...).read()
	notes := Diagnose(in).Notes
	for _, want := range []string{
		"web/reach: internalTrafficPolicy Local and no ready endpoint on this node: by design",
		"web/both: internalTrafficPolicy Local and no ready endpoint on this node",
		"web/both: externalTrafficPolicy Local and no ready endpoint on this node",
		"web/internal: internalTrafficPolicy Local and no ready endpoint on this node",
		"web/edge: externalTrafficPolicy Local and no ready endpoint on this node",
	} {
		if !hasLine(notes, want) {
			t.Errorf("no note %q in %q", want, notes)
		}
	}
	for _, unwanted := range []string{"web/internal: externalTrafficPolicy", "web/edge: internalTrafficPolicy", "web/frontend: ", "web/ingress: internalTrafficPolicy"} {
		if hasLine(notes, unwanted) {
			t.Errorf("a note starts %q: %q", unwanted, notes)
		}
	}
	for _, tc := range []struct{ src, dst, note string }{
		{client + ":40000", "10.96.0.40:80", "ClusterIP frontend of web/both:http: internalTrafficPolicy Local"},
		{"198.51.100.7:40000", selfIP + ":30081", "NodePort frontend of web/both:http: externalTrafficPolicy Local"},
		{client + ":40000", "10.96.0.41:80", "ClusterIP frontend of web/internal:http: internalTrafficPolicy Local"},
		{"198.51.100.7:40000", "192.0.2.42:80", "ExternalIP frontend of web/edge:http: externalTrafficPolicy Local"},
	} {
		tr, err := Trace(in, mustPacket(t, tc.src, tc.dst, "tcp"))
		if err != nil {
			t.Fatalf("%s: %v", tc.dst, err)
		}
		if tr.LoadBalancer != nil || !hasLine(tr.Notes, tc.note) {
			t.Errorf("%s -> %s: want no load balancer and a note %q: %s %q", tc.src, tc.dst, tc.note, tr.Summary, tr.Notes)
		}
	}
}

// TestLocalPolicyWithoutALocalEndpointOnOnePortIsExplained: a local pod
// that does not name the Service's second target port is in the
// EndpointSlice controller's slice of the first port only, so with
// internalTrafficPolicy Local the first port has its cluster-IP load
// balancer here and the second none. The note says so for the one port,
// where the first port's load balancer used to hide it, and a trace to
// the second port names the policy. So too with externalTrafficPolicy
// Local on a LoadBalancer Service, whose health-check node port answers
// 200 here (a local endpoint serves it), so the note must not say 503.
func TestLocalPolicyWithoutALocalEndpointOnOnePortIsExplained(t *testing.T) {
	itp := v1.ServiceInternalTrafficPolicyLocal
	more := localPolicyService("metrics", "10.96.0.43", "10.244.2.43", func(s *v1.Service) {
		s.Spec.InternalTrafficPolicy = &itp
		s.Spec.Ports = append(s.Spec.Ports, v1.ServicePort{Name: "metrics", Protocol: v1.ProtocolTCP, Port: 9090, TargetPort: intstr.FromString("metrics")})
	})
	remote := more[1].(*discoveryv1.EndpointSlice)
	remote.Ports = append(remote.Ports, discoveryv1.EndpointPort{Name: ptr.To("metrics"), Protocol: ptr.To(v1.ProtocolTCP), Port: ptr.To(int32(9090))})
	local := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "web", Name: "metrics-2", Labels: map[string]string{discoveryv1.LabelServiceName: "metrics"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Protocol: ptr.To(v1.ProtocolTCP), Port: ptr.To(int32(8080))}},
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{webA}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
			NodeName: ptr.To(self), TargetRef: &v1.ObjectReference{Kind: "Pod", Namespace: "web", Name: "web-a"}}},
	}
	edge := localPolicyService("edge", "10.96.0.44", "10.244.2.44", func(s *v1.Service) {
		s.Spec.Type = v1.ServiceTypeLoadBalancer
		s.Spec.ExternalTrafficPolicy = v1.ServiceExternalTrafficPolicyLocal
		s.Spec.HealthCheckNodePort = 31001
		s.Spec.Ports[0].NodePort = 30091
		s.Spec.Ports = append(s.Spec.Ports, v1.ServicePort{Name: "metrics", Protocol: v1.ProtocolTCP, Port: 9090, TargetPort: intstr.FromString("metrics"), NodePort: 30092})
	})
	edgeRemote := edge[1].(*discoveryv1.EndpointSlice)
	edgeRemote.Ports = append(edgeRemote.Ports, discoveryv1.EndpointPort{Name: ptr.To("metrics"), Protocol: ptr.To(v1.ProtocolTCP), Port: ptr.To(int32(9090))})
	edgeLocal := local.DeepCopy()
	edgeLocal.Name, edgeLocal.Labels = "edge-2", map[string]string{discoveryv1.LabelServiceName: "edge"}
	in := newFixtureWith(t, sim.Echo{}, append(append(more, local, edgeLocal), edge...)...).read()
	notes := Diagnose(in).Notes
	for _, want := range []string{
		"web/metrics: internalTrafficPolicy Local and no ready endpoint on this node for 1 of its ports (in one IP family)",
		"web/edge: externalTrafficPolicy Local and no ready endpoint on this node for 1 of its ports (in one IP family)",
	} {
		if !hasLine(notes, want) {
			t.Errorf("no note %q in %q", want, notes)
		}
	}
	if hasLine(notes, "web/edge: ", "503") {
		t.Errorf("a note says web/edge's health-check node port answers 503, where a local endpoint serves one port: %q", notes)
	}
	tr, err := Trace(in, mustPacket(t, client+":40000", "10.96.0.43:9090", "tcp"))
	if err != nil {
		t.Fatal(err)
	}
	if tr.LoadBalancer != nil || !hasLine(tr.Notes, "ClusterIP frontend of web/metrics:metrics: internalTrafficPolicy Local") {
		t.Errorf("to the port without a local endpoint: want no load balancer and the policy's note: %s %q", tr.Summary, tr.Notes)
	}
	tr, err = Trace(in, mustPacket(t, client+":40000", "10.96.0.43:80", "tcp"))
	if err != nil {
		t.Fatal(err)
	}
	if tr.LoadBalancer == nil {
		t.Errorf("to the port with a local endpoint: want its load balancer: %s %q", tr.Summary, tr.Notes)
	}
}
