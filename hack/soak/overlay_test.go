//go:build linux

package main

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/hnsproxy/hnsproxy/e2e/framework"
	"github.com/hnsproxy/hnsproxy/hnslb"
)

// On overlay the verifier expects, as the desired state says, the source
// VIP's local endpoint and a remote endpoint at the other node's provider
// address for each of that node's pods a Service uses.
func TestOverlayExpectation(t *testing.T) {
	t.Cleanup(func() { clusterSpec.NetworkType = framework.NetworkL2Bridge })
	if err := useNetwork(framework.NetworkOverlay); err != nil {
		t.Fatal(err)
	}
	if useNetwork("nat") == nil {
		t.Error("useNetwork accepted nat")
	}
	a, b := clusterSpec.Nodes[0], clusterSpec.Nodes[1]
	node := nodeOf(a)
	svc := corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: soakNamespace, Name: "web"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.0.20", ClusterIPs: []string{"10.96.0.20"},
			Ports: []corev1.ServicePort{{Name: "p0", Protocol: corev1.ProtocolTCP, Port: 80}}}}
	slice := discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: soakNamespace, Name: "web-1", Labels: map[string]string{discoveryv1.LabelServiceName: "web"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("p0"), Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To[int32](8080)}},
		Endpoints: []discoveryv1.Endpoint{
			{Addresses: []string{"10.244.1.10"}, NodeName: ptr.To(a.Name), Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}},
			{Addresses: []string{"10.244.2.10"}, NodeName: ptr.To(b.Name), Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}},
		},
	}
	ns := settingsOf(a, 10256, hnslb.Version{Major: 13, Minor: 2}, hnslb.OSBuild{})
	want := computeExpected([]corev1.Service{svc}, []discoveryv1.EndpointSlice{slice}, node, ns)
	if ep, ok := want.RemoteEndpoints["10.244.2.10"]; !ok || ep.Local || ep.ProviderAddress != b.NodeIP {
		t.Errorf("remote endpoint for win-b's pod: %+v (present %v), want one at provider address %s", ep, ok, b.NodeIP)
	}
	if ep, ok := want.RemoteEndpoints[a.SourceVIP().String()]; !ok || !ep.Local {
		t.Errorf("source VIP endpoint: %+v (present %v), want a local one", ep, ok)
	}
	if _, ok := want.RemoteEndpoints["10.244.1.10"]; ok {
		t.Error("a remote endpoint for the node's own pod")
	}
	for _, lb := range want.LBs {
		if lb.SourceVIP != a.SourceVIP().String() {
			t.Errorf("load balancer %s: source VIP %q, want %s", lb.Key, lb.SourceVIP, a.SourceVIP())
		}
	}
	if len(want.LBs) == 0 {
		t.Error("no load balancer for the Service")
	}
}

// nodeOf is spec's Node object as the rig registers it.
func nodeOf(spec framework.NodeSpec) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: spec.Name},
		Spec:   corev1.NodeSpec{PodCIDR: spec.PodCIDR, PodCIDRs: []string{spec.PodCIDR}},
		Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: spec.NodeIP}}}}
}

// hnsproxy's source-VIP endpoint is local but no pod's: the soak must
// neither take it for the CNI's nor wire it again with the pods.
func TestIsPodEndpoint(t *testing.T) {
	for _, c := range []struct {
		ep   hnslb.Endpoint
		want bool
	}{
		{hnslb.Endpoint{HostComputeNamespace: "ns"}, true},
		{hnslb.Endpoint{}, false}, // the source VIP's
		{hnslb.Endpoint{Flags: hnslb.EndpointFlagsRemoteEndpoint}, false},
	} {
		if got := isPodEndpoint(&c.ep); got != c.want {
			t.Errorf("isPodEndpoint(%+v) = %v, want %v", c.ep, got, c.want)
		}
	}
}
