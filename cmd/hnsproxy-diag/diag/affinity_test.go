package diag

import (
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

// stickyService is web/sticky, ClientIP affinity at 10.96.0.40:80, backed by web-a.
func stickyService() []runtime.Object {
	svc := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "sticky"},
		Spec: v1.ServiceSpec{ClusterIP: "10.96.0.40", ClusterIPs: []string{"10.96.0.40"}, SessionAffinity: v1.ServiceAffinityClientIP,
			Ports: []v1.ServicePort{{Name: "http", Protocol: v1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "web", Name: "sticky-1", Labels: map[string]string{discoveryv1.LabelServiceName: "sticky"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Protocol: ptr.To(v1.ProtocolTCP), Port: ptr.To[int32](8080)}},
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{webA}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
			NodeName: ptr.To(self), TargetRef: &v1.ObjectReference{Kind: "Pod", Namespace: "web", Name: "web-a"}}},
	}
	return []runtime.Object{svc, slice}
}

// TestDiagnoseReadsSessionAffinity: a load balancer whose session affinity
// is not the Service's differs, and says so; a sticky load balancer HNS
// answers without its distribution (no public capture shows one answered:
// sim.Echo.DropDistribution) is ok, as the reconciler adopts it.
func TestDiagnoseReadsSessionAffinity(t *testing.T) {
	for _, echo := range []sim.Echo{{}, {DropDistribution: true}} {
		f := newFixtureWith(t, echo, stickyService()...)
		r := Diagnose(f.read())
		if sticky := row(t, r, "web/sticky:http", RoleClusterIP); sticky.State != StateOK {
			t.Errorf("echo %+v: sticky row %s %q, want ok", echo, sticky.State, sticky.Why)
		}
	}

	f := newFixture(t)
	cip := row(t, Diagnose(f.read()), "web/frontend:http", RoleClusterIP)
	got, err := f.hns.GetLoadBalancerByID(t.Context(), cip.ID)
	if err != nil {
		t.Fatal(err)
	}
	got.PortMappings[0].DistributionType = hnslb.DistributionSourceIP // a stale kube-proxy's, the Service's affinity since turned off
	if _, err := f.hns.PutLoadBalancerOutOfBand(*got); err != nil {
		t.Fatal(err)
	}
	cip = row(t, Diagnose(f.read()), "web/frontend:http", RoleClusterIP)
	if cip.State != StateDiffers || !hasLine(cip.Why, "session affinity is client-IP-affinity, hnsproxy would program no-affinity") {
		t.Errorf("ClusterIP row with affinity the Service lacks: %s %q", cip.State, cip.Why)
	}
}
