package reconciler

import (
	"fmt"
	"slices"
	"testing"

	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// unknownNode is a remote backend whose EndpointSlice endpoint names no node.
func unknownNode(ip, pa string) intent.Backend {
	return intent.Backend{IP: ip, ProviderAddress: pa, NodeUnknown: true}
}

// lbEndpointIDs are the endpoint IDs HNS's load balancer for key uses.
func (e *env) lbEndpointIDs(key intent.LBKey) []string {
	e.t.Helper()
	l := e.hnsLB(key)
	if l == nil {
		e.t.Fatalf("no load balancer for %s", key)
	}
	return l.HostComputeEndpoints
}

// servedByLocalPod starts a reconciler with one load balancer whose
// backend of unknown node is a pod of this node, and checks that the load
// balancer uses the pod's local endpoint.
func (e *env) servedByLocalPod(pa string) (pod string, svc intent.LB, r *Reconciler) {
	e.t.Helper()
	pod = e.local("10.244.1.9")
	svc = lb("10.96.0.10", 53, unknownNode("10.244.1.9", pa))
	r, _ = e.start(e.hns, svc)
	e.converge(r)
	if got := e.lbEndpointIDs(svc.Key); !slices.Equal(got, []string{pod}) {
		e.t.Fatalf("load balancer uses %v, want the pod's local endpoint %s", got, pod)
	}
	return pod, svc, r
}

// unknownNodeCases are the HNS versions and networks the tests of
// backends of unknown node run on: l2bridge (no provider address) and
// overlay (an address outside every remote subnet, as this node's own pod
// subnet is, gets the node IP as provider address).
func unknownNodeCases(t *testing.T, run func(t *testing.T, e *env, pa string)) {
	for _, profile := range []string{sim.ProfileWS2022, sim.ProfileWS2025} {
		for _, pa := range []string{"", "10.0.0.1"} {
			name := profile + "/l2bridge"
			if pa != "" {
				name = profile + "/overlay"
			}
			t.Run(name, func(t *testing.T) { run(t, newEnv(t, profile), pa) })
		}
	}
}

// TestBackendOfUnknownNodeUsesThePodsLocalEndpoint: an EndpointSlice
// endpoint without nodeName whose address is a pod of this node is served
// by the pod's local endpoint, as winkernel serves it (it reuses the HNS
// endpoint it finds at the address before it creates a remote one). No
// remote endpoint is made beside the pod's: on Windows Server 2019 and 2022
// it would send the pod's traffic to another node
// (kubernetes/kubernetes#138000); Windows Server 2025 refuses it.
func TestBackendOfUnknownNodeUsesThePodsLocalEndpoint(t *testing.T) {
	unknownNodeCases(t, func(t *testing.T, e *env, pa string) {
		pod, svc, r := e.servedByLocalPod(pa)
		for _, s := range r.EndpointStatuses() {
			if s.Endpoint.IP == "10.244.1.9" && (s.Desired || s.ShadowedBy != pod) {
				t.Errorf("status %+v, want not desired, shadowed by %s", s, pod)
			}
		}
		if c := r.ObjectCounts().RemoteEndpoints; c != (KindCounts{}) {
			t.Errorf("remote endpoint counts %+v, want none desired or realized", c)
		}
		// A pod that starts after Start, in a Service that comes after.
		later := e.local("10.244.1.10")
		svc2 := lb("10.96.0.11", 53, unknownNode("10.244.1.10", pa))
		upsert(r, svc, svc2)
		e.converge(r)
		if got := e.lbEndpointIDs(svc2.Key); !slices.Equal(got, []string{later}) {
			t.Errorf("load balancer uses %v, want the later pod's local endpoint %s", got, later)
		}
		if got := e.remoteIPs(); len(got) != 0 {
			t.Errorf("remote endpoints %v made beside the pods' local endpoints", got)
		}
		for _, s := range r.Statuses() {
			if s.State != StateDone {
				t.Errorf("%s: %s (%s, missing %v)", s.Key, s.State, s.LastError, s.MissingBackends)
			}
		}
	})
}

// TestBackendOfUnknownNodeFollowsThePod: a backend of unknown node that no
// local endpoint holds gets a remote endpoint; once a pod of this node holds
// the address (its slice still names no node), a repair's listing moves the
// load balancer to the pod's local endpoint and deletes the remote one; once
// the pod is gone while the slice still lists the address, the remote
// endpoint comes back.
func TestBackendOfUnknownNodeFollowsThePod(t *testing.T) {
	for _, pa := range []string{"", "10.0.0.1"} {
		t.Run(fmt.Sprintf("pa=%q", pa), func(t *testing.T) {
			e := newEnv(t, sim.ProfileWS2022) // WS2025 refuses the pod's endpoint beside a remote one
			svc := lb("10.96.0.10", 53, unknownNode("10.244.1.9", pa))
			r, res := e.start(e.hns, svc)
			if res.Failed != 0 {
				t.Fatalf("first sync: %+v", res)
			}
			e.assertRealized([]intent.LB{svc})
			remote := e.remoteID("10.244.1.9")

			pod := e.local("10.244.1.9")
			if err := r.Repair(ctx); err != nil {
				t.Fatal(err)
			}
			e.converge(r)
			if got := e.lbEndpointIDs(svc.Key); !slices.Equal(got, []string{pod}) {
				t.Errorf("after the pod came: load balancer uses %v, want the pod's local endpoint %s", got, pod)
			}
			if e.hasEP(remote) {
				t.Errorf("after the pod came: the remote endpoint %s beside it was kept", remote)
			}

			if err := e.hns.DeleteEndpoint(ctx, pod); err != nil { // the pod is deleted
				t.Fatal(err)
			}
			if err := r.Repair(ctx); err != nil {
				t.Fatal(err)
			}
			e.converge(r)
			e.assertRealized([]intent.LB{svc})
		})
	}
}

// TestBackendOfUnknownNodeWhosePodWentGetsARemoteEndpoint: the pod that
// served a backend of unknown node is deleted while the slice still lists
// its address: the next listing finds its endpoint gone, and the load
// balancer moves to a remote endpoint, as winkernel, which finds nothing at
// the address, creates one.
func TestBackendOfUnknownNodeWhosePodWentGetsARemoteEndpoint(t *testing.T) {
	unknownNodeCases(t, func(t *testing.T, e *env, pa string) {
		pod, svc, r := e.servedByLocalPod(pa)
		if err := e.hns.DeleteEndpoint(ctx, pod); err != nil {
			t.Fatal(err)
		}
		if err := r.Repair(ctx); err != nil {
			t.Fatal(err)
		}
		e.converge(r)
		e.assertRealized([]intent.LB{svc})
	})
}

// TestBackendOfUnknownNodeWithoutLocalEndpointIsRemote: an address no
// local endpoint holds (another node's pod, an address outside the
// cluster) gets its remote endpoint at the first Sync, without waiting
// for a listing of the network.
func TestBackendOfUnknownNodeWithoutLocalEndpointIsRemote(t *testing.T) {
	unknownNodeCases(t, func(t *testing.T, e *env, pa string) {
		svc := lb("10.96.0.10", 53, unknownNode("10.244.2.9", pa))
		r, res := e.start(e.hns, svc)
		if res.Failed+res.Pending != 0 || res.ListingWanted {
			t.Fatalf("first sync: %+v", res)
		}
		e.assertRealized([]intent.LB{svc})
		_ = r
	})
}

// TestBackendOfUnknownNodeFollowsThePodWhereAnotherSlicePlacesIt: one
// Service's slice names no node for an address, another's places it on
// another node, so the remote endpoint is wanted outright and never
// shadowed. The nodeless Service's load balancer still resolves to the
// local endpoint the index holds there, as at a start with the pod
// present: a pod that comes later moves it to the pod's local endpoint at
// the next listing, and back to the remote endpoint once the pod is gone.
// Before, only a shadowable endpoint's load balancers were marked, so the
// nodeless one stayed where it was until something else changed it.
func TestBackendOfUnknownNodeFollowsThePodWhereAnotherSlicePlacesIt(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022) // WS2025 refuses the pod's endpoint beside a remote one
	nodeless := lb("10.96.0.10", 53, unknownNode("10.244.1.9", ""))
	placed := lb("10.96.0.11", 53, rem("10.244.1.9", ""))
	r := e.reconciler()
	r.UpsertEndpoint(intent.EndpointOf(rem("10.244.1.9", ""))) // wanted outright
	r.Upsert(nodeless)
	r.Upsert(placed)
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	e.converge(r)
	remote := e.remoteID("10.244.1.9")
	uses := func(when string, want string) {
		t.Helper()
		if got := e.lbEndpointIDs(nodeless.Key); !slices.Equal(got, []string{want}) {
			t.Errorf("%s: the nodeless Service's load balancer uses %v, want %s", when, got, want)
		}
		if got := e.lbEndpointIDs(placed.Key); !slices.Equal(got, []string{remote}) {
			t.Errorf("%s: the placed Service's load balancer uses %v, want the remote endpoint %s", when, got, remote)
		}
	}
	uses("no pod", remote)

	pod := e.local("10.244.1.9")
	if err := r.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	e.converge(r)
	uses("after the pod came", pod)

	if err := e.hns.DeleteEndpoint(ctx, pod); err != nil {
		t.Fatal(err)
	}
	if err := r.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	e.converge(r)
	uses("after the pod went", remote)
}

// TestBackendOfUnknownNodeWaitsForAListingWhereNamespacesCannotTell: a
// pod of this node that started after Start, in a Service whose slice names
// no node, while HNS refuses to list its namespaces (or to read one's
// endpoint). The namespaces cannot tell whether a pod holds the address,
// so its remote endpoint waits for a listing of the network, which finds
// the pod: no remote endpoint is made beside the pod's, where on Windows
// Server 2019 and 2022 it would take the pod's traffic to another node
// until the next drift repair. An address the listing does not show gets
// its remote endpoint then.
func TestBackendOfUnknownNodeWaitsForAListingWhereNamespacesCannotTell(t *testing.T) {
	for _, op := range []sim.Op{sim.OpListNamespaces, sim.OpGetEndpoint} {
		t.Run(string(op), func(t *testing.T) {
			unknownNodeCases(t, func(t *testing.T, e *env, pa string) {
				r := e.started()
				pod := e.local("10.244.1.9")
				svc := lb("10.96.0.10", 53, unknownNode("10.244.1.9", pa), unknownNode("10.244.2.9", pa))
				upsert(r, svc)
				e.refuse(op)
				res := r.Sync(ctx)
				if !res.ListingWanted {
					t.Errorf("%s refused: sync %+v, want the remote endpoints waiting for a listing", op, res)
				}
				if got := e.remoteIPs(); len(got) != 0 {
					t.Errorf("%s refused: remote endpoints %v made before a listing", op, got)
				}
				e.hns.SetFaults(sim.Faults{})
				e.converge(r)
				if got := e.remoteIPs(); !slices.Equal(got, []string{"10.244.2.9"}) {
					t.Errorf("%s refused, then a listing: remote endpoints %v, want only the other node's pod's", op, got)
				}
				if got := e.lbEndpointIDs(svc.Key); !slices.Contains(got, pod) {
					t.Errorf("load balancer uses %v, want the pod's local endpoint %s among them", got, pod)
				}
			})
		})
	}
}

// TestRestartDeletesOurRemoteEndpointThatAPodNowShadows: hnsproxy made a
// remote endpoint for a backend of unknown node while no pod held its
// address, then stopped; a pod of this node took the address meanwhile.
// The restart indexes the pod, so the endpoint is shadowed and not
// adopted: the load balancer moves to the pod's local endpoint, hnsproxy's
// remote endpoint is deleted, and the state file names only what HNS holds.
func TestRestartDeletesOurRemoteEndpointThatAPodNowShadows(t *testing.T) {
	for _, pa := range []string{"", "10.0.0.1"} { // WS2025 refuses the pod's endpoint beside a remote one
		e := newEnv(t, sim.ProfileWS2022)
		svc := lb("10.96.0.10", 53, unknownNode("10.244.1.9", pa))
		e.started(svc)
		remote := e.remoteID("10.244.1.9")
		pod := e.local("10.244.1.9") // while hnsproxy is down

		r, _ := e.start(e.hns, svc)
		e.converge(r)
		if got := e.lbEndpointIDs(svc.Key); !slices.Equal(got, []string{pod}) {
			t.Errorf("after the restart the load balancer uses %v, want the pod's local endpoint %s", got, pod)
		}
		if e.hasEP(remote) {
			t.Errorf("hnsproxy's remote endpoint %s beside the pod's survived the restart", remote)
		}
		e.assertStateFileMatchesHNS()
		if c := r.ObjectCounts().RemoteEndpoints; c != (KindCounts{}) {
			t.Errorf("remote endpoint counts %+v, want none desired or realized", c)
		}
	}
}

// TestShadowedRemoteEndpointWhoseDeleteFailsIsRetried: a pod of this node
// came to hold the address of hnsproxy's remote endpoint for a backend of
// unknown node; the repair's listing shadows the endpoint, the load
// balancer moves to the pod, and HNS refuses the endpoint's delete. The
// endpoint shows the failure (counted failed, not desired) and its retry
// deletes it; the state file then names only what HNS holds.
func TestShadowedRemoteEndpointWhoseDeleteFailsIsRetried(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	svc := lb("10.96.0.10", 53, unknownNode("10.244.1.9", ""))
	r := e.started(svc)
	remote := e.remoteID("10.244.1.9")
	pod := e.local("10.244.1.9")
	if err := r.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	e.refuse(sim.OpDeleteEndpoint)
	if res := r.Sync(ctx); res.Failed != 1 {
		t.Fatalf("sync with the delete refused: %+v, want the endpoint failed", res)
	}
	if c := r.ObjectCounts().RemoteEndpoints; c != (KindCounts{Failed: 1}) {
		t.Errorf("remote endpoint counts %+v while its delete fails, want one failed, none desired", c)
	}
	e.hns.SetFaults(sim.Faults{})
	e.converge(r)
	if e.hasEP(remote) {
		t.Errorf("the shadowed remote endpoint %s was kept", remote)
	}
	if got := e.lbEndpointIDs(svc.Key); !slices.Equal(got, []string{pod}) {
		t.Errorf("load balancer uses %v, want the pod's local endpoint %s", got, pod)
	}
	e.assertStateFileMatchesHNS()
	if c := r.ObjectCounts().RemoteEndpoints; c != (KindCounts{}) {
		t.Errorf("remote endpoint counts %+v, want none desired or realized", c)
	}
}
