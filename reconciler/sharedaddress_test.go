package reconciler

import (
	"net/netip"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// kubeProxyRemote creates a remote endpoint at ip as kube-proxy's winkernel
// makes one on l2bridge (no name, the MAC it conjures from the address, no
// provider address), and returns its ID.
func (e *env) kubeProxyRemote(ip string) string {
	e.t.Helper()
	return e.othersEndpoint("kube-proxy's remote endpoint", &hnslb.Endpoint{
		IpConfigurations: []hnslb.IPConfig{{IpAddress: ip}},
		MacAddress:       intent.ConjureMAC(netip.MustParseAddr(ip)),
		Flags:            hnslb.EndpointFlagsRemoteEndpoint,
	})
}

// othersEndpoint creates doc, another program's endpoint (what names it),
// on the network and returns its ID.
func (e *env) othersEndpoint(what string, doc *hnslb.Endpoint) string {
	e.t.Helper()
	got, err := e.hns.CreateEndpoint(ctx, e.netID, doc)
	if err != nil {
		e.t.Fatalf("create %s at %s: %v", what, doc.IP(), err)
	}
	return got.ID
}

func (e *env) hasEP(id string) bool {
	_, err := e.hns.GetEndpointByID(ctx, id)
	return err == nil
}

// TestForeignRemoteEndpointOnALocalAddressIsDeleted: on Windows Server 2019
// and 2022 a remote endpoint and a local one can share an address, and
// traffic for the pod then goes to the node the remote endpoint names
// (kubernetes/kubernetes#138000; winkernel deletes every such remote
// endpoint at each sync, whoever made it). A node migrated from kube-proxy
// keeps kube-proxy's remote endpoints for pods gone before the switch:
// kube-proxy never deletes those it lost count of. Once a pod of this node
// has such an address (l2bridge with one subnet for the cluster, or an IP
// block moved to this node), hnsproxy deletes the leftover: at the first
// Sync for a pod there at Start, after a Repair for one that came later.
// A leftover on an address no local endpoint holds stays, as before.
func TestForeignRemoteEndpointOnALocalAddressIsDeleted(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	atStart := e.kubeProxyRemote("10.244.1.70")
	e.local("10.244.1.70")
	later := e.kubeProxyRemote("10.244.1.71")
	elsewhere := e.kubeProxyRemote("10.244.1.80")
	svc := lb("10.96.0.10", 53, loc("10.244.1.70"))

	r, res := e.start(e.hns, svc)
	if res.Failed != 0 || e.hasEP(atStart) {
		t.Fatalf("first sync: %+v; kube-proxy's remote endpoint on the local pod's address present %v", res, e.hasEP(atStart))
	}
	if !e.hasEP(later) || !e.hasEP(elsewhere) {
		t.Fatal("a foreign remote endpoint on an address no local endpoint holds was deleted")
	}

	e.local("10.244.1.71") // a pod of this node now has the address
	for i := 0; i < 2 && e.hasEP(later); i++ {
		if err := r.Repair(ctx); err != nil {
			t.Fatal(err)
		}
		e.converge(r)
	}
	if e.hasEP(later) {
		t.Error("kube-proxy's remote endpoint on a new pod's address survived two repairs")
	}
	if !e.hasEP(elsewhere) {
		t.Error("a foreign remote endpoint on an address no local endpoint holds was deleted")
	}
	e.assertRealized([]intent.LB{svc}, "10.244.1.80")
}

// TestOwnRemoteEndpointOnALocalAddressIsKept: the deletion on a shared
// address takes foreign remote endpoints only. hnsproxy's own remote
// endpoint, desired for a pod the EndpointSlice places on another node,
// stays while a local endpoint (one the CNI left behind) holds its address:
// deleting it would drop the backend and recreate it at the next repair,
// every repair. It goes when the desired state no longer wants it.
func TestOwnRemoteEndpointOnALocalAddressIsKept(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	svc := lb("10.96.0.10", 53, rem("10.244.2.5", "10.0.0.2"))
	r, res := e.start(e.hns, svc)
	if res.Failed != 0 {
		t.Fatalf("first sync: %+v", res)
	}
	ours := e.remoteID("10.244.2.5")
	e.local("10.244.2.5") // a pod's endpoint, since left behind, on the address
	for range 2 {
		if err := r.Repair(ctx); err != nil {
			t.Fatal(err)
		}
		e.converge(r)
	}
	if !e.hasEP(ours) {
		t.Fatalf("hnsproxy's own desired remote endpoint %s on a local endpoint's address was deleted", ours)
	}
	e.assertRealized([]intent.LB{svc})
}

// A remote endpoint that a Service's slice places on another node at the
// address of a pod of this node (a stale slice, an address reused) never
// takes the pod's endpoint for its own at a restart: the CNI's endpoints
// are never hnsproxy's. Adopted, the pod's endpoint was of the wrong kind
// and replaced, deleted under the pod.
func TestARestartNeverAdoptsAPodsEndpointForARemoteEndpointAtItsAddress(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2019, sim.ProfileWS2025} {
		t.Run(profile, func(t *testing.T) {
			e := newEnv(t, profile)
			pod := e.local("10.244.1.10")
			e.started()
			r := e.restart(lb("10.96.0.30", 443, rem("10.244.1.10", "192.168.0.3")))
			for range 3 {
				r.Sync(ctx)
				if err := r.Lookup(ctx); err != nil {
					t.Fatal(err)
				}
				e.clock.Step(DefaultRetryMax)
			}
			if !e.hasObject(pod) {
				t.Fatal("the pod's endpoint was deleted")
			}
			r.mu.Lock()
			owned := has(r.ownedEPs, pod)
			r.mu.Unlock()
			if owned {
				t.Error("the pod's endpoint was taken for hnsproxy's")
			}
		})
	}
}
