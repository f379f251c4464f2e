package reconciler

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"k8s.io/klog/v2/ktesting"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// kubernetes/kubernetes#141488: a failed create may leave HNS listing a
// load balancer without port mappings. Whatever code the create failed
// with, whether what it left holds its frontend unseen or not, on each
// profile: hnsproxy deletes it once a listing has looked (the lookup its
// retry asks for when the frontend is held, else the drift repair), the
// Service is programmed, and no other load balancer without port mappings
// is touched, another program's on the same frontend included.
func TestPartialCreateIsDeleted(t *testing.T) {
	codes := []hnslb.ErrorCode{hnslb.CodeInvalidParameter, hnslb.CodeInvalidPolicy, 0x80004005} // E_FAIL: not known, so uncertain
	for _, profile := range []string{sim.ProfileWS2019, sim.ProfileWS2022, sim.ProfileWS2025} {
		for _, holds := range []bool{false, true} {
			for _, code := range codes {
				t.Run(fmt.Sprintf("%s/holds-%v/0x%x", profile, holds, uint32(code)), func(t *testing.T) {
					e := newEnv(t, profile)
					pod := e.local("10.244.1.10")
					r := e.started()
					// Another program's, one on the frontend hnsproxy wants.
					var foreign []string
					for _, doc := range []hnslb.LoadBalancer{
						{FrontendVIPs: []string{"10.96.0.99"}, HostComputeEndpoints: []string{pod}},
						{FrontendVIPs: []string{"10.96.0.30"}},
					} {
						put, err := e.hns.PutLoadBalancerOutOfBand(doc)
						if err != nil {
							t.Fatal(err)
						}
						foreign = append(foreign, put.ID)
					}

					e.failCreatesLeavingPartials(code, holds)
					d := lb("10.96.0.30", 443, loc("10.244.1.10"))
					upsert(r, d)
					if res := r.Sync(ctx); res.Failed+res.Pending == 0 {
						t.Fatalf("the create did not fail: %+v", res)
					}
					e.hns.SetFaults(sim.Faults{})
					if e.hns.Counters().PartialCreates != 1 {
						t.Fatalf("%d partial load balancers left, want 1", e.hns.Counters().PartialCreates)
					}
					e.converge(r)
					// A held frontend, or a create whose outcome is not known,
					// asks a lookup, which looks; else the repair does.
					lookedUp := holds || !definitive(hnslb.NewError("create", code, ""))
					if got := e.hnsLB(d.Key); got == nil {
						t.Errorf("%s is not programmed", d.Key)
					}
					if left := len(e.portless()) - len(foreign); left != 1 && !lookedUp || left != 0 && lookedUp {
						t.Errorf("before the repair %d load balancers left by the failed create, want %d", left, map[bool]int{false: 1, true: 0}[lookedUp])
					}
					if err := r.Repair(ctx); err != nil {
						t.Fatal(err)
					}
					e.converge(r)

					portless := e.portless()
					slices.Sort(foreign)
					if !slices.Equal(portless, foreign) {
						t.Errorf("load balancers without port mappings %v, want only the other program's %v", portless, foreign)
					}
					if owned := r.ownedSet(recordLoadBalancer); len(owned) != 1 {
						t.Errorf("owned load balancers %v, want the Service's one", owned)
					}
				})
			}
		}
	}
}

// portless are the IDs, sorted, of the load balancers HNS lists without
// port mappings.
func (e *env) portless() []string {
	var ids []string
	for _, l := range e.snapshot().LoadBalancers {
		if len(l.PortMappings) == 0 {
			ids = append(ids, l.ID)
		}
	}
	slices.Sort(ids)
	return ids
}

// What a failed create's load balancer would show is compared whatever
// HNS's GUID case and order; VIPs, backends and the source VIP tell
// documents apart, port mappings and flags do not.
func TestPartialSigIgnoresEchoSpelling(t *testing.T) {
	a := &hnslb.LoadBalancer{FrontendVIPs: []string{"10.96.0.30"}, HostComputeEndpoints: []string{"AA-1", "bb-2"}, SourceVIP: "10.244.1.2"}
	b := &hnslb.LoadBalancer{FrontendVIPs: []string{"10.96.0.30"}, HostComputeEndpoints: []string{"BB-2", "aa-1"}, SourceVIP: "10.244.1.2",
		PortMappings: []hnslb.PortMapping{{Protocol: hnslb.ProtocolTCP, ExternalPort: 80}}, Flags: hnslb.LoadBalancerFlagsDSR}
	if partialSig(a) != partialSig(b) {
		t.Errorf("signatures differ by GUID case, order, ports or flags: %q, %q", partialSig(a), partialSig(b))
	}
	for _, other := range []*hnslb.LoadBalancer{
		{FrontendVIPs: []string{"10.96.0.31"}, HostComputeEndpoints: a.HostComputeEndpoints, SourceVIP: a.SourceVIP},
		{FrontendVIPs: a.FrontendVIPs, HostComputeEndpoints: []string{"aa-1"}, SourceVIP: a.SourceVIP},
		{FrontendVIPs: a.FrontendVIPs, HostComputeEndpoints: a.HostComputeEndpoints},
	} {
		if partialSig(other) == partialSig(a) {
			t.Errorf("%+v shares the signature of %+v", other, a)
		}
	}
}

// A load balancer without port mappings that holds a frontend hnsproxy
// wants, and that shows no document of a failed create of hnsproxy's
// (another program's, with other backends), is not deleted; the
// frontend's error names it.
func TestPortlessHolderIsNamed(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	e.local("10.244.1.10")
	other := e.local("10.244.1.11")
	e.failCreatesLeavingPartials(hnslb.CodeInvalidParameter, true)
	if _, err := e.hns.CreateLoadBalancer(ctx, &hnslb.LoadBalancer{FrontendVIPs: []string{"10.96.0.30"}, HostComputeEndpoints: []string{other},
		PortMappings: []hnslb.PortMapping{{Protocol: hnslb.ProtocolTCP, ExternalPort: 443, InternalPort: 9000}}}); err == nil {
		t.Fatal("the other program's create did not fail")
	}
	e.hns.SetFaults(sim.Faults{})
	left := e.portless()
	if len(left) != 1 {
		t.Fatalf("load balancers without port mappings %v, want the other program's failed create's", left)
	}

	d := lb("10.96.0.30", 443, loc("10.244.1.10"))
	r, res := e.start(e.hns, d)
	res = e.answerAll(r, res) // each listing shows no holder with a port
	if res.Failed != 1 {
		t.Fatalf("sync after the lookups: %+v, want the frontend refused", res)
	}
	st := statusOf(r, d.Key)
	for _, want := range []string{left[0], "without port mappings", "kubernetes/kubernetes#141488"} {
		if !strings.Contains(st.LastError, want) {
			t.Errorf("status %q does not say %q", st.LastError, want)
		}
	}
	if got := e.portless(); !slices.Equal(got, left) {
		t.Errorf("load balancers without port mappings %v, want %v kept", got, left)
	}
}

// After a restart, which forgets the failures before it, a create of the
// same document that fails again on the frontend the partial load balancer
// holds is remembered anew: the lookup it asks claims that one too.
func TestPartialLeftBeforeARestartIsClaimedByTheNextFailure(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	_, d := e.failedCreate(true)
	restarted, _ := e.start(e.hns, d)
	e.converge(restarted)
	if e.hnsLB(d.Key) == nil || len(e.portless()) != 0 {
		t.Errorf("after the restart: %s programmed %v, load balancers without port mappings %v", d.Key, e.hnsLB(d.Key) != nil, e.portless())
	}
}

// A failed create is remembered in the state file until a listing has
// looked: hnsproxy killed before one did (nothing asked one: the partial
// load balancer holds nothing, and the create's retry went through) finds
// what it left at its next Start, and deletes it then.
func TestPartialRememberedAcrossARestart(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	r, d := e.failedCreate(false)
	e.clock.Step(DefaultRetryMax)
	if res := r.Sync(ctx); res.Created != 1 || res.ListingWanted {
		t.Fatalf("retry: %+v, want the load balancer created without a listing", res)
	}
	left := e.portless()
	if len(left) != 1 {
		t.Fatalf("load balancers without port mappings %v, want the failed create's", left)
	}
	if s := e.stateOnDisk(); len(s.FailedLoadBalancerCreates) != 1 {
		t.Fatalf("state file remembers failed creates %v, want the one", s.FailedLoadBalancerCreates)
	}

	// Killed here: a new process starts on the same state file.
	_, res := e.start(e.hns, d)
	if res.Deleted != 1 || len(e.portless()) != 0 || e.hnsLB(d.Key) == nil {
		t.Errorf("first sync after the restart: %+v, load balancers without port mappings %v; want %v deleted, %s kept",
			res, e.portless(), left, d.Key)
	}
	if s := e.stateOnDisk(); len(s.FailedLoadBalancerCreates) != 0 {
		t.Errorf("state file still remembers failed creates %v after Start's listing looked", s.FailedLoadBalancerCreates)
	}
}

// stateOnDisk reads the state file as a restart would.
func (e *env) stateOnDisk() *stateFile {
	e.t.Helper()
	s, err := loadState(e.stateFile)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// failedCreate starts a reconciler whose one load balancer's create HNS
// refuses (0x57), leaving one without port mappings (holding its frontend
// if holds); HNS then takes creates again.
func (e *env) failedCreate(holds bool) (*Reconciler, intent.LB) {
	e.t.Helper()
	e.local("10.244.1.10")
	r := e.started()
	e.failCreatesLeavingPartials(hnslb.CodeInvalidParameter, holds)
	d := lb("10.96.0.30", 443, loc("10.244.1.10"))
	upsert(r, d)
	r.Sync(ctx)
	e.hns.SetFaults(sim.Faults{})
	if len(e.portless()) != 1 {
		e.t.Fatalf("load balancers without port mappings %v, want the failed create's", e.portless())
	}
	return r, d
}

// failCreatesLeavingPartials makes every load balancer create fail with
// code and leave a load balancer without port mappings, holding its
// frontend if holds.
func (e *env) failCreatesLeavingPartials(code hnslb.ErrorCode, holds bool) {
	e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpCreateLoadBalancer: 1}, Errors: []hnslb.ErrorCode{code},
		PartialCreates: 1, PartialHoldsFrontend: holds})
}

// --cleanup deletes the load balancers the state file's failed creates
// left, with the rest of what hnsproxy owns.
func TestCleanupDeletesWhatFailedCreatesLeft(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	foreignLB, foreignEP := e.foreign()
	r := e.started(e.threeServices()...)
	e.failCreatesLeavingPartials(hnslb.CodeInvalidParameter, false)
	upsert(r, lb("10.96.0.40", 443, loc("10.244.1.10")))
	r.Sync(ctx)
	e.hns.SetFaults(sim.Faults{})
	if len(e.portless()) != 1 {
		t.Fatalf("load balancers without port mappings %v, want the failed create's", e.portless())
	}
	res, err := Cleanup(ctx, e.hns, e.options())
	if err != nil || res.DeletedLoadBalancers != 4 || !res.StateRemoved {
		t.Fatalf("cleanup: %+v, %v; want the 3 load balancers and the failed create's deleted", res, err)
	}
	e.assertOnlyForeignLeft(foreignLB, foreignEP)
}

// TestOwnPartialIsNotNamedAsAHolder: HNS refuses a frontend as taken for
// good (a port it kept reserved, kubernetes/kubernetes#137530) and each
// refused create leaves a load balancer without port mappings
// (kubernetes/kubernetes#141488). Those are hnsproxy's, claimed and
// deleted; the frontend's error must not name them as load balancers to
// delete by hand if no program owns them. Nor, as its text then stays the
// same, is each retry's refusal a new error line at -v=0.
func TestOwnPartialIsNotNamedAsAHolder(t *testing.T) {
	r, d, logs := refusedForGoodLeavingPartials(t)
	if st := statusOf(r, d.Key); st.State != StateError || strings.Contains(st.LastError, "without port mappings") {
		t.Errorf("status %+v: want the refusal, naming no load balancer hnsproxy claimed", st)
	}
	if n := strings.Count(logs.GetBuffer().String(), "HNS operation failed"); n != 1 {
		t.Errorf("%d refusals logged at -v=0 over 6 retries, want 1:\n%s", n, logs.GetBuffer())
	}
}

// TestPartialsLeftAtEachRefusalAreLoggedOnce: where HNS refuses a frontend
// for good and leaves a load balancer without port mappings at each
// refusal, each listing claims and the Sync after deletes the ones left
// since. That they are being deleted is logged at -v=0 when the listings
// start finding them on the frontend, not twice for each every 2 minutes.
func TestPartialsLeftAtEachRefusalAreLoggedOnce(t *testing.T) {
	_, _, logs := refusedForGoodLeavingPartials(t)
	for _, line := range []string{"Deleting a load balancer HNS left without port mappings", "Deleted HNS object"} {
		if n := strings.Count(logs.GetBuffer().String(), line); n != 1 {
			t.Errorf("%d lines %q at -v=0 over 6 retries, want 1:\n%s", n, line, logs.GetBuffer())
		}
	}
}

// refusedForGoodLeavingPartials has HNS refuse a load balancer's frontend
// as taken through 6 retries, each with its lookups and a drift repair,
// leaving a load balancer without port mappings at each refusal
// (kubernetes/kubernetes#137530 and #141488 together).
func refusedForGoodLeavingPartials(t *testing.T) (*Reconciler, intent.LB, ktesting.Underlier) {
	e, logs := loggingEnv(t, sim.ProfileWS2022)
	e.local("10.244.1.10")
	r := e.started()
	e.hns.SetFaults(sim.Faults{PartialCreates: 1, TakenPorts: []sim.TakenPort{{Protocol: hnslb.ProtocolTCP, Port: 443}}})
	d := lb("10.96.0.30", 443, loc("10.244.1.10"))
	upsert(r, d)
	for range 6 {
		for res := r.Sync(ctx); res.ListingWanted; res = r.Sync(ctx) {
			if err := r.Lookup(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.Repair(ctx); err != nil {
			t.Fatal(err)
		}
		e.clock.Step(DefaultRetryMax)
	}
	if e.hns.Counters().PartialCreates < 3 {
		t.Fatalf("%d load balancers left by failed creates, want one per retry", e.hns.Counters().PartialCreates)
	}
	return r, d, logs
}

// With drift repair off only lookups list HNS, and each looks at the
// frontends of the failures it was asked for: the frontends where failed
// creates left load balancers, of Services deleted since, must not stay
// remembered (partialsOn) for the life of the process.
func TestPartialFrontendsOfServicesGoneAreForgottenWithoutARepair(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	e.local("10.244.1.10")
	r := e.started()
	e.hns.SetFaults(sim.Faults{PartialCreates: 1, TakenPorts: []sim.TakenPort{{Protocol: hnslb.ProtocolTCP, Port: 443}}})
	for g := range 8 {
		d := lb(fmt.Sprintf("10.96.%d.30", g), 443, loc("10.244.1.10"))
		upsert(r, d)
		for res := r.Sync(ctx); res.ListingWanted; res = r.Sync(ctx) {
			if err := r.Lookup(ctx); err != nil {
				t.Fatal(err)
			}
		}
		r.mu.Lock()
		found := len(r.partialsOn)
		r.mu.Unlock()
		if found == 0 {
			t.Fatalf("generation %d: no listing found what the refused create left", g)
		}
		remove(r, d.Key)
		e.converge(r)
		r.mu.Lock()
		left := slices.Sorted(maps.Keys(r.partialsOn))
		r.mu.Unlock()
		if len(left) > 1 {
			t.Fatalf("generation %d: partial frontends of %d Services remembered, all deleted but the last: %v", g, len(left), left)
		}
	}
}
