package diag

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// TestDiagnoseLeavesOutAnotherProxysServices: a Service labelled
// service.kubernetes.io/service-proxy-name is another proxy's; hnsproxy
// never lists it (nor its slices), so the diagnosis must not want a load
// balancer for it and call it missing.
func TestDiagnoseLeavesOutAnotherProxysServices(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	other := map[string]string{"service.kubernetes.io/service-proxy-name": "other-proxy"}
	svc := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "elsewhere", Labels: other},
		Spec: v1.ServiceSpec{Type: v1.ServiceTypeClusterIP, ClusterIP: "10.96.0.40", ClusterIPs: []string{"10.96.0.40"},
			Ports: []v1.ServicePort{{Name: "http", Protocol: v1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}
	sliceLabels := map[string]string{discoveryv1.LabelServiceName: "elsewhere", "service.kubernetes.io/service-proxy-name": "other-proxy"}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "web", Name: "elsewhere-1", Labels: sliceLabels},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Protocol: ptr.To(v1.ProtocolTCP), Port: ptr.To[int32](8080)}},
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{webA}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
			NodeName: ptr.To(self), TargetRef: &v1.ObjectReference{Kind: "Pod", Namespace: "web", Name: "web-a"}}},
	}
	if _, err := f.kube.CoreV1().Services("web").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.kube.DiscoveryV1().EndpointSlices("web").Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, row := range Diagnose(f.read()).LoadBalancers {
		if row.Service == "web/elsewhere:http" || row.State != StateOK {
			t.Errorf("row %+v: another proxy's Service is none of hnsproxy's", row)
		}
	}
}
