package reconciler

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// A listing that leaves out an object HNS holds (sim
// Faults.LeftOutOfListings) does not make hnsproxy forget it: a load
// balancer of its own that no Service wants any more, left out of Start's
// listing or of a drift repair's while its delete waits for a retry, is
// still deleted once listings show it again, rather than left in HNS for
// good as another program's.
func TestALoadBalancerOneListingLeavesOutIsStillDeleted(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2019, sim.ProfileWS2025} {
		t.Run(profile+"/start", func(t *testing.T) {
			e := newEnv(t, profile)
			want := e.threeServices()
			e.started(want...)
			// The third Service was deleted while hnsproxy was down.
			e.restartWithout(want, sim.Faults{LeftOutOfListings: 1})
		})
		t.Run(profile+"/repair", func(t *testing.T) {
			e := newEnv(t, profile)
			want := e.threeServices()
			r := e.started(want...)
			e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpDeleteLoadBalancer: 1, sim.OpDeleteEndpoint: 1}})
			remove(r, want[2].Key)
			r.Sync(ctx) // the deletes fail and wait for their retry
			e.hns.SetFaults(sim.Faults{LeftOutOfListings: 1})
			if err := r.Repair(ctx); err != nil {
				t.Fatal(err)
			}
			e.hns.SetFaults(sim.Faults{})
			e.leftOutSettles(r)
			e.assertRealized(want[:2])
			e.assertStateFileMatchesHNS()
		})
	}
}

// restartWithout starts a new reconciler that wants want but its last
// Service, under faults, then settles it with them off: HNS holds the
// others and nothing of the last, and the state file says so.
func (e *env) restartWithout(want []intent.LB, faults sim.Faults) {
	e.t.Helper()
	e.hns.SetFaults(faults)
	r := New(e.hns, e.options())
	kept := want[:len(want)-1]
	upsert(r, kept...)
	if err := r.Start(ctx); err != nil {
		e.t.Fatal(err)
	}
	e.hns.SetFaults(sim.Faults{})
	e.leftOutSettles(r)
	e.assertRealized(kept)
	e.assertStateFileMatchesHNS()
}

// leftOutSettles converges r and runs two drift repairs, each converged,
// as the repair period would.
func (e *env) leftOutSettles(r *Reconciler) {
	e.t.Helper()
	e.converge(r)
	for range 2 {
		e.clock.Step(5 * time.Minute)
		if err := r.Repair(ctx); err != nil {
			e.t.Fatal(err)
		}
		e.converge(r)
	}
}

// onePodServices are n ClusterIP Services over one local pod.
func (e *env) onePodServices(n int) []intent.LB {
	e.local("10.244.1.10")
	var want []intent.LB
	for i := range n {
		want = append(want, lb(fmt.Sprintf("10.96.%d.%d", i/250, i%250+1), 80, loc("10.244.1.10")))
	}
	return want
}

// readsUpToTheCap is how many of lost objects a listing left out are read
// by ID: each, up to maxUnlistedReads; past it, none.
func readsUpToTheCap(lost int) int {
	if lost > maxUnlistedReads {
		return 0
	}
	return lost
}

// getsOfLost is how many gets reads of lost objects make: each is asked
// silentListings times before its "not found" is believed (hnslb.GetLooking).
func getsOfLost(reads int) int { return reads * silentListings }

// A Start after HNS lost more of hnsproxy's objects than a listing leaves
// out by chance (a reboot, a restart that dropped them) reads none of them
// by ID, rather than hold the start for a read of each: it deletes each by
// ID once, and the "not found" forgets it. Up to the cap, it reads each,
// and deletes none of those HNS lost.
func TestAStartAfterHNSLostManyObjectsReadsNoneByID(t *testing.T) {
	for _, lost := range []int{maxUnlistedReads, maxUnlistedReads + 1} {
		t.Run(fmt.Sprint(lost), func(t *testing.T) {
			e := newEnv(t, sim.ProfileWS2022)
			want := e.onePodServices(lost)
			e.started(want...)
			if err := e.hns.RestartLosing(0, sim.RestartLosesLoadBalancers); err != nil {
				t.Fatal(err)
			}
			e.hns.ResetCounters()
			r := e.reconciler()
			upsert(r, want...)
			if err := r.Start(ctx); err != nil {
				t.Fatal(err)
			}
			if n, wantGets := e.counters().Count(sim.OpGetLoadBalancer), getsOfLost(readsUpToTheCap(lost)); n != wantGets {
				t.Errorf("Start made %d gets of %d lost load balancers, want %d", n, lost, wantGets)
			}
			e.converge(r)
			e.assertRealized(want)
			e.assertStateFileMatchesHNS()
			if n, wantDeletes := e.counters().Count(sim.OpDeleteLoadBalancer), lost-readsUpToTheCap(lost); n != wantDeletes {
				t.Errorf("%d load balancer deletes, want %d (each lost one unread)", n, wantDeletes)
			}
		})
	}
}

// The listing of a Start after HNS lost many of hnsproxy's objects may
// leave out one HNS still holds, as any listing may. Past the cap of reads
// it was forgotten unread, and where HNS drops remote endpoint names
// nothing claimed it again: a remote endpoint whose Service went while
// hnsproxy was down stayed in HNS for good (found by the fault soak). Now
// each is deleted by ID. The deletes follow the first Sync's creates, at
// most maxUnlistedReads per Sync, so what is desired is not held back.
func TestAStartPastTheReadCapDeletesWhatItsListingLeftOut(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2019, sim.ProfileWS2022, sim.ProfileWS2025} {
		t.Run(profile, func(t *testing.T) {
			e := newEnv(t, profile)
			e.declaringEndpoints()
			lost := e.onePodServices(maxUnlistedReads)
			gone := lb("10.96.9.1", 80, rem("10.244.2.20", "192.168.0.2"))
			e.started(append(lost, gone)...)
			if err := e.hns.RestartLosing(0, sim.RestartLosesLoadBalancers); err != nil {
				t.Fatal(err)
			}
			// Every Service above was deleted while hnsproxy was down; one
			// was created, over another remote pod.
			fresh := lb("10.96.9.2", 80, rem("10.244.2.21", "192.168.0.2"))
			e.hns.SetFaults(sim.Faults{LeftOutOfListings: 1})
			e.hns.ResetCounters()
			r := e.reconciler()
			upsert(r, fresh)
			if err := r.Start(ctx); err != nil {
				t.Fatal(err)
			}
			c := e.counters()
			if n := c.Count(sim.OpGetLoadBalancer) + c.Count(sim.OpGetEndpoint); n != 0 {
				t.Errorf("Start made %d reads by ID past the cap, want none", n)
			}
			e.hns.SetFaults(sim.Faults{})
			r.Sync(ctx)
			if e.hnsLB(fresh.Key) == nil {
				t.Errorf("the first Sync did not make the Service created while hnsproxy was down")
			}
			c = e.counters()
			if n := c.Count(sim.OpDeleteLoadBalancer) + c.Count(sim.OpDeleteEndpoint); n != maxUnlistedReads {
				t.Errorf("the first Sync made %d deletes by ID, want %d (the cap)", n, maxUnlistedReads)
			}
			e.leftOutSettles(r)
			e.assertRealized([]intent.LB{fresh})
			e.assertStateFileMatchesHNS()
			if n := e.counters().Count(sim.OpDeleteLoadBalancer); n != len(lost)+1 {
				t.Errorf("%d load balancer deletes, want %d: each lost one once", n, len(lost)+1)
			}
		})
	}
}

// A remote endpoint no Service wants any more, whose delete waits for a
// retry, is still deleted when a drift repair's listing leaves it out:
// taken for vanished on the listing's word, it was forgotten, and where HNS
// drops endpoint names (so no later listing claims it by name) HNS kept it
// for good as another program's.
func TestARemoteEndpointOneListingLeavesOutIsStillDeleted(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2019, sim.ProfileWS2025} {
		t.Run(profile, func(t *testing.T) {
			e := newEnv(t, profile)
			e.declaringEndpoints()
			want := e.threeServices()
			r := e.started(want...)
			e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpDeleteEndpoint: 1}})
			want[1] = lb("10.96.0.20", 80, loc("10.244.1.11"), rem("10.244.2.20", "192.168.0.2"))
			handOver(r, want, nil) // 10.244.3.30 is wanted no more
			r.Sync(ctx)            // its delete fails and waits for its retry
			e.hns.SetFaults(sim.Faults{LeftOutOfListings: 1})
			if err := r.Repair(ctx); err != nil {
				t.Fatal(err)
			}
			e.hns.SetFaults(sim.Faults{})
			e.leftOutSettles(r)
			e.assertRealized(want)
			e.assertStateFileMatchesHNS()
		})
	}
}

// A restart whose listings leave out every object: hnsproxy's load
// balancer is read by ID (the state file owns it), but the pods' endpoints
// (the CNI's, found through listings alone) are not listed, nor their
// namespaces. The load balancer keeps its backends, and nothing is
// written. Before, the first Sync found no endpoint for either pod and
// deleted the load balancer, and the Service stayed dark until listings
// answered again.
func TestARestartWhoseListingsLeaveOutThePodsKeepsTheirLoadBalancer(t *testing.T) {
	for _, p := range sim.Profiles() {
		t.Run(p.Name, func(t *testing.T) {
			e := newEnv(t, p.Name)
			e.local("10.244.1.10")
			e.local("10.244.1.11")
			want := []intent.LB{lb("10.96.0.1", 80, loc("10.244.1.10"), loc("10.244.1.11"))}
			e.started(want...)
			e.hns.SetFaults(sim.Faults{LeftOutOfListings: 1})
			r := e.reconciler()
			upsert(r, want...)
			if err := r.Start(ctx); err != nil {
				t.Fatal(err)
			}
			r.Sync(ctx)
			e.assertRealized(want)
			e.assertServed(want[0])
			if c := e.counters(); c.Writes() != 0 {
				t.Errorf("calls %+v, want no write", c.Calls)
			}
			e.hns.SetFaults(sim.Faults{})
			e.leftOutSettles(r)
			e.assertRealized(want)
			e.assertStateFileMatchesHNS()
		})
	}
}

// A drift repair whose listing leaves out a pod's endpoint, and the
// namespaces' listing after it too, while it lists the load balancer: the
// pod stays indexed, the next Sync reads its endpoint by ID and writes
// nothing, and no drift is counted. Before, the repair dropped the pod from
// the index, counted the load balancer as using a vanished endpoint, and
// the Sync wrote it without the pod (deleted it, the pod its only
// backend), until a lookup's listing showed the pod again.
func TestAPodEndpointListingsLeaveOutStaysTheBackendItsLoadBalancerNames(t *testing.T) {
	for _, p := range sim.Profiles() {
		t.Run(p.Name, func(t *testing.T) {
			e := newEnv(t, p.Name)
			pod := e.local("10.244.1.10")
			e.local("10.244.1.11") // the traces' source
			c := &podsUnlisted{Client: e.hns}
			r := New(c, e.options())
			if err := r.Start(ctx); err != nil {
				t.Fatal(err)
			}
			want := []intent.LB{lb("10.96.0.1", 80, loc("10.244.1.10"))}
			upsert(r, want...)
			e.converge(r)
			e.hns.ResetCounters()
			c.hidden = pod
			if err := r.Repair(ctx); err != nil {
				t.Fatal(err)
			}
			e.converge(r)
			e.assertRealized(want)
			e.assertServed(want[0])
			if n := e.counters().Writes(); n != 0 {
				t.Errorf("calls %+v, want no write", e.counters().Calls)
			}
			if len(e.drifted) != 0 {
				t.Errorf("drift repaired %v, want none: HNS kept everything", e.drifted)
			}
			c.hidden = ""
			e.leftOutSettles(r)
			e.assertRealized(want)
		})
	}
}

// A drift repair whose listing leaves out a remote endpoint of hnsproxy's
// while it lists the load balancer using it: the next Sync reads the
// endpoint by ID and writes nothing, and no drift is counted. Taken for
// vanished at once, the endpoint was made again (refused as taken) and the
// load balancer counted as using a vanished endpoint and written again.
func TestARemoteEndpointARepairsListingLeavesOutStaysItsLoadBalancersBackend(t *testing.T) {
	for _, p := range sim.Profiles() {
		t.Run(p.Name, func(t *testing.T) {
			e := newEnv(t, p.Name)
			c := &podsUnlisted{Client: e.hns}
			r := New(c, e.options())
			want := e.threeServices()
			upsert(r, want...)
			if err := r.Start(ctx); err != nil {
				t.Fatal(err)
			}
			e.converge(r)
			e.hns.ResetCounters()
			c.hidden = e.remoteID("10.244.3.31") // the third Service's only backend
			if err := r.Repair(ctx); err != nil {
				t.Fatal(err)
			}
			e.converge(r)
			if n := e.counters().Writes(); n != 0 {
				t.Errorf("calls %+v, want no write", e.counters().Calls)
			}
			if n := e.counters().Count(sim.OpGetEndpoint); n != 1 {
				t.Errorf("read %d endpoints by ID, want the one left out", n)
			}
			if len(e.drifted) != 0 {
				t.Errorf("drift repaired %v, want none: HNS kept everything", e.drifted)
			}
			c.hidden = ""
			e.leftOutSettles(r)
			e.assertRealized(want)
			e.assertStateFileMatchesHNS()
		})
	}
}

// podsUnlisted is an HNS whose listings of endpoints and namespaces leave
// out the endpoint hidden (and the namespace holding it); reads by ID and
// load balancer listings see it.
type podsUnlisted struct {
	hnslb.Client
	hidden string
}

func (c *podsUnlisted) shown(id string) bool {
	return c.hidden == "" || !strings.EqualFold(id, c.hidden)
}

func (c *podsUnlisted) ListEndpointsOfNetwork(ctx context.Context, network string) ([]hnslb.Endpoint, error) {
	eps, err := c.Client.ListEndpointsOfNetwork(ctx, network)
	return slices.DeleteFunc(eps, func(ep hnslb.Endpoint) bool { return !c.shown(ep.ID) }), err
}

func (c *podsUnlisted) ListEndpoints(ctx context.Context) ([]hnslb.Endpoint, error) {
	eps, err := c.Client.ListEndpoints(ctx)
	return slices.DeleteFunc(eps, func(ep hnslb.Endpoint) bool { return !c.shown(ep.ID) }), err
}

func (c *podsUnlisted) ListNamespaces(ctx context.Context) ([]hnslb.Namespace, error) {
	nss, err := c.Client.ListNamespaces(ctx)
	return slices.DeleteFunc(nss, func(ns hnslb.Namespace) bool {
		return !all(namespaceEndpointIDs([]hnslb.Namespace{ns}), c.shown)
	}), err
}

func all(ids []string, ok func(string) bool) bool {
	for _, id := range ids {
		if !ok(id) {
			return false
		}
	}
	return true
}

// A drift repair whose listing leaves out the load balancers and remote
// endpoints a Service still wants does not take them for vanished: the
// next Sync reads each by ID, finds it, and writes nothing. Before, the
// repair dropped them from the state file and made them again: HNS refused
// each create as taken, the lookups' listings left the holders out as well,
// and a Service deleted meanwhile left its load balancer and remote
// endpoint in HNS for good, no longer hnsproxy's.
func TestObjectsARepairsListingLeavesOutStayOwned(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2019, sim.ProfileWS2022, sim.ProfileWS2025} {
		t.Run(profile, func(t *testing.T) {
			e := newEnv(t, profile)
			want := e.threeServices()
			r := e.started(want...)
			e.hns.SetFaults(sim.Faults{LeftOutOfListings: 1})
			e.hns.ResetCounters()
			if err := r.Repair(ctx); err != nil {
				t.Fatal(err)
			}
			e.converge(r)
			if c := e.counters(); c.Writes() != 0 {
				t.Errorf("after a repair whose listing left everything out: %d writes (%v), want none", c.Writes(), c)
			}
			remove(r, want[2].Key) // its remote endpoint goes with it
			e.converge(r)
			e.hns.SetFaults(sim.Faults{})
			e.leftOutSettles(r)
			e.assertRealized(want[:2])
			e.assertStateFileMatchesHNS()
		})
	}
}

// What HNS lost behind hnsproxy's back is read by ID once before it is
// made again; past maxUnlistedReads objects a repair's listing left out,
// HNS lost them (a restart, a runbook) and none is read: all are made
// again, as before.
func TestLostObjectsAreReadOnceOrNotAtAll(t *testing.T) {
	for _, n := range []int{3, maxUnlistedReads, maxUnlistedReads + 1} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			e := newEnv(t, sim.ProfileWS2022)
			want := e.onePodServices(n)
			r := e.started(want...)
			for _, l := range e.snapshot().LoadBalancers {
				if err := e.hns.DeleteLoadBalancer(ctx, l.ID); err != nil {
					t.Fatal(err)
				}
			}
			if err := r.Repair(ctx); err != nil {
				t.Fatal(err)
			}
			e.hns.ResetCounters()
			e.converge(r)
			c := e.counters()
			if got, wantGets := c.Count(sim.OpGetLoadBalancer), getsOfLost(readsUpToTheCap(n)); got != wantGets {
				t.Errorf("the Syncs after the repair made %d gets of load balancers, want %d", got, wantGets)
			}
			if got := c.Count(sim.OpCreateLoadBalancer); got != n {
				t.Errorf("the Syncs after the repair made %d load balancers again, want %d", got, n)
			}
			e.assertRealized(want)
			e.assertStateFileMatchesHNS()
		})
	}
}

// A read by ID HNS does not answer tells nothing: what the repair's listing
// left out stays realized and owned, nothing is written, and the read is
// made again after a backoff, until HNS answers.
func TestAnUnansweredReadOfWhatAListingLeftOutIsMadeAgain(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	want := e.threeServices()
	r := e.started(want...)
	e.hns.SetFaults(sim.Faults{LeftOutOfListings: 1})
	if err := r.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	e.hns.SetFaults(sim.Faults{Errors: []hnslb.ErrorCode{hnslb.CodeRPCServerUnavailable},
		ErrorRate: map[sim.Op]float64{sim.OpGetLoadBalancer: 1, sim.OpGetEndpoint: 1}})
	e.hns.ResetCounters()
	r.Sync(ctx)
	c := e.counters()
	// The endpoints' reads may be joined by the probe's, HNS failing.
	if c.Writes() != 0 || c.Count(sim.OpGetLoadBalancer) != 3 || c.Count(sim.OpGetEndpoint) < 3 {
		t.Errorf("calls %+v, want the 3 load balancers and 3 endpoints read and no write", c.Calls)
	}
	next, ok := r.NextRetry()
	if !ok || !next.After(e.clock.Now()) {
		t.Errorf("next retry %v (%v), want one after a backoff", next, ok)
	}
	e.hns.SetFaults(sim.Faults{})
	e.converge(r)
	if c := e.counters(); c.Writes() != 0 || c.Count(sim.OpGetLoadBalancer) != 6 {
		t.Errorf("calls %+v, want each read once more and no write", c.Calls)
	}
	if r.unlisted.pending() {
		t.Errorf("reads still pending after HNS answered: %+v", r.unlisted)
	}
	e.assertRealized(want)
	e.assertStateFileMatchesHNS()
}

// A drift repair after HNS dropped more of hnsproxy's load balancers than
// it reads by ID takes them, and what its listing left out with them, for
// vanished unread. A remote endpoint HNS still held that the listing left
// out among them was forgotten: with its Service deleted before it was
// made again, it stayed in HNS for good where HNS drops endpoint names.
// Now each old ID is deleted by ID once the repair's work is done.
func TestARepairPastTheReadCapDeletesWhatItsListingLeftOut(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2019, sim.ProfileWS2025} {
		t.Run(profile, func(t *testing.T) {
			e := newEnv(t, profile)
			e.declaringEndpoints()
			want := remoteServices(maxUnlistedReads/2 + 1) // each a load balancer and an endpoint: past the cap
			r := e.started(want...)
			if err := e.hns.RestartLosing(0, sim.RestartLosesLoadBalancers); err != nil {
				t.Fatal(err)
			}
			e.hns.SetFaults(sim.Faults{LeftOutOfListings: 1}) // and every remote endpoint left out
			if err := r.Repair(ctx); err != nil {
				t.Fatal(err)
			}
			e.hns.SetFaults(sim.Faults{})
			for _, d := range want {
				remove(r, d.Key) // every Service deleted before the repair's work is done
			}
			e.leftOutSettles(r)
			e.assertRealized(nil)
			e.assertStateFileMatchesHNS()
		})
	}
}

// A read at Start that HNS does not answer is asked again at once, up to
// startReadTries times: one lost reply among the reads of what the listing
// left out failed the whole start, and where HNS loses one reply in ten a
// restart kept failing until hnsproxy gave up and exited (the fault soak).
// An HNS that answers none of the tries still fails the start, transiently.
func TestAStartAsksAgainForAReadHNSDidNotAnswer(t *testing.T) {
	for _, lost := range []int{2, startReadTries} { // two replies lost in a row: asked a third time
		t.Run(fmt.Sprint(lost), func(t *testing.T) {
			e := newEnv(t, sim.ProfileWS2022)
			want := e.threeServices()
			e.started(want...)
			e.hns.SetFaults(sim.Faults{LeftOutOfListings: 1})
			r := New(&lostReplies{Client: e.hns, lose: lost, asked: map[string]int{}}, e.options())
			upsert(r, want...)
			err := r.Start(ctx)
			if lost == startReadTries {
				if err == nil || !hnslb.IsTransient(err) {
					t.Fatalf("Start with every try of a read lost: %v, want a transient error", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Start with %d of %d tries of each read lost: %v", lost, startReadTries, err)
			}
			e.hns.SetFaults(sim.Faults{})
			e.converge(r)
			if w := e.counters().Writes(); w != 0 {
				t.Errorf("%d writes after the start, want none: every object was read", w)
			}
			e.assertRealized(want)
		})
	}
}

// lostReplies loses the replies of the first reads by ID of each object.
type lostReplies struct {
	hnslb.Client
	lose  int
	asked map[string]int
}

func (l *lostReplies) lost(op, id string) error {
	if l.asked[id]++; l.asked[id] <= l.lose {
		return hnslb.NewError(op, hnslb.CodeRPCServerUnavailable, "(test: reply lost)")
	}
	return nil
}

func (l *lostReplies) GetLoadBalancerByID(ctx context.Context, id string) (*hnslb.LoadBalancer, error) {
	if err := l.lost("GetLoadBalancer", id); err != nil {
		return nil, err
	}
	return l.Client.GetLoadBalancerByID(ctx, id)
}

func (l *lostReplies) GetEndpointByID(ctx context.Context, id string) (*hnslb.Endpoint, error) {
	if err := l.lost("GetEndpoint", id); err != nil {
		return nil, err
	}
	return l.Client.GetEndpointByID(ctx, id)
}
