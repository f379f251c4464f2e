package reconciler

import (
	"strings"
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

// overSourceVIP are threeServices with vip as their source VIP.
func (e *env) overSourceVIP(vip string) []intent.LB {
	want := e.threeServices()
	for i := range want {
		want[i].SourceVIP = vip
	}
	return want
}

// startedOver starts a reconciler with want and the source VIP endpoint at
// vip desired, and converges it.
func (e *env) startedOver(want []intent.LB, vip string) *Reconciler {
	e.t.Helper()
	r := e.reconciler()
	handOver(r, want, []intent.RemoteEndpoint{{IP: vip, MAC: "00-15-5D-00-00-01", Local: true}})
	if err := r.Start(ctx); err != nil {
		e.t.Fatal(err)
	}
	e.converge(r)
	return r
}

// The source VIP at an address another program's endpoint holds (Calico's
// Calico_ep, kube-proxy's source VIP endpoint) is served by that endpoint,
// as winkernel takes any endpoint at the source VIP: hnsproxy creates
// none, and neither replaces, adopts nor (at --cleanup) deletes it.
func TestSourceVIPHeldByAnotherProgramsEndpointIsLeftToIt(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	const vip = "10.244.1.2"
	calico := e.calicoEP(vip)
	want := e.overSourceVIP(vip)
	r := e.startedOver(want, vip)
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
	e.startedOver(want, vip)
	if _, err := Cleanup(ctx, e.hns, e.options()); err != nil {
		t.Fatal(err)
	}
	if !e.hasObject(calico) {
		t.Fatal("--cleanup deleted Calico_ep")
	}
}

// Calico_ep made after hnsproxy's own source VIP endpoint (hnsproxy started
// first, as on a node whose endpoints a reboot dropped; Calico's CNI makes
// Calico_ep again at a pod's ADD when it finds none by name) shares its
// address. It is no pod's, so drift repair and a restart leave it, unlike a
// foreign remote endpoint on a pod's address (sharedaddress.go).
func TestCalicoEPMadeAfterOurSourceVIPEndpointIsKept(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	const vip = "10.244.1.2"
	want := e.overSourceVIP(vip)
	r := e.startedOver(want, vip)
	calico := e.calicoEP(vip)
	for range 2 {
		if err := r.Repair(ctx); err != nil {
			t.Fatal(err)
		}
		e.converge(r)
	}
	if !e.hasObject(calico) {
		t.Fatal("drift repair deleted Calico_ep, which shares the source VIP with hnsproxy's own endpoint")
	}
	e.startedOver(want, vip)
	if !e.hasObject(calico) {
		t.Fatal("a restart deleted Calico_ep")
	}
	e.assertRealized(want, vip)
}

// A local endpoint with the host's MAC at the source VIP (kube-proxy's
// newSourceVIP makes one so, and so does hnsproxy) is what hnsproxy would
// make there: adopted as before, so --cleanup deletes it.
func TestSourceVIPEndpointAsHNSProxyMakesItIsAdopted(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	const vip = "10.244.1.2"
	theirs := e.othersEndpoint("kube-proxy's source VIP endpoint", &hnslb.Endpoint{
		IpConfigurations: []hnslb.IPConfig{{IpAddress: vip}}, MacAddress: "00-15-5D-00-00-01",
	})
	e.startedOver(e.overSourceVIP(vip), vip)
	for _, ep := range e.snapshot().Endpoints {
		if ep.IP() == vip && ep.ID != theirs {
			t.Errorf("hnsproxy made endpoint %s beside the one it would make", ep.ID)
		}
	}
	if _, err := Cleanup(ctx, e.hns, e.options()); err != nil {
		t.Fatal(err)
	}
	if e.hasObject(theirs) {
		t.Error("the adopted source VIP endpoint is still there after --cleanup")
	}
}

// A kill between the declaration of hnsproxy's own source VIP endpoint
// (hnsproxy started before Calico made Calico_ep, as after a reboot) and
// its create's record leaves nothing that claims Calico_ep, made at that
// address since: a declaration claims remote endpoints only, so the
// source VIP's local endpoint is never declared (statefile.go).
func TestSourceVIPCreateDeclaresNothingCalicoEPCouldMeet(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2019)
	const vip = "10.244.1.2"
	r := e.reconciler()
	handOver(r, e.overSourceVIP(vip), []intent.RemoteEndpoint{{IP: vip, MAC: "00-15-5D-00-00-01", Local: true}})
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	r.declareCreates(nil, []string{vip}, nil) // the first Sync's declarations; then the kill
	calico := e.calicoEP(vip)
	if _, err := Cleanup(ctx, e.hns, e.options()); err != nil {
		t.Fatal(err)
	}
	if !e.hasObject(calico) {
		t.Fatal("--cleanup deleted Calico_ep, at the address of a source VIP create the state file declared")
	}
}

// Which endpoint serves the source VIP is said once, at -v=0, naming it:
// hnsproxy makes none there, and a pod's local endpoint at the address (a
// --source-vip that IPAM gave a pod) is a misconfiguration the operator is
// told of, since no endpoint serves the source VIP once that pod goes,
// until the next start.
func TestBorrowedSourceVIPIsLoggedNamingItsEndpoint(t *testing.T) {
	for _, pod := range []bool{false, true} {
		e, logs := loggingEnv(t, sim.ProfileWS2022)
		const vip = "10.244.1.2"
		var holder string
		if pod {
			holder = e.local(vip)
		} else {
			holder = e.calicoEP(vip)
		}
		e.startedOver(e.overSourceVIP(vip), vip)
		out := logs.GetBuffer().String()
		if n := strings.Count(out, "serves the overlay source VIP"); n != 1 || !strings.Contains(out, holder) {
			t.Errorf("pod %v: %d lines say which endpoint serves the source VIP, want 1 naming %s:\n%s", pod, n, holder, out)
		}
		if strings.Contains(out, "A pod's endpoint serves") != pod {
			t.Errorf("pod %v: a pod's endpoint at the source VIP told %v:\n%s", pod, !pod, out)
		}
	}
}
