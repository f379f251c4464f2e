package reconciler

import (
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// calicoEP makes the host endpoint Calico for Windows makes on its VXLAN
// network at start (projectcalico/calico cni-plugin
// pkg/dataplane/windows createAndAttachVxlanHostEP, called from node's
// startup_windows.go): "Calico_ep", a remote endpoint at the pod subnet's
// .2 with the host's MAC and a provider address of the node's IP. The
// Calico kube-proxy start script (sig-windows-tools hostprocess/calico/
// kube-proxy/start.ps1) passes its address as --source-vip.
func (e *env) calicoEP(ip string) string {
	e.t.Helper()
	return e.othersEndpoint("Calico_ep", &hnslb.Endpoint{
		Name: "Calico_ep", IpConfigurations: []hnslb.IPConfig{{IpAddress: ip}}, MacAddress: "00-15-5D-00-00-01",
		Flags: hnslb.EndpointFlagsRemoteEndpoint,
		Policies: []hnslb.EndpointPolicy{hnslb.NewEndpointPolicy(hnslb.EndpointPolicyProviderAddress,
			hnslb.ProviderAddressEndpointPolicySetting{ProviderAddress: "192.168.0.1"})},
	})
}

// The source VIP at an address another program's endpoint holds (Calico's
// Calico_ep, kube-proxy's source VIP endpoint) is served by that endpoint,
// as winkernel takes any endpoint at the source VIP: hnsproxy creates
// none, and neither replaces, adopts nor (at --cleanup) deletes it.
func TestSourceVIPHeldByAnotherProgramsEndpointIsLeftToIt(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	const vip = "10.244.1.2"
	calico := e.calicoEP(vip)
	want := e.threeServices()
	for i := range want {
		want[i].SourceVIP = vip
	}
	sourceVIP := intent.RemoteEndpoint{IP: vip, MAC: "00-15-5D-00-00-01", Local: true}
	r := e.reconciler()
	handOver(r, want, []intent.RemoteEndpoint{sourceVIP})
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	e.converge(r)
	if !e.hasObject(calico) {
		t.Fatal("hnsproxy deleted Calico_ep, the endpoint holding its source VIP")
	}
	for _, ep := range e.snapshot().Endpoints {
		if ep.IP() == vip && ep.ID != calico {
			t.Errorf("hnsproxy made endpoint %s at the source VIP beside Calico_ep", ep.ID)
		}
	}
	e.assertRealized(want, vip) // Calico_ep, a remote endpoint

	// Drift repair and a restart leave it too, and so does --cleanup.
	if err := r.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	e.converge(r)
	r2 := e.reconciler()
	handOver(r2, want, []intent.RemoteEndpoint{sourceVIP})
	if err := r2.Start(ctx); err != nil {
		t.Fatal(err)
	}
	e.converge(r2)
	if _, err := Cleanup(ctx, e.hns, e.options()); err != nil {
		t.Fatal(err)
	}
	if !e.hasObject(calico) {
		t.Fatal("--cleanup deleted Calico_ep")
	}
}
