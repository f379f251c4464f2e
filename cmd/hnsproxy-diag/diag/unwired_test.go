package diag

import (
	"context"
	"fmt"
	"slices"
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

// unplacedService is web/<name> at vip:80->8080 over ips, which its slice
// places on no node (mirrored from a hand-made Endpoints object), beside
// web-b on win-b where withWebB.
func unplacedService(name, vip string, withWebB bool, ips ...string) []runtime.Object {
	svc := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: name},
		Spec: v1.ServiceSpec{ClusterIP: vip, ClusterIPs: []string{vip},
			Ports: []v1.ServicePort{{Name: "http", Protocol: v1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "web", Name: name + "-1", Labels: map[string]string{discoveryv1.LabelServiceName: name}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Protocol: ptr.To(v1.ProtocolTCP), Port: ptr.To[int32](8080)}},
	}
	for _, ip := range ips {
		slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}})
	}
	if withWebB {
		slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{Addresses: []string{webB}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
			NodeName: ptr.To(other), TargetRef: &v1.ObjectReference{Kind: "Pod", Namespace: "web", Name: "web-b"}})
	}
	return []runtime.Object{svc, slice}
}

// setPodCIDR gives this node's Node the pod CIDR its HNS network's subnet
// is (10.244.1.0/24), as kube-controller-manager allocates it.
func (f *fixture) setPodCIDR() {
	f.t.Helper()
	ctx := context.Background()
	node, err := f.kube.CoreV1().Nodes().Get(ctx, self, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	node.Spec.PodCIDR, node.Spec.PodCIDRs = "10.244.1.0/24", []string{"10.244.1.0/24"}
	if _, err := f.kube.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
		f.t.Fatal(err)
	}
}

// TestDiagnoseSaysALocalBackendWaitsForItsPodsEndpoint: a backend hnsproxy
// serves by a local endpoint only (here an address of this node's pod
// subnet that a slice places on no node, where no pod is) is left out of
// its load balancer until an endpoint of this node holds the address, and
// a load balancer with no other backend is not programmed at all. The
// diagnosis says so and names the address; it does not promise that
// hnsproxy's next sync or drift repair corrects what only a pod wired by
// the CNI can. An endpoint at the address on another network (a container
// runtime's NAT network) wires nothing hnsproxy uses.
func TestDiagnoseSaysALocalBackendWaitsForItsPodsEndpoint(t *testing.T) {
	f := newFixture(t)
	f.setPodCIDR()
	const stale, mixed = "10.244.1.77", "10.244.1.78"
	objs := append(unplacedService("stale", "10.96.0.40", false, stale), unplacedService("mixed", "10.96.0.41", true, mixed)...)
	f.killedCreating(sim.Faults{}, objs...) // the running hnsproxy's programming, not killed
	nat, err := f.hns.CreateNetwork(t.Context(), &hnslb.Network{Name: "nat", Type: hnslb.NetworkTypeNAT,
		Ipams: []hnslb.Ipam{{Type: "Static", Subnets: []hnslb.Subnet{{IpAddressPrefix: "10.244.1.0/24"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.hns.CreateEndpoint(t.Context(), nat.ID, &hnslb.Endpoint{Name: "on-nat", IpConfigurations: []hnslb.IPConfig{{IpAddress: stale}}}); err != nil {
		t.Fatal(err)
	}
	r := Diagnose(f.read())

	for _, tc := range []struct{ service, state, ip string }{
		{"web/stale:http", StateMissing, stale},
		{"web/mixed:http", StateDiffers, mixed},
	} {
		got := row(t, r, tc.service, RoleClusterIP)
		if got.State != tc.state {
			t.Errorf("%s: %s %q, want %s", tc.service, got.State, got.Why, tc.state)
		}
		why := strings.Join(got.Why, "\n")
		for _, promise := range []string{"corrects it at its next sync", "re-creates it"} {
			if strings.Contains(why, promise) {
				t.Errorf("%s: says %q, which only a pod wired at %s changes: %q", tc.service, promise, tc.ip, got.Why)
			}
		}
		if !strings.Contains(why, "no endpoint of this node holds "+tc.ip) {
			t.Errorf("%s: %q, want it to say no endpoint of this node holds %s", tc.service, got.Why, tc.ip)
		}
	}
	// A pod's endpoint missing from a load balancer that HNS does hold
	// is still hnsproxy's to correct, also beside a backend that waits.
	front := row(t, r, "web/frontend:http", RoleClusterIP)
	if front.State != StateOK {
		t.Fatalf("web/frontend: %s %q", front.State, front.Why)
	}
	mixedRow := row(t, r, "web/mixed:http", RoleClusterIP)
	for _, lb := range f.hns.Snapshot().LoadBalancers {
		if lb.ID != mixedRow.ID {
			continue
		}
		if err := f.hns.DeleteLoadBalancerOutOfBand(lb.ID); err != nil {
			t.Fatal(err)
		}
		lb.ID, lb.HostComputeEndpoints = "", slices.DeleteFunc(lb.HostComputeEndpoints, func(id string) bool {
			return strings.EqualFold(id, cipBackendID(t, r, webB))
		})
		if _, err := f.hns.PutLoadBalancerOutOfBand(lb); err != nil {
			t.Fatal(err)
		}
	}
	if got := row(t, Diagnose(f.read()), "web/mixed:http", RoleClusterIP); countState(got.Backends, "missing") != 2 || !hasLine(got.Why, "corrects it at its next sync") {
		t.Errorf("web/mixed without web-b: %s %q %+v, want web-b and %s missing, corrected at the next sync", got.State, got.Why, got.Backends, mixed)
	}
}

// TestDiagnoseReadsASpareStandingInForAnUnwiredBackend: on a build that
// caps a load balancer at 64 backends, a Service over the cap keeps its
// local backend first, here a host-network pod's address, which no
// endpoint ever holds; hnsproxy puts the next-ranked backend, a spare, in
// its place. The diagnosis reads that spare as hnsproxy's stand-in, not as
// a backend it does not want and corrects at its next sync.
func TestDiagnoseReadsASpareStandingInForAnUnwiredBackend(t *testing.T) {
	f := newFixtureOn(t, fixtureNode{profile: sim.ProfileWS2019, network: hnslb.NetworkTypeL2Bridge}, sim.Echo{})
	ips := make([]string, 0, 65)
	for i := range 65 {
		ips = append(ips, fmt.Sprintf("10.244.2.%d", 100+i))
	}
	objs := unplacedService("big", "10.96.0.42", false)
	slice := objs[1].(*discoveryv1.EndpointSlice)
	for _, ip := range ips {
		slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{Addresses: []string{ip},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}, NodeName: ptr.To(other)})
	}
	slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{Addresses: []string{selfIP}, // hostNetwork: true
		Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}, NodeName: ptr.To(self)})
	f.killedCreating(sim.Faults{}, objs...) // the running hnsproxy's programming, not killed
	got := row(t, Diagnose(f.read()), "web/big:http", RoleClusterIP)
	spares := 0
	for _, b := range got.Backends {
		switch {
		case b.State == "unwanted":
			t.Errorf("backend %+v read as unwanted", b)
		case b.State == BackendSpare:
			spares++
		}
	}
	if spares != 1 {
		t.Errorf("%d spares in %+v, want the one standing in for %s", spares, got.Backends, selfIP)
	}
	why := strings.Join(got.Why, "\n")
	if strings.Contains(why, "corrects it at its next sync") || !strings.Contains(why, "no endpoint of this node holds "+selfIP) {
		t.Errorf("why %q, want it to say no endpoint holds %s and promise no correction", got.Why, selfIP)
	}
}

// TestAMissingLoadBalancerWithSparesIsProgrammed: over the backend cap of
// 64, a Service whose kept backends are all local addresses no pod is
// wired at yet has spares on another node, which hnsproxy programs in
// their places. With that load balancer deleted behind hnsproxy's back,
// the diagnosis says drift repair re-creates it, not that hnsproxy
// programs none until the CNI wires a pod.
func TestAMissingLoadBalancerWithSparesIsProgrammed(t *testing.T) {
	f := newFixtureOn(t, fixtureNode{profile: sim.ProfileWS2019, network: hnslb.NetworkTypeL2Bridge}, sim.Echo{})
	objs := unplacedService("waiting", "10.96.0.42", false)
	slice := objs[1].(*discoveryv1.EndpointSlice)
	for i := range 66 {
		ip, node := fmt.Sprintf("10.244.1.%d", 100+i), self
		if i >= 64 {
			ip, node = fmt.Sprintf("10.244.2.%d", 100+i), other
		}
		slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{Addresses: []string{ip},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}, NodeName: ptr.To(node)})
	}
	f.killedCreating(sim.Faults{}, objs...) // the running hnsproxy's programming, not killed
	programmed := row(t, Diagnose(f.read()), "web/waiting:http", RoleClusterIP)
	if programmed.ID == "" || countState(programmed.Backends, BackendSpare) == 0 {
		t.Fatalf("web/waiting: %s %+v, want its load balancer on spares", programmed.State, programmed.Backends)
	}
	if err := f.hns.DeleteLoadBalancerOutOfBand(programmed.ID); err != nil {
		t.Fatal(err)
	}
	got := row(t, Diagnose(f.read()), "web/waiting:http", RoleClusterIP)
	if got.State != StateMissing || !hasLine(got.Why, "drift repair re-creates it") || hasLine(got.Why, "programs no load balancer") {
		t.Errorf("web/waiting deleted: %s %q, want missing, re-created by drift repair", got.State, got.Why)
	}
}
