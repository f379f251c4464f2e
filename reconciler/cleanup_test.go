package reconciler

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/internal/doctest"
	"github.com/hnsproxy/hnsproxy/sim"
)

// assertOnlyForeignLeft checks that HNS holds the foreign load balancer and
// remote endpoint, the CNI's local endpoints, and nothing of hnsproxy's.
func (e *env) assertOnlyForeignLeft(foreignLB, foreignEP string) {
	e.t.Helper()
	snap := e.snapshot()
	if len(snap.LoadBalancers) != 1 || snap.LoadBalancers[0].ID != foreignLB {
		e.t.Errorf("load balancers after cleanup %+v, want only the foreign %s", snap.LoadBalancers, foreignLB)
	}
	var left []string
	for _, ep := range snap.Endpoints {
		if ep.IsRemote() && ep.ID != foreignEP {
			left = append(left, ep.IP())
		}
	}
	if len(left) > 0 {
		e.t.Errorf("hnsproxy's remote endpoints %v survived cleanup", left)
	}
	for ip, id := range e.locals {
		if !slices.ContainsFunc(snap.Endpoints, func(ep hnslb.Endpoint) bool { return ep.ID == id }) {
			e.t.Errorf("cleanup deleted the CNI's endpoint %s (%s)", id, ip)
		}
	}
}

func TestCleanupDeletesOwnedObjectsOnly(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	foreignLB, foreignEP := e.foreign()
	e.started(e.threeServices()...)

	res, err := Cleanup(ctx, e.hns, e.options())
	if err != nil {
		t.Fatal(err)
	}
	if res.DeletedLoadBalancers != 3 || res.DeletedEndpoints != 3 || !res.StateRemoved {
		t.Errorf("cleanup result %+v, want 3 load balancers and 3 remote endpoints deleted, state removed", res)
	}
	e.assertOnlyForeignLeft(foreignLB, foreignEP)
	for _, f := range []string{e.stateFile, journalPath(e.stateFile)} {
		if _, err := os.Stat(f); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s after cleanup: %v, want it removed", f, err)
		}
	}

	// Nothing owned is left: a second cleanup deletes nothing and succeeds.
	e.hns.ResetCounters()
	res, err = Cleanup(ctx, e.hns, e.options())
	if err != nil || res.DeletedLoadBalancers+res.DeletedEndpoints != 0 || e.counters().Writes() != 0 {
		t.Errorf("second cleanup: %+v %v, %d writes; want nothing to do", res, err, e.counters().Writes())
	}
}

// A cleanup whose listing leaves out objects HNS holds (sim
// Faults.LeftOutOfListings) still deletes each it owns, by ID: it deleted
// only listed ones, then removed the state file, and what the listing left
// out stayed in HNS for good. An owned ID HNS no longer has answers "not
// found" and is not counted.
func TestCleanupDeletesWhatItsListingLeftOut(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	foreignLB, foreignEP := e.foreign()
	e.started(e.threeServices()...)

	e.hns.SetFaults(sim.Faults{LeftOutOfListings: 1})
	res, err := Cleanup(ctx, e.hns, e.options())
	if err != nil || res.DeletedLoadBalancers != 3 || res.DeletedEndpoints != 3 || !res.StateRemoved {
		t.Errorf("cleanup whose listings leave out everything: %+v, %v; want 3 load balancers and 3 remote endpoints deleted, state removed", res, err)
	}
	e.hns.SetFaults(sim.Faults{})
	e.assertOnlyForeignLeft(foreignLB, foreignEP)

	e2 := newEnv(t, sim.ProfileWS2022)
	e2.started(e2.threeServices()...)
	if err := e2.hns.RestartLosing(0, sim.RestartLosesLoadBalancers); err != nil {
		t.Fatal(err)
	}
	res, err = Cleanup(ctx, e2.hns, e2.options())
	if err != nil || res.DeletedLoadBalancers != 0 || res.DeletedEndpoints != 3 || !res.StateRemoved {
		t.Errorf("cleanup after HNS lost the load balancers: %+v, %v; want only the 3 remote endpoints counted, state removed", res, err)
	}
}

func TestCleanupFailureKeepsWhatIsLeftOwned(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	foreignLB, foreignEP := e.foreign()
	e.started(e.threeServices()...)

	e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpDeleteLoadBalancer: 1}})
	res, err := Cleanup(ctx, e.hns, e.options())
	// The load balancers are left, so are the 3 remote endpoints they use.
	if err == nil || len(res.Failed) != 6 || res.DeletedLoadBalancers+res.DeletedEndpoints != 0 || res.StateRemoved {
		t.Fatalf("cleanup with failing deletes: %+v %v; want an error naming 6 objects left, state kept", res, err)
	}
	e.assertStateFileMatchesHNSExcept(foreignLB, foreignEP)

	e.hns.SetFaults(sim.Faults{})
	if res, err := Cleanup(ctx, e.hns, e.options()); err != nil || !res.StateRemoved || res.DeletedLoadBalancers != 3 || res.DeletedEndpoints != 3 {
		t.Fatalf("cleanup again: %+v %v; want the rest deleted and the state removed", res, err)
	}
	e.assertOnlyForeignLeft(foreignLB, foreignEP)
}

// assertStateFileMatchesHNSExcept checks that the state file lists exactly
// the load balancers and remote endpoints HNS holds, but the foreign ones.
func (e *env) assertStateFileMatchesHNSExcept(foreignLB, foreignEP string) {
	e.t.Helper()
	var lbIDs, epIDs []string
	for _, l := range e.snapshot().LoadBalancers {
		if l.ID != foreignLB {
			lbIDs = append(lbIDs, l.ID)
		}
	}
	for _, ep := range e.snapshot().Endpoints {
		if ep.IsRemote() && ep.ID != foreignEP {
			epIDs = append(epIDs, ep.ID)
		}
	}
	e.assertStateFileOwns(lbIDs, epIDs)
}

// assertStateFileOwns checks that the state file owns exactly the load
// balancers lbIDs and the endpoints epIDs. GUIDs in any case are one ID:
// HNS may answer them in upper case.
func (e *env) assertStateFileOwns(lbIDs, epIDs []string) {
	e.t.Helper()
	s := readState(e.t, e.stateFile)
	lower := func(ids []string) []string {
		out := make([]string, len(ids))
		for i, id := range ids {
			out[i] = strings.ToLower(id)
		}
		slices.Sort(out)
		return out
	}
	if !slices.Equal(lower(s.LoadBalancers), lower(lbIDs)) || !slices.Equal(lower(s.RemoteEndpoints), lower(epIDs)) {
		e.t.Errorf("state file %+v, HNS holds load balancers %v and endpoints %v of ours", s, lbIDs, epIDs)
	}
}

// An object a crash left between its create and the state file write is
// claimed through the declared create, a remote endpoint by the name
// hnsproxy gives its own, and both are cleaned up with the rest, whatever
// case HNS answers GUIDs in (sim.Echo.UpperGUIDs: the claims are folded).
func TestCleanupClaimsInterruptedCreates(t *testing.T) {
	for _, echo := range []sim.Echo{{}, {UpperGUIDs: true}} {
		e := newEnv(t, sim.ProfileWS2022)
		foreignLB, foreignEP := e.foreign()
		localID := e.local("10.244.1.12")
		e.hns.SetEcho(echo)
		want := lb("10.96.0.40", 80, loc("10.244.1.12"))
		r := e.started()
		r.Upsert(want)
		r.mu.Lock()
		r.declareCreates(map[intent.LBKey]struct{}{want.Key: {}}, nil, nil)
		r.mu.Unlock()
		// The creates happen, their IDs never reach the state file.
		if _, err := e.hns.CreateLoadBalancer(ctx, BuildLB(&want, []string{localID})); err != nil {
			t.Fatal(err)
		}
		if _, err := e.hns.CreateEndpoint(ctx, e.netID, buildRemoteEndpoint(e.netID, intent.RemoteEndpoint{IP: "10.244.2.30"})); err != nil {
			t.Fatal(err)
		}

		res, err := Cleanup(ctx, e.hns, e.options())
		if err != nil || res.DeletedLoadBalancers != 1 || res.DeletedEndpoints != 1 {
			t.Fatalf("echo %+v: cleanup: %+v %v; want the interrupted create's load balancer and the named remote endpoint deleted", echo, res, err)
		}
		e.assertOnlyForeignLeft(foreignLB, foreignEP)
	}
}

func TestCleanupWithoutStateFileIsRefused(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	e.tweak = func(o *Options) { o.StateFile = "" }
	foreignLB, _ := e.foreign()
	if _, err := Cleanup(ctx, e.hns, e.options()); err == nil {
		t.Fatal("cleanup without a state file succeeded; it cannot know what is hnsproxy's")
	}
	if lbs := e.snapshot().LoadBalancers; len(lbs) != 1 || lbs[0].ID != foreignLB {
		t.Errorf("load balancers %+v, want the foreign one untouched", lbs)
	}
}

// TestCleanupConfirmsItsDeletes: HNS reports --cleanup's deletes done and
// keeps the objects (microsoft/Windows-Containers#631). Cleanup's second
// listing finds them: the error names them, the state file keeps them, and
// a run after HNS lets go deletes them and removes the file.
func TestCleanupConfirmsItsDeletes(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	foreignLB, foreignEP := e.foreign()
	e.started(e.threeServices()...)

	e.hns.SetFaults(sim.Faults{KeptOnDelete: 1})
	res, err := Cleanup(ctx, e.hns, e.options())
	if err == nil || res.StateRemoved || len(res.Failed) != 6 || res.DeletedLoadBalancers+res.DeletedEndpoints != 0 {
		t.Fatalf("cleanup with every delete kept: %+v, %v; want 6 failures, nothing counted deleted, the state kept", res, err)
	}
	if !strings.Contains(err.Error(), "still lists the object") {
		t.Errorf("error %q does not say HNS kept the objects", err)
	}
	if s, err := loadStateFrom(osFS{}, e.stateFile); err != nil || len(s.LoadBalancers) != 3 || len(s.RemoteEndpoints) != 3 {
		t.Errorf("state file after the kept deletes: %+v, %v; want the 3 load balancers and 3 remote endpoints", s, err)
	}

	e.hns.SetFaults(sim.Faults{})
	res, err = Cleanup(ctx, e.hns, e.options())
	if err != nil || !res.StateRemoved || res.DeletedLoadBalancers != 3 || res.DeletedEndpoints != 3 {
		t.Errorf("cleanup after HNS let go: %+v, %v", res, err)
	}
	e.assertOnlyForeignLeft(foreignLB, foreignEP)
}

// TestCleanupThatCannotConfirmKeepsTheStateFile: when the listing that
// would confirm the deletes fails, the state file stays for the next run.
func TestCleanupThatCannotConfirmKeepsTheStateFile(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	e.started(e.threeServices()...)
	c := &failSecondList{Client: e.hns}
	res, err := Cleanup(ctx, c, e.options())
	if err == nil || res.StateRemoved || !strings.Contains(err.Error(), "listing HNS to confirm it failed") {
		t.Fatalf("cleanup whose confirming listing fails: %+v, %v", res, err)
	}
	if _, err := os.Stat(e.stateFile); err != nil {
		t.Errorf("state file: %v, want it kept", err)
	}
}

// failSecondList fails every load balancer listing after the first.
type failSecondList struct {
	hnslb.Client
	lists int
}

func (f *failSecondList) ListLoadBalancers(ctx context.Context) ([]hnslb.LoadBalancer, error) {
	if f.lists++; f.lists > 1 {
		return nil, hnslb.NewError("ListLoadBalancers", hnslb.CodeRPCServerUnavailable, "(test)")
	}
	return f.Client.ListLoadBalancers(ctx)
}

// TestCleanupAfterTheGUIDCaseChanged: the state file recorded HNS's IDs in
// one case and HNS now answers the other (v2 lower, v1 upper); cleanup
// still deletes them, as Start still owns them.
func TestCleanupAfterTheGUIDCaseChanged(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	foreignLB, foreignEP := e.foreign()
	e.started(e.threeServices()...)
	e.hns.SetEcho(sim.Echo{UpperGUIDs: true})

	res, err := Cleanup(ctx, e.hns, e.options())
	if err != nil || res.DeletedLoadBalancers != 3 || res.DeletedEndpoints != 3 || !res.StateRemoved {
		t.Fatalf("cleanup: %+v %v; want 3 load balancers and 3 remote endpoints deleted, state removed", res, err)
	}
	e.assertOnlyForeignLeft(foreignLB, foreignEP)
}

// TestCleanupBesideKubeProxyTakesItsObjects: after a rollback to
// kube-proxy the state file cannot tell kube-proxy's objects from
// hnsproxy's. kube-proxy deleted every load balancer at its start and made
// its own, taking the endpoints it finds by IP (winkernel's syncProxyRules):
// hnsproxy's remote endpoints for its backends and, on overlay, the one on
// each cluster IP, which no load balancer names. A cluster IP's key stays
// declared in the state file (a standing declaration), so --cleanup claims
// kube-proxy's load balancer there as an interrupted create of its own, and
// deletes the cluster IP's endpoint. So the operator's guide must not send
// an operator to run --cleanup on a node where kube-proxy runs.
func TestCleanupBesideKubeProxyTakesItsObjects(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	lbs := e.threeServices()
	r := New(e.hns, e.options())
	handOver(r, lbs, []intent.RemoteEndpoint{{IP: "10.96.0.20", MAC: "00-15-5d-00-00-01", ProviderAddress: "192.168.0.1"}})
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	e.converge(r)
	vipID := e.remoteID("10.96.0.20")

	// kube-proxy starts: every load balancer goes, its own come.
	for _, l := range e.snapshot().LoadBalancers {
		if err := e.hns.DeleteLoadBalancer(ctx, l.ID); err != nil {
			t.Fatal(err)
		}
	}
	kp, err := e.hns.CreateLoadBalancer(ctx, BuildLB(&lbs[1], []string{e.locals["10.244.1.11"], e.remoteID("10.244.2.20")}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Cleanup(ctx, e.hns, e.options()); err != nil {
		t.Logf("cleanup: %v", err)
	}
	if e.hasObject(kp.ID) || e.hasObject(vipID) {
		t.Fatal("--cleanup left kube-proxy's objects alone: the guide's warning against it beside kube-proxy can go")
	}

	guide := doctest.Read(t, "docs/operators.md")
	for _, advice := range regexp.MustCompile("(?s)`hnsproxy --cleanup`, after kube-proxy has started|after kube-proxy has started[^.]*--cleanup").FindAllString(guide, -1) {
		t.Errorf("docs/operators.md advises %q; --cleanup deletes kube-proxy's load balancers on cluster IPs and node ports hnsproxy had, and its cluster IP endpoints", advice)
	}
	cleanup := doctest.Section(t, "docs/operators.md", "## Cleanup: uninstalling from a node")
	if !strings.Contains(cleanup, "TestCleanupBesideKubeProxyTakesItsObjects") {
		t.Error(`docs/operators.md's "Cleanup" section does not warn against --cleanup beside kube-proxy (naming TestCleanupBesideKubeProxyTakesItsObjects)`)
	}
}
