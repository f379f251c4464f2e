package reconciler

import (
	"fmt"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// startedEnv is a reconciler started on HNS holding the given pods, with the
// counters reset after its first Sync.
func startedEnv(t *testing.T, pods ...string) (*env, *Reconciler) {
	t.Helper()
	e := newEnv(t, sim.ProfileWS2025)
	for _, ip := range pods {
		e.local(ip)
	}
	r := e.reconciler()
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	r.Sync(ctx)
	e.hns.ResetCounters()
	return e, r
}

// TestNewLocalPodIsFoundThroughItsNamespace: a pod that starts after Start is
// found by one namespace list and one get, never by listing the network's
// endpoints (thousands of remote ones on a big cluster).
func TestNewLocalPodIsFoundThroughItsNamespace(t *testing.T) {
	e, r := startedEnv(t, "10.244.1.10")
	e.local("10.244.1.20")
	e.hns.ResetCounters()

	want := lb("10.96.0.1", 80, loc("10.244.1.10"), loc("10.244.1.20"))
	upsert(r, want)
	if res := r.Sync(ctx); res.Created != 1 || res.Pending != 0 {
		t.Fatalf("sync %+v", res)
	}
	c := e.counters()
	if c.Count(sim.OpListEndpoints) != 0 || c.Count(sim.OpListNamespaces) != 1 || c.Count(sim.OpGetEndpoint) != 1 {
		t.Errorf("calls %v, want one namespace list and one endpoint get", c.Calls)
	}
	e.assertRealized([]intent.LB{want})
}

// TestLocalEndpointOutsideNamespacesIsFoundByListingTheNetwork: a runtime
// that does not attach endpoints to namespaces still gets its pods served.
func TestLocalEndpointOutsideNamespacesIsFoundByListingTheNetwork(t *testing.T) {
	e, r := startedEnv(t)
	e.localOutsideNamespace("10.244.1.30")
	e.hns.ResetCounters()
	want := lb("10.96.0.1", 80, loc("10.244.1.30"))
	upsert(r, want)
	if res := e.syncListed(r); res.Created != 1 || res.Pending != 0 {
		t.Fatalf("sync %+v", res)
	}
	if c := e.counters(); c.Count(sim.OpListEndpoints) != 1 {
		t.Errorf("calls %v, want the network listed once (by the repair)", c.Calls)
	}
	e.assertRealized([]intent.LB{want})
}

// TestALocalEndpointALookupListingLeavesOutIsLookedForAgain: a new pod's
// endpoint, outside any namespace, that the lookup's listing leaves out
// (Faults.LeftOutOfListings) is looked for by the next listing, which the
// Sync asks for, up to silentListings of them; the load balancer gets the
// pod then. Before, one listing's silence left it waiting for the periodic
// drift repair (minutes), the load balancer without the pod meanwhile
// (found by TestRandomHistoriesConverge once histories drew listing
// faults). A pod no listing shows (a host-network pod's address) still
// stops asking after silentListings.
func TestALocalEndpointALookupListingLeavesOutIsLookedForAgain(t *testing.T) {
	e, r := startedEnv(t, "10.244.1.10")
	e.localOutsideNamespace("10.244.1.30")
	want := lb("10.96.0.1", 80, loc("10.244.1.10"), loc("10.244.1.30"))
	upsert(r, want)
	e.hns.SetFaults(sim.Faults{LeftOutOfListings: 1, LeftOutInARow: 1})
	if res := e.syncListed(r); res.Pending != 1 || !res.ListingWanted {
		t.Fatalf("sync after a lookup whose listing left the pod out: %+v, want it pending and asking for another listing", res)
	}
	if res := e.answer(r, r.Sync(ctx)); res.Pending != 0 {
		t.Fatalf("sync after the next lookup: %+v, want nothing pending", res)
	}
	e.hns.SetFaults(sim.Faults{})
	e.assertRealized([]intent.LB{want})

	hostNetwork := lb("10.96.0.2", 80, loc("10.244.1.99")) // no endpoint anywhere
	upsert(r, hostNetwork)
	e.answerAll(r, r.Sync(ctx))
}

// TestNamespaceListFailureFallsBackToTheNetworkList: an HNS error on the
// cheap path costs a list, not a pod.
func TestNamespaceListFailureFallsBackToTheNetworkList(t *testing.T) {
	e, r := startedEnv(t)
	e.local("10.244.1.40")
	e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpListNamespaces: 1}})
	want := lb("10.96.0.1", 80, loc("10.244.1.40"))
	upsert(r, want)
	if res := e.syncListed(r); res.Created != 1 || res.Pending != 0 {
		t.Fatalf("sync %+v", res)
	}
	e.hns.SetFaults(sim.Faults{})
	e.assertRealized([]intent.LB{want})
}

// TestNamespaceEndpointsOfOtherNetworksAreNotIndexed: a namespace may hold an
// endpoint of another network (a second NIC); it never backs our LBs.
func TestNamespaceEndpointsOfOtherNetworksAreNotIndexed(t *testing.T) {
	e, r := startedEnv(t)
	other, err := e.hns.CreateNetwork(ctx, &hnslb.Network{Name: "other", Type: hnslb.NetworkTypeL2Bridge,
		Ipams: []hnslb.Ipam{{Type: "Static", Subnets: []hnslb.Subnet{{IpAddressPrefix: "10.250.0.0/24"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := e.hns.CreateEndpoint(ctx, other.ID, &hnslb.Endpoint{IpConfigurations: []hnslb.IPConfig{{IpAddress: "10.250.0.5"}}})
	if err != nil {
		t.Fatal(err)
	}
	ns, err := e.hns.CreateNamespace(ctx, &hnslb.Namespace{Type: hnslb.NamespaceTypeHost})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.hns.AddNamespaceEndpoint(ctx, ns.ID, ep.ID); err != nil {
		t.Fatal(err)
	}
	upsert(r, lb("10.96.0.1", 80, loc("10.250.0.5")))
	if res := r.Sync(ctx); res.Pending != 1 || res.Created != 0 {
		t.Errorf("sync %+v, want the load balancer pending on its unknown backend", res)
	}
}

// TestPodRecreatedWithTheSameIPIsServedByItsNewEndpoint: a pod deleted and
// started again with the same IP gets a new HNS endpoint; load balancers
// must use the new one, not the ID the index remembers.
func TestPodRecreatedWithTheSameIPIsServedByItsNewEndpoint(t *testing.T) {
	e, r := startedEnv(t, "10.244.1.10", "10.244.1.11")
	want := lb("10.96.0.1", 80, loc("10.244.1.10"), loc("10.244.1.11"))
	upsert(r, want)
	r.Sync(ctx)
	e.assertRealized([]intent.LB{want})

	// The pod goes: out of the EndpointSlice, its endpoint deleted by CNI DEL.
	upsert(r, lb("10.96.0.1", 80, loc("10.244.1.11")))
	r.Sync(ctx)
	if err := e.hns.DeleteEndpoint(ctx, e.locals["10.244.1.10"]); err != nil {
		t.Fatal(err)
	}
	// It comes back with the same IP and a new endpoint.
	e.local("10.244.1.10")
	upsert(r, want)
	e.converge(r)
	e.assertRealized([]intent.LB{want})
}

// TestNewLocalPodIsFoundThroughItsNamespaceInAnyGUIDCase: an HNS that
// answers GUIDs in upper case (the network reference among them) still
// has a new pod found through its namespace, with one get: before, the
// endpoint read as on another network, the pod waited for a listing of
// the network, and the reconciler suspected its network replaced.
func TestNewLocalPodIsFoundThroughItsNamespaceInAnyGUIDCase(t *testing.T) {
	echo, err := sim.ParseEcho(sim.EchoUpperGUIDs)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvSim(t, sim.ProfileWS2025, sim.Options{Echo: echo})
	e.local("10.244.1.10")
	r := e.reconciler()
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	r.Sync(ctx)
	e.local("10.244.1.20")
	e.hns.ResetCounters()

	want := lb("10.96.0.1", 80, loc("10.244.1.10"), loc("10.244.1.20"))
	upsert(r, want)
	if res := r.Sync(ctx); res.Created != 1 || res.Pending != 0 || res.ListingWanted {
		t.Fatalf("sync %+v, want the load balancer created over both pods", res)
	}
	c := e.counters()
	if c.Lists() != 1 || c.Count(sim.OpListNamespaces) != 1 || c.Count(sim.OpGetEndpoint) != 1 {
		t.Errorf("calls %v, want one namespace list and one endpoint get", c.Calls)
	}
	if r.client.suspect.set.Load() {
		t.Error("the network is suspected replaced")
	}
	e.assertRealized([]intent.LB{want})
}

// TestNewLocalPodIsFoundInANamespaceOfAnyType: a pod's namespace need not
// be of type Host. containerd creates it with no type (HNS's default), and
// hcn names HostDefault, Guest and GuestDefault too; a Hyper-V isolated
// pod's endpoint stays in the host namespace the CNI attached it to while
// its utility VM runs. Each is found by the one namespace list.
func TestNewLocalPodIsFoundInANamespaceOfAnyType(t *testing.T) {
	e, r := startedEnv(t)
	types := []hnslb.NamespaceType{"", hnslb.NamespaceTypeHost, hnslb.NamespaceTypeHostDefault, hnslb.NamespaceTypeGuest, hnslb.NamespaceTypeGuestDefault}
	var backends []intent.Backend
	for i, typ := range types {
		ip := fmt.Sprintf("10.244.1.%d", 50+i)
		e.localIn(ip, typ)
		backends = append(backends, loc(ip))
	}
	e.hns.ResetCounters()
	want := lb("10.96.0.1", 80, backends...)
	upsert(r, want)
	if res := r.Sync(ctx); res.Created != 1 || res.Pending != 0 || res.ListingWanted {
		t.Fatalf("sync %+v, want the load balancer created over a pod in each namespace type", res)
	}
	if c := e.counters(); c.Count(sim.OpListEndpoints) != 0 || c.Count(sim.OpListNamespaces) != 1 {
		t.Errorf("calls %v, want one namespace list and no network listing", c.Calls)
	}
	e.assertRealized([]intent.LB{want})
}
