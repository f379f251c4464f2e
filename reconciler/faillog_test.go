package reconciler

import (
	"strings"
	"syscall"
	"testing"

	"k8s.io/klog/v2/ktesting"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// loggingEnv is newEnv whose reconciler logs at -v=0 into the buffer it
// returns.
func loggingEnv(t *testing.T, profile string) (*env, ktesting.Underlier) {
	e := newEnv(t, profile)
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.Verbosity(0), ktesting.BufferLogs(true)))
	e.tweak = func(o *Options) { o.Logger = logger }
	return e, logger.GetSink().(ktesting.Underlier)
}

// TestRefusalIsLoggedWhenItStartsOrChanges: an object HNS refuses for
// hours is retried with backoff (at most every 2 minutes) for as long;
// at the default verbosity its failure is one error line naming the
// object and HNS's answer, not one per retry, and again only when the
// error changes or the object failed anew after it was programmed.
func TestRefusalIsLoggedWhenItStartsOrChanges(t *testing.T) {
	e, logs := loggingEnv(t, sim.ProfileWS2019)
	e.local("10.244.1.11")
	e.local("10.244.1.12")
	r := e.started()
	d := lb("10.96.0.30", 10256, loc("10.244.1.11"))
	failures := func() int { return strings.Count(logs.GetBuffer().String(), "HNS operation failed") }
	retry := func() SyncResult {
		t.Helper()
		next, ok := r.NextRetry()
		if !ok {
			t.Fatal("no retry scheduled")
		}
		e.clock.SetTime(next)
		return r.Sync(ctx)
	}

	e.hns.SetFaults(sim.Faults{TakenPorts: []sim.TakenPort{{Protocol: hnslb.ProtocolTCP, Port: 10256}}})
	upsert(r, d)
	for res := r.Sync(ctx); res.ListingWanted; res = r.Sync(ctx) {
		if err := r.Repair(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := failures(); n != 1 {
		t.Fatalf("%d failure lines at -v=0 after HNS refused the load balancer, want 1:\n%s", n, logs.GetBuffer())
	}
	if !strings.Contains(logs.GetBuffer().String(), d.Key.String()) {
		t.Errorf("the failure does not name %s:\n%s", d.Key, logs.GetBuffer())
	}
	for range 20 {
		if res := retry(); res.Failed != 1 {
			t.Fatalf("retry: %+v, want the refusal again", res)
		}
	}
	if n := failures(); n != 1 {
		t.Errorf("%d failure lines at -v=0 after 20 retries refused the same way, want still 1:\n%s", n, logs.GetBuffer())
	}

	// Another answer is logged, once.
	e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpCreateLoadBalancer: 1}, Errors: []hnslb.ErrorCode{hnslb.CodeInvalidParameter}})
	for range 5 {
		retry()
	}
	if n := failures(); n != 2 {
		t.Errorf("%d failure lines at -v=0 after the error changed, want 2:\n%s", n, logs.GetBuffer())
	}

	// Programmed, then refused again: a new failure.
	e.hns.SetFaults(sim.Faults{})
	if res := retry(); res.Created != 1 {
		t.Fatalf("after the faults ended: %+v", res)
	}
	e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpCreateLoadBalancer: 1}, Errors: []hnslb.ErrorCode{hnslb.CodeInvalidParameter}})
	d.Backends = append(d.Backends, loc("10.244.1.12"))
	upsert(r, d)
	r.Sync(ctx)
	if n := failures(); n != 3 {
		t.Errorf("%d failure lines at -v=0 after a change failed anew, want 3:\n%s", n, logs.GetBuffer())
	}
}

// TestStateWriteFailureIsLoggedOncePerStreak: while the disk is full every
// Sync tries the state file again; at the default verbosity each of its
// messages is one error line for the whole streak (its StateFileWriteFailed
// event is once per streak too), not one per Sync; then one line when
// writing works again, and the next streak is logged anew.
func TestStateWriteFailureIsLoggedOncePerStreak(t *testing.T) {
	e, logs := loggingEnv(t, sim.ProfileWS2022)
	r := e.started(e.threeServices()...)
	faults := &faultFS{}
	useStateFS(r, faults)
	full := func(op, _ string) error {
		if op == "write" {
			return syscall.ENOSPC
		}
		return nil
	}
	failures := func() int { return strings.Count(logs.GetBuffer().String(), "Writing hnsproxy state file failed") }
	more := moreServices(12)
	faults.set(full)
	syncs := func(lbs []intent.LB) {
		for _, l := range lbs {
			upsert(r, l)
			r.Sync(ctx)
		}
	}
	syncs(more[:2])
	first := failures()
	if first == 0 {
		t.Fatalf("the full disk is not logged at -v=0:\n%s", logs.GetBuffer())
	}
	syncs(more[2:8])
	if n := failures(); n != first {
		t.Errorf("%d failure lines at -v=0 after 6 more Syncs on a full disk, want still %d:\n%s", n, first, logs.GetBuffer())
	}
	faults.set(nil)
	e.clock.Step(DefaultRetryMax)
	e.converge(r)
	if !strings.Contains(logs.GetBuffer().String(), "works again") {
		t.Errorf("the end of the streak is not logged:\n%s", logs.GetBuffer())
	}
	faults.set(full)
	syncs(more[8:])
	if n := failures(); n <= first {
		t.Errorf("%d failure lines at -v=0 after a second streak, want more than the first's %d:\n%s", n, first, logs.GetBuffer())
	}
}

// TestDeleteKeptForGoodIsLoggedOnce: HNS reports a load balancer's and a
// remote endpoint's deletes done and lists them still, for good
// (microsoft/Windows-Containers#631 reports endpoints left by the hundred).
// Each drift repair finds them and the Sync after deletes them again; at the
// default verbosity that is said once per object, not twice per object at
// every repair (every 5 minutes by default), while
// hnsproxy_hns_deletes_kept_total counts each finding. One HNS lets go of is
// said anew when HNS keeps it again.
func TestDeleteKeptForGoodIsLoggedOnce(t *testing.T) {
	e, logs := loggingEnv(t, sim.ProfileWS2022)
	kept := map[ObjectKind]int{}
	logTo := e.tweak
	e.tweak = func(o *Options) {
		logTo(o)
		o.DeleteKept = func(k ObjectKind) { kept[k]++ }
	}
	e.local("10.244.1.10")
	r := e.started()
	// keptForGood programs a load balancer with a remote endpoint, then
	// removes it while HNS keeps what it deletes.
	keptForGood := func() {
		gone := lb("10.96.0.30", 443, rem("10.244.3.31", "192.168.0.3"))
		upsert(r, gone)
		e.converge(r)
		e.hns.SetFaults(sim.Faults{KeptOnDelete: 1})
		remove(r, gone.Key)
		r.Sync(ctx)
	}
	keptForGood()
	repairs := func(n int) {
		t.Helper()
		for range n {
			if err := r.Repair(ctx); err != nil {
				t.Fatal(err)
			}
			e.clock.Step(DefaultRetryMax)
			r.Sync(ctx)
		}
	}
	lines := func() int { return strings.Count(logs.GetBuffer().String(), "\n") }

	repairs(1)
	first := logs.GetBuffer().String()
	if n := strings.Count(first, "HNS still lists an object it reported deleted"); n != 2 {
		t.Fatalf("%d kept objects logged at -v=0 by the first repair, want 2:\n%s", n, first)
	}
	before := lines()
	repairs(10)
	if kept[KindLoadBalancer] != 11 || kept[KindRemoteEndpoint] != 11 {
		t.Fatalf("kept objects counted %v, want each found by 11 repairs", kept)
	}
	if n := lines(); n != before {
		t.Errorf("10 more repairs finding the same kept objects logged %d lines at -v=0, want none:\n%s", n-before, strings.TrimPrefix(logs.GetBuffer().String(), first))
	}

	// HNS lets go of them; a load balancer kept later is a new finding.
	e.hns.SetFaults(sim.Faults{})
	repairs(1)
	keptForGood()
	mark := logs.GetBuffer().String()
	repairs(1)
	if n := strings.Count(strings.TrimPrefix(logs.GetBuffer().String(), mark), "HNS still lists an object it reported deleted"); n != 2 {
		t.Errorf("%d kept objects logged at -v=0 after HNS kept new ones, want 2:\n%s", n, strings.TrimPrefix(logs.GetBuffer().String(), mark))
	}
}

// TestMassDriftIsLoggedInOneLine: a runbook's Get-HnsPolicyList |
// Remove-HnsPolicyList, or an HNS restart that drops what it held, deletes
// every load balancer and remote endpoint of hnsproxy's at once. The drift
// repair that finds them (with the Sync that reads by ID what its listing
// left out, unlistedrealized.go) says so at the default verbosity in one
// line with the counts and a few of them, not one line per object (tens of
// thousands on a large node); each object's line is at --v=2.
func TestMassDriftIsLoggedInOneLine(t *testing.T) {
	e, logs := loggingEnv(t, sim.ProfileWS2022)
	e.local("10.244.1.10")
	want := moreServices(40)
	r := e.started(want...)
	snap := e.snapshot()
	for _, l := range snap.LoadBalancers {
		if err := e.hns.DeleteLoadBalancer(ctx, l.ID); err != nil {
			t.Fatal(err)
		}
	}
	for _, ep := range snap.Endpoints {
		if ep.IsRemote() {
			if err := e.hns.DeleteEndpoint(ctx, ep.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	before := logs.GetBuffer().String()
	if err := r.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	r.Sync(ctx) // reads by ID what the repair's listing left out
	found := strings.TrimPrefix(logs.GetBuffer().String(), before)
	if n := strings.Count(found, "\n"); n != 1 {
		t.Errorf("the repair and the Sync reading what it left out logged %d lines at -v=0 for 40 load balancers and 40 endpoints gone, want 1:\n%s", n, found)
	}
	for _, what := range []string{"loadBalancersGone=40", "remoteEndpointsGone=40", "firstLoadBalancers=[\"10.96.1.", "firstRemoteEndpoints=[\"10.244.4."} {
		if !strings.Contains(found, what) {
			t.Errorf("the repair's line does not say %s:\n%s", what, found)
		}
	}
	e.converge(r)
	e.assertRealized(want)
}
