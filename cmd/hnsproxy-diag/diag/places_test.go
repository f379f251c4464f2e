package diag

import (
	"net/netip"
	"testing"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
)

// The diagnosis names what is behind an HNS address from the Kubernetes
// objects, whose addresses it reads as hnsproxy and kube-proxy do
// (kubeip): an endpoint or Node address stored with leading zeros names
// the canonical address HNS holds; a zoned one names nothing; a targetRef
// that is not a Pod (a Node, behind a hand-made Endpoints object) names no
// pod. A Node's addresses are its InternalIPs and ExternalIPs, as
// hnsproxy's node IPs are (desired.NodeIPs).
func TestPlacesReadAddressesAsKubeProxy(t *testing.T) {
	node := "win-2"
	in := &Inputs{
		Slices: []discoveryv1.EndpointSlice{{Endpoints: []discoveryv1.Endpoint{
			{Addresses: []string{"010.244.001.005"}, NodeName: &node, TargetRef: &v1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: "web-1"}},
			{Addresses: []string{"fe80::5%eth0"}, NodeName: &node},
			{Addresses: []string{"10.0.0.12"}, NodeName: &node, TargetRef: &v1.ObjectReference{Kind: "Node", Name: node}},
		}}},
		Nodes: []v1.Node{{ObjectMeta: metav1.ObjectMeta{Name: node}, Status: v1.NodeStatus{Addresses: []v1.NodeAddress{
			{Type: v1.NodeInternalIP, Address: "010.000.000.012"},
			{Type: v1.NodeInternalIP, Address: "fe80::12%eth0"},
			{Type: v1.NodeExternalIP, Address: "203.0.113.12"},
			{Type: v1.NodeHostName, Address: "192.0.2.12"},
		}}}},
	}
	pods := in.podPlaces()
	if p := pods[netip.MustParseAddr("10.244.1.5")]; p.Pod != "ns/web-1" || p.Node != node || len(pods) != 2 {
		t.Errorf("pod places %v, want ns/web-1 on %s at 10.244.1.5, and 10.0.0.12", pods, node)
	}
	if p := pods[netip.MustParseAddr("10.0.0.12")]; p != (place{Node: node}) {
		t.Errorf("10.0.0.12, a Node's address: %+v, want no pod, on %s", p, node)
	}
	nodes := in.nodeAddresses()
	if nodes[netip.MustParseAddr("10.0.0.12")] != node || nodes[netip.MustParseAddr("203.0.113.12")] != node || len(nodes) != 2 {
		t.Errorf("node addresses %v, want %s at 10.0.0.12 and its ExternalIP 203.0.113.12 only", nodes, node)
	}
}

// TestFrontendsNameTheServicePort: each frontend key names its Service port
// and role; a Service's address in a non-canonical form (as the API may
// hold an external IP) names the load balancer HNS holds in canonical
// form; a Service's ingress IP on another port is its health-check
// frontend; of Services naming one frontend, the one hnsproxy gives it
// names it (proxier/desired's claims: a cluster IP over an ingress IP over
// an external IP, whatever the list's order), not a tenant's external IP
// on another's cluster IP, which hnsproxy refuses.
func TestFrontendsNameTheServicePort(t *testing.T) {
	svcs := []v1.Service{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "early"}, Spec: v1.ServiceSpec{
			ClusterIP: "10.96.0.32", ExternalIPs: []string{"10.96.0.31"},
			Ports: []v1.ServicePort{{Protocol: v1.ProtocolUDP, Port: 53}}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "lb"}, Spec: v1.ServiceSpec{
			ClusterIP: "10.96.0.30", ClusterIPs: []string{"10.96.0.30", "fd00:96::30"}, ExternalIPs: []string{"2001:DB8:0::10"},
			Ports: []v1.ServicePort{{Name: "https", Protocol: v1.ProtocolTCP, Port: 443, NodePort: 30443}}},
			Status: v1.ServiceStatus{LoadBalancer: v1.LoadBalancerStatus{Ingress: []v1.LoadBalancerIngress{{IP: "203.0.113.10"}}}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "later"}, Spec: v1.ServiceSpec{
			ClusterIP: "10.96.0.31", ExternalIPs: []string{"203.0.113.10"},
			Ports: []v1.ServicePort{{Protocol: v1.ProtocolUDP, Port: 53}}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "tenant"}, Spec: v1.ServiceSpec{
			ClusterIP: "10.96.0.33", ExternalIPs: []string{"10.96.0.31", "203.0.113.10"},
			Ports: []v1.ServicePort{{Name: "dns", Protocol: v1.ProtocolUDP, Port: 53}, {Name: "https", Protocol: v1.ProtocolTCP, Port: 443}}}},
	}
	f := frontendsOf(svcs)
	for _, tc := range []struct {
		key           intent.LBKey
		service, role string
	}{
		{intent.LBKey{VIP: "10.96.0.30", Protocol: hnslb.ProtocolTCP, Port: 443}, "web/lb:https", RoleClusterIP},
		{intent.LBKey{Family: intent.IPv6, VIP: "fd00:96::30", Protocol: hnslb.ProtocolTCP, Port: 443}, "web/lb:https", RoleClusterIP},
		{intent.LBKey{Family: intent.IPv6, VIP: "2001:db8::10", Protocol: hnslb.ProtocolTCP, Port: 443}, "web/lb:https", RoleExternalIP},
		{intent.LBKey{VIP: "203.0.113.10", Protocol: hnslb.ProtocolTCP, Port: 443}, "web/lb:https", RoleLoadBalancer},
		{intent.LBKey{Protocol: hnslb.ProtocolTCP, Port: 30443}, "web/lb:https", RoleNodePort},
		{intent.LBKey{VIP: "203.0.113.10", Protocol: hnslb.ProtocolTCP, Port: 31000}, "web/lb", RoleHealthCheck},
		{intent.LBKey{VIP: "203.0.113.10", Protocol: hnslb.ProtocolUDP, Port: 53}, "web/lb", RoleHealthCheck},
		{intent.LBKey{VIP: "10.96.0.31", Protocol: hnslb.ProtocolUDP, Port: 53}, "web/later:53", RoleClusterIP},
		{intent.LBKey{VIP: "10.96.0.31", Protocol: hnslb.ProtocolTCP, Port: 53}, "", ""},
		{intent.LBKey{Protocol: hnslb.ProtocolTCP, Port: 443}, "", ""},
	} {
		if s, r := f.servicePort(tc.key); s != tc.service || r != tc.role {
			t.Errorf("%v: %q %q, want %q %q", tc.key, s, r, tc.service, tc.role)
		}
	}
}
