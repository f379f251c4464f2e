package reconciler

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// readState is the state as a restart reads it: the snapshot with its
// journal replayed, IDs sorted.
func readState(t testing.TB, path string) stateFile {
	t.Helper()
	s, err := loadState(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.journalStopped != nil {
		t.Fatalf("state journal ended early: %v", s.journalStopped)
	}
	slices.Sort(s.LoadBalancers)
	slices.Sort(s.RemoteEndpoints)
	if s.LoadBalancers == nil {
		s.LoadBalancers = []string{}
	}
	if s.RemoteEndpoints == nil {
		s.RemoteEndpoints = []string{}
	}
	return *s
}

func TestStateFileRecordsOwnedIDs(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	e.started(e.threeServices()...)
	e.assertStateFileMatchesHNS()
	fi, err := os.Stat(e.stateFile)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("state file mode %v, want 0600", fi.Mode().Perm())
	}
}

// assertStateFileMatchesHNS checks that the state file lists exactly the
// load balancers and remote endpoints HNS holds (all of them ours).
func (e *env) assertStateFileMatchesHNS() {
	t := e.t
	t.Helper()
	s := readState(t, e.stateFile)
	var lbIDs, epIDs []string
	snap := e.snapshot()
	for _, l := range snap.LoadBalancers {
		lbIDs = append(lbIDs, l.ID)
	}
	for _, ep := range snap.Endpoints {
		if ep.IsRemote() {
			epIDs = append(epIDs, ep.ID)
		}
	}
	slices.Sort(lbIDs)
	slices.Sort(epIDs)
	if s.Version != stateFileVersion || !slices.Equal(s.LoadBalancers, lbIDs) || !slices.Equal(s.RemoteEndpoints, epIDs) {
		t.Errorf("state file %+v, want load balancers %v and remote endpoints %v", s, lbIDs, epIDs)
	}
}

func TestRestartAdoptsWithoutWrites(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2019, sim.ProfileWS2025} {
		t.Run(profile, func(t *testing.T) {
			e := newEnv(t, profile)
			want := e.threeServices()
			e.started(want...)
			before := readState(t, e.stateFile)

			// Desired state before Start.
			r, res := e.start(e.hns, want...)
			if c := e.counters(); c.Writes() != 0 || c.Lists() != 2 || res.Created+res.Updated+res.Deleted+res.Pending != 0 {
				t.Errorf("restart: %v %+v", c.Calls, res)
			}
			for _, s := range r.Statuses() {
				if s.State != StateDone || s.RealizedID == "" {
					t.Errorf("status after adoption %+v", s)
				}
			}
			if after := readState(t, e.stateFile); !slices.Equal(after.LoadBalancers, before.LoadBalancers) {
				t.Errorf("state changed: %v → %v", before, after)
			}

			// Desired state after Start (but before the first Sync).
			e.hns.ResetCounters()
			r = e.reconciler()
			if err := r.Start(ctx); err != nil {
				t.Fatal(err)
			}
			for _, d := range want {
				upsert(r, d)
			}
			r.Sync(ctx)
			if c := e.counters(); c.Writes() != 0 {
				t.Errorf("restart with late desired state: %v", c.Calls)
			}
			e.assertRealized(want)
		})
	}
}

func TestRestartDeletesOwnStaleObjects(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	want := e.threeServices()
	e.started(want...)

	// After the restart want[2] (and its remote endpoint 10.244.3.31) is gone.
	_, res := e.start(e.hns, want[:2]...)
	c := e.counters()
	if c.Writes() != 2 || c.Count(sim.OpDeleteLoadBalancer) != 1 || c.Count(sim.OpDeleteEndpoint) != 1 || res.Deleted != 2 {
		t.Errorf("stale cleanup: %v %+v", c.Calls, res)
	}
	e.assertRealized(want[:2])
	if s := readState(t, e.stateFile); len(s.LoadBalancers) != 2 || len(s.RemoteEndpoints) != 2 {
		t.Errorf("state after cleanup %+v", s)
	}
}

// foreign creates objects another agent owns: a load balancer on another
// frontend and a remote endpoint hnsproxy does not want.
func (e *env) foreign() (lbID, epID string) {
	e.t.Helper()
	doc := buildRemoteEndpoint(e.netID, intent.RemoteEndpoint{IP: "10.244.9.9"})
	doc.Name = "" // kube-proxy names no remote endpoint; hnsproxy's name would make it ours
	ep, err := e.hns.CreateEndpoint(ctx, e.netID, doc)
	if err != nil {
		e.t.Fatal(err)
	}
	l, err := e.hns.CreateLoadBalancer(ctx, BuildLB(&intent.LB{
		Key: intent.LBKey{Family: intent.IPv4, VIP: "10.96.9.9", Protocol: hnslb.ProtocolTCP, Port: 9}, InternalPort: 9,
	}, []string{ep.ID}))
	if err != nil {
		e.t.Fatal(err)
	}
	return l.ID, ep.ID
}

func TestForeignObjectsLeftAlone(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2025)
	want := e.threeServices()
	lbID, epID := e.foreign()
	r := e.started(want...) // fails unless the first sync was clean
	if err := r.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	for _, d := range want {
		remove(r, d.Key)
	}
	e.converge(r)
	snap := e.snapshot()
	if len(snap.LoadBalancers) != 1 || snap.LoadBalancers[0].ID != lbID {
		t.Errorf("load balancers left %+v, want only the foreign %s", snap.LoadBalancers, lbID)
	}
	if got := e.remoteIPs(); !slices.Equal(got, []string{"10.244.9.9"}) {
		t.Errorf("remote endpoints %v, want only the foreign one", got)
	}
	_ = epID
}

func TestForeignBlockerAtStartIsDeleted(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2025)
	want := e.threeServices()
	// Someone else holds want[0]'s frontend with other backends.
	blocker, err := e.hns.CreateLoadBalancer(ctx, BuildLB(&want[0], []string{e.locals["10.244.1.11"]}))
	if err != nil {
		t.Fatal(err)
	}
	foreignID, _ := e.foreign()
	e.hns.ResetCounters()
	_, res := e.start(e.hns, want...)
	c := e.counters()
	if c.Count(sim.OpDeleteLoadBalancer) != 1 || c.Count(sim.OpCreateLoadBalancer) != 3 || res.Failed != 0 {
		t.Errorf("blocker: %v %+v", c.Calls, res)
	}
	for _, d := range want {
		if got := e.hnsLB(d.Key); got == nil || !slices.Equal(e.backendIPs(got), ipsOf(d.Backends)) {
			t.Errorf("%s not realized: %+v", d.Key, got)
		}
	}
	snap := e.snapshot()
	for _, l := range snap.LoadBalancers {
		if l.ID == blocker.ID {
			t.Error("blocker still there")
		}
	}
	if l := e.hnsLB(intent.LBKey{Family: intent.IPv4, VIP: "10.96.9.9", Protocol: hnslb.ProtocolTCP, Port: 9}); l == nil || l.ID != foreignID {
		t.Error("unrelated foreign load balancer touched")
	}
}

func TestForeignIdenticalLoadBalancerIsAdopted(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	e.local("10.244.1.10")
	a := lb("10.96.0.1", 80, loc("10.244.1.10"))
	if _, err := e.hns.CreateLoadBalancer(ctx, BuildLB(&a, []string{e.locals["10.244.1.10"]})); err != nil {
		t.Fatal(err)
	}
	e.hns.ResetCounters()
	r := e.started(a) // must be clean
	_ = r
	if c := e.counters(); c.Writes() != 0 {
		t.Errorf("identical foreign load balancer not adopted: %v", c.Calls)
	}
	if s := readState(t, e.stateFile); len(s.LoadBalancers) != 1 {
		t.Errorf("adopted load balancer not recorded: %+v", s)
	}
}

func TestBlockerAppearingAfterStart(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2019)
	want := e.threeServices()
	r := e.started(want[:2]...)

	// Another agent takes want[2]'s frontend after Start: the create
	// conflicts and waits for a listing (not made by the Sync), which finds
	// the blocker; it goes, the create succeeds.
	e.local("10.244.1.50")
	if _, err := e.hns.CreateLoadBalancer(ctx, BuildLB(&want[2], []string{e.locals["10.244.1.50"]})); err != nil {
		t.Fatal(err)
	}
	e.hns.ResetCounters()
	upsert(r, want[2])
	first := r.Sync(ctx)
	if first.Created != 1 || first.Failed != 0 || e.fullListings() != 0 { // the endpoint
		t.Errorf("first sync %+v, calls %v", first, e.counters().Calls)
	}
	res := e.answer(r, first)
	c := e.counters()
	if c.CountResult(sim.OpCreateLoadBalancer, "PortAlreadyExists") != 1 || c.Count(sim.OpListLoadBalancers) != 1 ||
		c.Count(sim.OpDeleteLoadBalancer) != 1 || c.CountResult(sim.OpCreateLoadBalancer, sim.ResultOK) != 1 {
		t.Errorf("late blocker: %v", c.Calls)
	}
	if res.Created != 1 || res.Deleted != 1 || res.Failed != 0 { // the load balancer; the blocker
		t.Errorf("result %+v", res)
	}
	e.assertRealized(want)

	// An identical one appearing is adopted instead.
	remove(r, want[2].Key)
	r.Sync(ctx)
	epID := ""
	for _, ep := range e.snapshot().Endpoints {
		if ep.IP() == "10.244.3.31" {
			epID = ep.ID
		}
	}
	if epID == "" {
		var err error
		ep, err := e.hns.CreateEndpoint(ctx, e.netID, buildRemoteEndpoint(e.netID, intent.EndpointOf(rem("10.244.3.31", "192.168.0.3"))))
		if err != nil {
			t.Fatal(err)
		}
		epID = ep.ID
	}
	if _, err := e.hns.CreateLoadBalancer(ctx, BuildLB(&want[2], []string{epID})); err != nil {
		t.Fatal(err)
	}
	e.hns.ResetCounters()
	upsert(r, want[2])
	e.converge(r)
	c = e.counters()
	// The remote endpoint exists already (AlreadyExists → adopted after a
	// listing of the endpoints), the load balancer conflicts and is adopted
	// as identical after a listing of the load balancers.
	if c.Writes() != 0 || c.Count(sim.OpListEndpoints) != 1 || c.Count(sim.OpListLoadBalancers) != 1 {
		t.Errorf("identical late load balancer: %v", c.Calls)
	}
	if st := statusOf(r, want[2].Key); st.State != StateDone {
		t.Errorf("status %+v", st)
	}
	e.assertRealized(want)
}

// TestCorruptStateFile: a state file that cannot be parsed owns nothing.
// Load balancers of unknown ownership are left alone; remote endpoints too,
// unless they bear hnsproxy's name (names.go), which a listing shows only
// where HNS keeps it.
func TestCorruptStateFile(t *testing.T) {
	for _, namesKept := range []bool{true, false} {
		e := newEnv(t, sim.ProfileWS2022)
		e.hns.SetEcho(sim.Echo{DropRemoteEndpointNames: !namesKept})
		want := e.threeServices()
		e.started(want...)
		if err := os.WriteFile(e.stateFile, []byte("{not json"), 0o600); err != nil {
			t.Fatal(err)
		}
		// After the restart: want[0] unchanged (adopt), want[1]'s frontend wants
		// other backends (its old load balancer blocks it: deleted), want[2] is
		// no longer desired (unknown ownership: left alone).
		want[1] = lb("10.96.0.20", 80, loc("10.244.1.11"))
		r := e.reconciler()
		upsert(r, want[0])
		upsert(r, want[1])
		if err := r.Start(ctx); err != nil {
			t.Fatal(err)
		}
		res := r.Sync(ctx)
		c := e.counters()
		// Named, 10.244.3.30 and .31 are ours and no longer wanted.
		deleted, remote := 0, []string{"10.244.2.20", "10.244.3.30", "10.244.3.31"}
		if namesKept {
			deleted, remote = 2, remote[:1]
		}
		if c.Count(sim.OpDeleteLoadBalancer) != 1 || c.Count(sim.OpCreateLoadBalancer) != 1 || c.Count(sim.OpDeleteEndpoint) != deleted || res.Failed != 0 {
			t.Errorf("names kept %v: corrupt state: %v %+v", namesKept, c.Calls, res)
		}
		if e.hnsLB(want[2].Key) == nil {
			t.Error("load balancer of unknown ownership deleted")
		}
		if got := e.remoteIPs(); !slices.Equal(got, remote) {
			t.Errorf("names kept %v: remote endpoints %v, want %v: none may be deleted without ownership", namesKept, got, remote)
		}
		// The state file is valid again and lists only what we now own.
		s := readState(t, e.stateFile)
		if len(s.LoadBalancers) != 2 || len(s.RemoteEndpoints) != 1 {
			t.Errorf("rebuilt state %+v", s)
		}
	}
}

func TestRemoteEndpointAdoption(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2025)
	// Left over (or made by someone else): a remote endpoint with our IP.
	old, err := e.hns.CreateEndpoint(ctx, e.netID, buildRemoteEndpoint(e.netID, intent.EndpointOf(rem("10.244.2.20", "192.168.0.2"))))
	if err != nil {
		t.Fatal(err)
	}
	// One with the right IP but an outdated provider address.
	if _, err := e.hns.CreateEndpoint(ctx, e.netID, buildRemoteEndpoint(e.netID, intent.EndpointOf(rem("10.244.3.30", "192.168.0.99")))); err != nil {
		t.Fatal(err)
	}
	e.hns.ResetCounters()
	a := lb("10.96.0.1", 80, rem("10.244.2.20", "192.168.0.2"), rem("10.244.3.30", "192.168.0.3"))
	r := e.reconciler()
	upsert(r, a)
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if res := r.Sync(ctx); res.Failed+res.Pending != 0 {
		t.Fatalf("result %+v", res)
	}
	snap := e.snapshot()
	c := e.counters()
	// Adopted as is: 10.244.2.20. Replaced: 10.244.3.30 (delete + create).
	if c.Count(sim.OpCreateEndpoint) != 1 || c.Count(sim.OpDeleteEndpoint) != 1 || c.Count(sim.OpCreateLoadBalancer) != 1 {
		t.Errorf("adoption: %v", c.Calls)
	}
	for _, ep := range snap.Endpoints {
		if ep.IP() == "10.244.3.30" && ep.ProviderAddress() != "192.168.0.3" {
			t.Errorf("outdated remote endpoint kept: %+v", ep)
		}
	}
	if !slices.Contains(e.hnsLB(a.Key).HostComputeEndpoints, old.ID) {
		t.Error("adopted remote endpoint not used")
	}
	e.assertRealized([]intent.LB{a})
}

// TestAnIdenticalRemoteEndpointBesideALocalOneOnItsAddressIsAdopted: where
// HNS lets a local and a remote endpoint share an address (Windows Server
// 2022), the listing that answers a remote endpoint's refused create may
// show both, the local one first: the remote one is what the create met,
// and identical, it is adopted.
func TestAnIdenticalRemoteEndpointBesideALocalOneOnItsAddressIsAdopted(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	r := e.started(e.threeServices()...)
	const ip = "10.244.2.40"
	e.localOutsideNamespace(ip)
	want := rem(ip, "192.168.0.2")
	theirs, err := e.hns.CreateEndpoint(ctx, e.netID, buildRemoteEndpoint(e.netID, intent.EndpointOf(want)))
	if err != nil {
		t.Fatal(err)
	}
	a := lb("10.96.0.40", 80, want)
	upsert(r, a)
	if res := e.syncListed(r); res.Failed+res.Pending != 0 {
		t.Fatalf("result %+v", res)
	}
	if !slices.Contains(e.hnsLB(a.Key).HostComputeEndpoints, theirs.ID) {
		t.Errorf("the identical remote endpoint was not adopted: %+v", e.hnsLB(a.Key))
	}
}

func TestRemoteEndpointChangesProviderAddress(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2025)
	want := e.threeServices()
	r := e.started(want...)
	// Pod 10.244.2.20 now lives on another node (IP reuse): both users follow,
	// rewritten in place without it and again with the new endpoint.
	want[0] = lb("10.96.0.10", 53, loc("10.244.1.10"), rem("10.244.2.20", "192.168.0.7"))
	want[1] = lb("10.96.0.20", 80, loc("10.244.1.11"), rem("10.244.2.20", "192.168.0.7"), rem("10.244.3.30", "192.168.0.3"))
	upsert(r, want[0])
	upsert(r, want[1])
	res := r.Sync(ctx)
	if res.Failed+res.Pending != 0 {
		t.Fatalf("result %+v", res)
	}
	e.assertRealized(want)
	for _, ep := range e.snapshot().Endpoints {
		if ep.IP() == "10.244.2.20" && ep.ProviderAddress() != "192.168.0.7" {
			t.Errorf("provider address not updated: %+v", ep)
		}
	}
	c := e.counters()
	if c.Count(sim.OpDeleteEndpoint) != 1 || c.Count(sim.OpCreateEndpoint) != 1 || c.Count(sim.OpUpdateLoadBalancer) != 4 || c.Writes() != 6 {
		t.Errorf("replacement: %v", c.Calls)
	}
}

func TestExtraEndpoints(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	want := e.threeServices()
	r := e.started(want...)
	sourceVIP := intent.RemoteEndpoint{IP: "10.244.1.2", MAC: "00-11-22-33-44-55", ProviderAddress: "192.168.0.1"}
	shared := intent.RemoteEndpoint{IP: "10.244.3.31", ProviderAddress: "192.168.0.3"}
	extras := []intent.RemoteEndpoint{sourceVIP, shared}
	handOver(r, nil, extras)
	res := r.Sync(ctx)
	if c := e.counters(); c.Writes() != 1 || res.Created != 1 {
		t.Errorf("extras: %v %+v", c.Calls, res)
	}
	e.assertRealized(want, sourceVIP.IP)
	for _, ep := range e.snapshot().Endpoints {
		if ep.IP() == sourceVIP.IP && !sameMAC(ep.MacAddress, sourceVIP.MAC) {
			t.Errorf("extra endpoint MAC %s", ep.MacAddress)
		}
	}
	// The extra keeps a remote endpoint alive after its last load balancer goes.
	r.Delete(want[2].Key)
	handOver(r, nil, extras)
	r.Sync(ctx)
	e.assertRealized(want[:2], sourceVIP.IP, shared.IP)
	found := false
	for _, s := range r.EndpointStatuses() {
		if s.Endpoint.IP == shared.IP {
			found = s.Endpoint == shared && s.Desired && s.State == StateDone && s.RealizedID != ""
		}
	}
	if !found {
		t.Errorf("endpoint statuses %+v", r.EndpointStatuses())
	}
	handOver(r, nil, nil)
	r.Sync(ctx)
	e.assertRealized(want[:2])
}

func TestRestartModifiesOwnLoadBalancerInPlace(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2025)
	want := e.threeServices()
	e.started(want...)
	oldID := e.hnsLB(want[2].Key).ID
	// After the restart want[2] uses another remote pod; 10.244.3.31 is stale
	// but the update that stops using it fails at first.
	want[2] = lb("10.96.0.30", 443, rem("10.244.3.32", "192.168.0.3"))
	e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpUpdateLoadBalancer: 1}})
	r, res := e.start(e.hns, want...)
	if res.Failed != 1 || e.counters().Count(sim.OpDeleteEndpoint) != 0 || e.counters().Count(sim.OpDeleteLoadBalancer) != 0 {
		t.Fatalf("restart with failing modify: %+v %v", res, e.counters().Calls)
	}
	e.hns.SetFaults(sim.Faults{})
	e.converge(r)
	e.assertRealized(want)
	if got := e.hnsLB(want[2].Key).ID; got != oldID {
		t.Errorf("own load balancer replaced (%s → %s), want modified in place", oldID, got)
	}
	e.assertStateFileMatchesHNS()
}

func TestOddLoadBalancersInHNS(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	want := e.threeServices()
	// HNS has been seen listing load balancers without port mappings
	// (kubernetes/kubernetes#141488): one foreign, one in our state file.
	foreign, err := e.hns.PutLoadBalancerOutOfBand(hnslb.LoadBalancer{FrontendVIPs: []string{"10.96.0.10"}})
	if err != nil {
		t.Fatal(err)
	}
	ours, err := e.hns.PutLoadBalancerOutOfBand(hnslb.LoadBalancer{FrontendVIPs: []string{"10.96.0.20"}})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(stateFile{Version: stateFileVersion, LoadBalancers: []string{ours.ID}})
	if err := os.WriteFile(e.stateFile, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	r := e.started(want...)
	if err := r.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	r.Sync(ctx)
	var ids []string
	for _, l := range e.snapshot().LoadBalancers {
		ids = append(ids, l.ID)
	}
	if !slices.Contains(ids, foreign.ID) || slices.Contains(ids, ours.ID) || len(ids) != 4 {
		t.Errorf("load balancers %v: want ours (%s) gone, the foreign one (%s) kept, and 3 desired", ids, ours.ID, foreign.ID)
	}
}

func TestLocalExtraEndpointIsLocalAndAdoptedAfterRestart(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	want := e.threeServices()
	r := e.started(want...)
	sourceVIP := intent.RemoteEndpoint{IP: "10.244.1.250", MAC: "00-15-5D-00-00-01", ProviderAddress: "192.168.0.1", Local: true}
	handOver(r, nil, []intent.RemoteEndpoint{sourceVIP})
	if res := r.Sync(ctx); res.Created != 1 || res.Failed != 0 {
		t.Fatalf("creating the source-VIP endpoint: %+v", res)
	}
	var got *hnslb.Endpoint
	for _, ep := range e.snapshot().Endpoints {
		if ep.IP() == sourceVIP.IP {
			got = &ep
		}
	}
	if got == nil || got.IsRemote() || got.ProviderAddress() != "" {
		t.Fatalf("source-VIP endpoint = %+v, want a local endpoint without a provider address", got)
	}

	// A restart finds it among local endpoints and adopts it: no writes.
	e.hns.ResetCounters()
	r2 := e.reconciler()
	handOver(r2, want, []intent.RemoteEndpoint{sourceVIP})
	if err := r2.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if res := r2.Sync(ctx); res.Created+res.Deleted+res.Updated+res.Failed != 0 {
		t.Errorf("restart touched HNS: %+v", res)
	}
	if w := e.counters().Writes(); w != 0 {
		t.Errorf("restart made %d writes: %v", w, e.counters().Calls)
	}

	// No longer wanted: it goes, being ours.
	handOver(r2, nil, nil)
	r2.Sync(ctx)
	for _, ep := range e.snapshot().Endpoints {
		if ep.IP() == sourceVIP.IP {
			t.Errorf("source-VIP endpoint left behind: %+v", ep)
		}
	}
}

// A load balancer deleted with its Service leaves no baseline in the state
// file: kept in memory after the delete, it was written again by every
// snapshot, so the state file carried a baseline for each load balancer
// the node ever deleted and grew with every Service's churn.
func TestADeletedLoadBalancerLeavesNoBaselineInTheStateFile(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	want := e.threeServices()
	r := e.started(want...)
	gone := e.hnsLB(want[2].Key).ID
	remove(r, want[2].Key)
	e.converge(r)
	r.mu.Lock()
	r.snapshotDue = true // as a compaction of the journal does, sooner or later
	r.mu.Unlock()
	r.Sync(ctx)
	s := readState(t, e.stateFile)
	if _, ok := s.LoadBalancerBaselines[gone]; ok || len(s.LoadBalancerBaselines) != 2 {
		t.Errorf("state file holds %d baselines, %s's among them: %v; want those of the 2 load balancers left only", len(s.LoadBalancerBaselines), gone, ok)
	}
}
