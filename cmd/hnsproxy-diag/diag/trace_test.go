package diag

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/sim/simtest"
	"github.com/hnsproxy/hnsproxy/vfp"
)

func mustPacket(t testing.TB, src, dst, proto string) vfp.Packet {
	t.Helper()
	p, err := vfp.ParsePacket(src, dst, proto)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTraceNamesWhatItMeets(t *testing.T) {
	f := newFixture(t)
	in := f.read()
	// Sources chosen so the 5-tuple hash picks each backend once.
	seen := map[string]string{}
	for port := 40000; port < 40100 && len(seen) < 2; port++ {
		tr, err := Trace(in, mustPacket(t, client+":"+strconv.Itoa(port), frontendIP+":80", "tcp"))
		if err != nil {
			t.Fatal(err)
		}
		if tr.LoadBalancer == nil || tr.LoadBalancer.Service != "web/frontend:http" || tr.LoadBalancer.Role != RoleClusterIP {
			t.Fatalf("load balancer %+v", tr.LoadBalancer)
		}
		seen[tr.Outcome] = tr.Backend
		if !strings.Contains(strings.Join(tr.Hops, "\n"), "[web/frontend:http ClusterIP]") {
			t.Errorf("hops do not name the load balancer: %q", tr.Hops)
		}
	}
	if seen["delivered-to-pod"] != "pod web/web-a on win-a" || seen["handed-off"] != "pod web/web-b on win-b" {
		t.Errorf("outcomes by backend: %q", seen)
	}
}

func TestTraceExplainsDrops(t *testing.T) {
	f := newFixture(t)
	in := f.read()
	tr, err := Trace(in, mustPacket(t, "198.51.100.7:40000", ingressIP+":443", "tcp"))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Outcome != "dropped" || !hasLine(tr.Notes, "LoadBalancer frontend of web/ingress:http", "externalTrafficPolicy Local") {
		t.Errorf("ETP Local ingress at a node without endpoints: %+v", tr)
	}
	tr, err = Trace(in, mustPacket(t, "198.51.100.7:40000", frontendIP+":80", "tcp"))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Outcome != "dropped" || !hasLine(tr.Notes, "cluster IP of web/frontend:http", "not from outside") {
		t.Errorf("ClusterIP from outside: %+v", tr)
	}
	for _, row := range Diagnose(in).LoadBalancers {
		if row.Role == RoleClusterIP && row.Service == "web/frontend:http" {
			if err := f.hns.DeleteLoadBalancerOutOfBand(row.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	tr, err = Trace(f.read(), mustPacket(t, client+":40000", frontendIP+":80", "tcp"))
	if err != nil {
		t.Fatal(err)
	}
	// Without its load balancer a cluster IP is an address like any other.
	if tr.LoadBalancer != nil || !hasLine(tr.Notes, "ClusterIP frontend of web/frontend:http", "HNS has none") {
		t.Errorf("deleted ClusterIP load balancer: %+v", tr)
	}
}

// TestTraceRefusesSendersOnOtherNodes: a source another node holds is
// refused, naming that node; a source whose slice names no node (mirrored
// from a hand-made Endpoints object), here this node's client pod, is no
// other node's and is traced.
func TestTraceRefusesSendersOnOtherNodes(t *testing.T) {
	in := newFixtureWith(t, sim.Echo{}, unplacedService("unplaced", "10.96.0.40", false, client)...).read()
	for _, src := range []string{webB + ":40000", otherIP + ":40000"} {
		_, err := Trace(in, mustPacket(t, src, frontendIP+":80", "tcp"))
		if err == nil || !strings.Contains(err.Error(), "run hnsproxy-diag on "+other) {
			t.Errorf("source %s: %v", src, err)
		}
	}
	if tr, err := Trace(in, mustPacket(t, client+":40000", frontendIP+":80", "tcp")); err != nil || tr.LoadBalancer == nil {
		t.Errorf("source %s, which a slice places on no node: %v, %+v; want it traced through the cluster IP", client, err, tr)
	}
}

// A trace in IPv6 on a node whose Node lists no IPv6 address (InternalIP
// or ExternalIP) answers with what hnsproxy does there: IPv6 cluster IPs
// are served (l2bridge), IPv6 node ports are not, and the node's own IPv6
// address, which the Node does not list, is named as unknown rather than
// left as "no pod or node address".
func TestTraceIPv6OnANodeWithoutIPv6(t *testing.T) {
	svc := &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "v6"},
		Spec: v1.ServiceSpec{Type: v1.ServiceTypeNodePort, ClusterIP: "fd00:96::20", ClusterIPs: []string{"fd00:96::20"},
			IPFamilies: []v1.IPFamily{v1.IPv6Protocol},
			Ports:      []v1.ServicePort{{Name: "http", Protocol: v1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(8080), NodePort: 30082}}}}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "web", Name: "v6-1", Labels: map[string]string{discoveryv1.LabelServiceName: "v6"}},
		AddressType: discoveryv1.AddressTypeIPv6,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Protocol: ptr.To(v1.ProtocolTCP), Port: ptr.To(int32(8080))}},
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"fd00:244:2::10"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
			NodeName: ptr.To(other), TargetRef: &v1.ObjectReference{Kind: "Pod", Namespace: "web", Name: "v6-b"}}},
	}
	in := newFixtureWith(t, sim.Echo{}, svc, slice).read()
	if ips := Diagnose(in).NodeIPs; !slices.Equal(ips, []string{selfIP}) {
		t.Fatalf("node IPs %v, want the IPv4 one only", ips)
	}
	for _, tc := range []struct{ dst, note string }{
		{"[2001:db8::11]:30082", "NodePort frontend of web/v6:http"},
		{"[2001:db8::11]:22", "the trace does not know 2001:db8::11"},
		{"[fd00:96::20]:80", "cluster IP of web/v6:http"},
	} {
		tr, err := Trace(in, mustPacket(t, "[2001:db8::7]:40000", tc.dst, "tcp"))
		if err != nil {
			t.Fatalf("%s: %v", tc.dst, err)
		}
		if tr.Outcome != "dropped" || !hasLine(tr.Notes, tc.note) {
			t.Errorf("%s: want dropped with a note on %q: %s %q", tc.dst, tc.note, tr.Summary, tr.Notes)
		}
		if tc.dst != "[fd00:96::20]:80" && !hasLine(tr.Notes, "Node lists no IPv6 address") {
			t.Errorf("%s: notes do not say the Node lists no IPv6 address: %q", tc.dst, tr.Notes)
		}
	}
	// A packet of another family than its source is refused with an error.
	if _, err := Trace(in, mustPacket(t, client+":40000", "[fd00:96::20]:80", "tcp")); err == nil || !strings.Contains(err.Error(), "different IP families") {
		t.Errorf("IPv4 source to an IPv6 Service: %v", err)
	}
}

// TestTraceFromOutsideWhereHNSDoesNotEchoTheExternalFlag: vfp tells an
// external VIP, which traffic from outside the node reaches, by the
// VipExternalIP port flag, and no public capture shows HNS answering a
// listing with it (hcn does not declare it; docs/simulator.md, echo
// drop-undeclared-flags). On such a node the trace still knows the
// Services' external and ingress IPs, so a client outside reaches an
// external or ingress IP's local backend, and still not a cluster IP.
func TestTraceFromOutsideWhereHNSDoesNotEchoTheExternalFlag(t *testing.T) {
	svc := &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "ext"},
		Spec: v1.ServiceSpec{Type: v1.ServiceTypeLoadBalancer, ClusterIP: "10.96.0.40", ClusterIPs: []string{"10.96.0.40"}, ExternalIPs: []string{"192.0.2.40"},
			Ports: []v1.ServicePort{{Name: "http", Protocol: v1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(8080), NodePort: 30084}}},
		Status: v1.ServiceStatus{LoadBalancer: v1.LoadBalancerStatus{Ingress: []v1.LoadBalancerIngress{{IP: "192.0.2.41"}}}}}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "web", Name: "ext-1", Labels: map[string]string{discoveryv1.LabelServiceName: "ext"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Protocol: ptr.To(v1.ProtocolTCP), Port: ptr.To(int32(8080))}},
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{webA}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
			NodeName: ptr.To(self), TargetRef: &v1.ObjectReference{Kind: "Pod", Namespace: "web", Name: "web-a"}}},
	}
	for _, echo := range []sim.Echo{{}, {DropUndeclaredFlags: true}} {
		in := newFixtureWith(t, echo, svc, slice).read()
		for _, vip := range []string{"192.0.2.40", "192.0.2.41"} { // external, ingress
			tr, err := Trace(in, mustPacket(t, "198.51.100.7:40000", vip+":80", "tcp"))
			if err != nil {
				t.Fatal(err)
			}
			if tr.Outcome != "delivered-to-pod" || tr.Backend != "pod web/web-a on win-a" {
				t.Errorf("echo %+v: %s from outside: %s %q", echo, vip, tr.Summary, tr.Notes)
			}
		}
		tr, err := Trace(in, mustPacket(t, "198.51.100.7:40000", "10.96.0.40:80", "tcp"))
		if err != nil {
			t.Fatal(err)
		}
		if tr.Outcome != "dropped" || !hasLine(tr.Notes, "cluster IP of web/ext:http", "not from outside") {
			t.Errorf("echo %+v: cluster IP from outside: %s %q", echo, tr.Summary, tr.Notes)
		}
	}
}

// TestTraceSaysItDoesNotEvaluateACLs: a policy agent (felix, Azure NPM)
// wrote ACLs onto the client's and web-a's endpoints. The trace still
// follows only the load balancers and routes, and says that it did not
// evaluate those ACLs, on the sending and the receiving endpoint, where
// before a packet a network policy drops read as delivered. A trace
// through endpoints without ACLs says nothing of them. A remote endpoint
// at the client's address (Windows Server 2022 lets one share a local
// pod's, kubernetes/kubernetes#138000), ACLs and all, is not on the
// packet's way out and is not named.
func TestTraceSaysItDoesNotEvaluateACLs(t *testing.T) {
	f := newFixture(t) // ws2022
	var network string
	for _, ep := range f.hns.Snapshot().Endpoints {
		if ep.IP() == client {
			network = ep.HostComputeNetwork
		}
	}
	remote, err := f.hns.CreateEndpoint(t.Context(), network, &hnslb.Endpoint{IpConfigurations: []hnslb.IPConfig{{IpAddress: client}},
		Flags: hnslb.EndpointFlagsRemoteEndpoint, Policies: []hnslb.EndpointPolicy{hnslb.NewEndpointPolicy(hnslb.EndpointPolicyProviderAddress,
			hnslb.ProviderAddressEndpointPolicySetting{ProviderAddress: otherIP})}})
	if err != nil {
		t.Fatal(err)
	}
	toWebA := func() *TraceReport {
		t.Helper()
		for port := 40000; port < 40100; port++ {
			tr, err := Trace(f.read(), mustPacket(t, client+":"+strconv.Itoa(port), frontendIP+":80", "tcp"))
			if err != nil {
				t.Fatal(err)
			}
			if tr.Outcome == "delivered-to-pod" {
				return tr
			}
		}
		t.Fatal("no source port reaches web-a")
		return nil
	}
	if tr := toWebA(); hasLine(tr.Notes, "ACL") {
		t.Errorf("notes without any ACL: %q", tr.Notes)
	}
	for _, ep := range f.hns.Snapshot().Endpoints {
		if ep.IP() == client || ep.IP() == webA {
			if err := f.hns.ApplyEndpointPoliciesOutOfBand(ep.ID, sim.PolicyApplyReplaceACLs, simtest.AgentACLs("np", 2)); err != nil {
				t.Fatal(err)
			}
		}
	}
	tr := toWebA()
	if tr.Outcome != "delivered-to-pod" || !hasLine(tr.Notes, "[pod web/web-a]", "4 ACL", "not evaluated") ||
		!hasLine(tr.Notes, client, "4 ACL", "not evaluated") {
		t.Errorf("trace through endpoints with ACLs: outcome %s, notes %q", tr.Outcome, tr.Notes)
	}
	if hasLine(tr.Notes, "[remote endpoint "+client) || hasLine(tr.Notes, remote.ID) {
		t.Errorf("notes name the remote endpoint at the client's address, which the packet does not pass: %q", tr.Notes)
	}
}

// TestTraceBesideALoadBalancerWithoutPortMappings: HNS can keep a load
// balancer without port mappings after a failed create
// (kubernetes/kubernetes#141488; the table reports it as extra). A trace to
// a healthy Service on that node works: the leftover matches no packet.
// Before, it failed every trace on the node.
func TestTraceBesideALoadBalancerWithoutPortMappings(t *testing.T) {
	f := newFixture(t)
	if _, err := f.hns.PutLoadBalancerOutOfBand(hnslb.LoadBalancer{FrontendVIPs: []string{"10.96.9.9"}}); err != nil {
		t.Fatal(err)
	}
	tr, err := Trace(f.read(), mustPacket(t, client+":40000", frontendIP+":80", "tcp"))
	if err != nil {
		t.Fatalf("trace to a healthy Service: %v", err)
	}
	if tr.LoadBalancer == nil || tr.Verdict.Outcome != vfp.DeliveredToPod {
		t.Errorf("trace to a healthy Service: %+v", tr)
	}
}
