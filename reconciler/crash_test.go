package reconciler

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"k8s.io/klog/v2/textlogger"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// The crash script and the tests that kill it before every step (how a kill
// is made: kill_test.go).

// crashRun is one run of the crash script.
type crashRun struct {
	e      *env
	ks     *killSwitch
	kfs    *killFS
	tenant intent.LBKey // the tenant's frontend (external IP): never to be claimed from another
	// foreignEP is another agent's remote endpoint (e.foreign), under its
	// load balancer.
	foreignEP string
	pod       string // the local endpoint of 10.244.1.11
	// syncs are the step counts at each Sync's start and end.
	syncs [][2]int
	// leftOut: the restart's listing leaves out every object (restart).
	leftOut bool
}

// newCrashRun runs the script a kill interrupts: a cold start, a Service whose
// backend moves to a new remote pod (a new endpoint, the old one deleted;
// without modify a new load balancer ID), a tenant's external IP Service
// changed, a Service deleted, a periodic Sync with nothing to do, and the
// first Service's local backend changed (without modify a new ID on a
// standing declaration: no state write before the create). With
// declaring, HNS drops remote endpoint names, so each endpoint create is
// declared; else, once the cold start's replies show the names kept, the
// new remote pod's endpoint is created undeclared (names.go).
func newCrashRun(t *testing.T, profile string, killAt int, declaring bool) *crashRun {
	return newCrashRunUnder(t, profile, killAt, declaring, sim.Faults{})
}

// newCrashRunUnder is newCrashRun with HNS's faults set for the script
// (the restart lifts them).
func newCrashRunUnder(t *testing.T, profile string, killAt int, declaring bool, faults sim.Faults) *crashRun {
	e := newEnv(t, profile)
	if declaring {
		e.declaringEndpoints()
	}
	_, foreignEP := e.foreign()
	pod := e.local("10.244.1.11")
	e.local("10.244.1.12")
	ks := &killSwitch{killAt: killAt}
	c := &crashRun{e: e, ks: ks, kfs: &killFS{k: ks, synced: map[string]int64{}}, foreignEP: foreignEP, pod: pod}
	a := lb("10.96.0.10", 80, loc("10.244.1.11"), rem("10.244.2.20", "192.168.0.2"))
	b := externalLB("203.0.113.10", 443, loc("10.244.1.11"), rem("10.244.2.21", "192.168.0.2"))
	gone := lb("10.96.0.11", 53, rem("10.244.2.23", "192.168.0.3"))
	c.tenant = b.Key
	opts := e.options()
	opts.Logger = textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(io.Discard))) // a dead process's errors
	r := New(&killClient{Client: e.hns, k: ks}, opts)
	r.store.fs = c.kfs
	e.hns.SetFaults(faults)
	upsert(r, a, b, gone)
	if err := r.Start(ctx); err != nil && ks.alive() {
		t.Fatal(err)
	}
	sync := func() {
		start := ks.count()
		r.Sync(ctx)
		c.syncs = append(c.syncs, [2]int{start, ks.count()})
	}
	sync()
	a.Backends = []intent.Backend{loc("10.244.1.11"), rem("10.244.2.22", "192.168.0.2")}
	upsert(r, a)
	sync()
	b.Backends = []intent.Backend{loc("10.244.1.12"), rem("10.244.2.21", "192.168.0.2")}
	upsert(r, b)
	remove(r, gone.Key)
	sync()
	sync()
	a.Backends = []intent.Backend{loc("10.244.1.12"), rem("10.244.2.22", "192.168.0.2")}
	upsert(r, a)
	sync()
	return c
}

// restart starts a new reconciler on what the kill left, with nothing
// desired (every Service deleted while hnsproxy was down), and converges;
// with leftOut, its listing leaves out every object, and two drift
// repairs follow, as the repair period would make them.
func (c *crashRun) restart() {
	faults := sim.Faults{}
	if c.leftOut {
		faults.LeftOutOfListings = 1
	}
	c.e.hns.SetFaults(faults)
	r := New(c.e.hns, c.e.options())
	if err := r.Start(ctx); err != nil {
		c.e.t.Fatal(err)
	}
	c.e.hns.SetFaults(sim.Faults{})
	if c.leftOut {
		c.e.leftOutSettles(r)
		return
	}
	c.e.converge(r)
}

// eachKill runs the script under faults, killed before each of its steps
// and after the last, with and without a power loss, and with and
// without the restart's listing leaving out every object (restart), and
// hands each run to check, with a description of where it was killed.
func eachKill(t *testing.T, profile string, steps int, faults sim.Faults, check func(c *crashRun, at string)) {
	for _, leftOut := range []bool{false, true} {
		for _, powerLoss := range []bool{false, true} {
			for kill := 1; kill <= steps+1; kill++ {
				c := newCrashRunUnder(t, profile, kill, false, faults)
				if powerLoss {
					c.kfs.powerLoss(t, journalPath(c.e.stateFile))
				}
				c.leftOut = leftOut
				check(c, fmt.Sprintf("killed before step %d of %d (power loss %v, the restart's listing leaving out every object %v)", kill, steps, powerLoss, leftOut))
			}
		}
	}
}

// leftovers are the load balancers and remote endpoints in HNS other than
// those of e.foreign() (one of each).
func (c *crashRun) leftovers() []string {
	var out []string
	for _, l := range c.e.snapshot().LoadBalancers {
		if k, _ := KeyOf(&l); k.VIP != "10.96.9.9" {
			out = append(out, "load balancer "+k.String())
		}
	}
	for _, ep := range c.e.snapshot().Endpoints {
		if ep.IsRemote() && ep.IP() != "10.244.9.9" {
			out = append(out, "remote endpoint "+ep.IP())
		}
	}
	return out
}

// mayHoldDeclaration reports whether a kill before step may leave the
// tenant frontend declared as being created: inside a Sync that creates on
// it (declaring marks the Sync's start), and after a power loss also inside
// the Sync after it, whose first state write is the fsync that makes the
// withdrawal durable. syncs are the step ranges of the run not killed;
// creates says which of its Syncs create on the frontend.
func mayHoldDeclaration(syncs [][2]int, creates []bool, step int, powerLoss bool) bool {
	for i, s := range syncs {
		if step > s[0] && step <= s[1] {
			return creates[i] || powerLoss && i > 0 && creates[i-1]
		}
	}
	return powerLoss && creates[len(creates)-1]
}

// TestKillAtEveryStepLeaksNothing: wherever the process dies, and whether
// the journal keeps its unsynced appends (a kill) or loses them (power
// loss), the restarted reconciler owns every object the killed one made:
// with every Service deleted meanwhile, it removes them all, and leaves the
// other agent's objects alone. Remote endpoints are claimed by their
// declarations where HNS drops their names, and by their names where it
// keeps them.
func TestKillAtEveryStepLeaksNothing(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2022, sim.ProfileWS2025} {
		for _, declaring := range []bool{true, false} {
			steps := newCrashRun(t, profile, 0, declaring).ks.count()
			if steps < 20 {
				t.Fatalf("%s: the script took %d steps; it no longer exercises the state file", profile, steps)
			}
			for _, powerLoss := range []bool{false, true} {
				for kill := 1; kill <= steps+1; kill++ {
					c := newCrashRun(t, profile, kill, declaring)
					if powerLoss {
						c.kfs.powerLoss(t, journalPath(c.e.stateFile))
					}
					c.restart()
					if left := c.leftovers(); len(left) > 0 {
						t.Errorf("%s, declaring endpoints %v, killed before step %d of %d (power loss %v): leaked %v", profile, declaring, kill, steps, powerLoss, left)
					}
					if s := readState(t, c.e.stateFile); len(s.LoadBalancers)+len(s.RemoteEndpoints) != 0 {
						t.Errorf("%s, declaring endpoints %v, killed before step %d: the state file still owns %+v", profile, declaring, kill, s)
					}
				}
			}
		}
	}
}

// TestKillAtEveryStepLeavesNoPartialLoadBalancer: the script again, with
// HNS refusing half of the load balancer creates and leaving a load
// balancer without port mappings for each (kubernetes/kubernetes#141488).
// Wherever the process dies, even between a refused create and the write
// that records it, and whether the journal keeps its unsynced appends or
// not, the restart finds every such load balancer its creates left and
// deletes it: where the record of the failure was lost, by the frontend's
// declaration. Where the restart's listing leaves out every object, the
// listings after it find them: by the failure's record where it was
// written (silentListings), else by the declaration, carried
// (claimCarriedPortless).
func TestKillAtEveryStepLeavesNoPartialLoadBalancer(t *testing.T) {
	failing := sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpCreateLoadBalancer: 0.5}, Errors: []hnslb.ErrorCode{hnslb.CodeInvalidParameter},
		PartialCreates: 1}
	for _, profile := range []string{sim.ProfileWS2022, sim.ProfileWS2025} {
		whole := newCrashRunUnder(t, profile, 0, false, failing)
		steps := whole.ks.count()
		if n := whole.e.hns.Counters().PartialCreates; n < 2 {
			t.Fatalf("%s: the script's creates left %d load balancers without port mappings; want at least 2", profile, n)
		}
		eachKill(t, profile, steps, failing, func(c *crashRun, at string) {
			c.restart()
			if left := c.leftovers(); len(left) > 0 {
				t.Errorf("%s, %s: leaked %v", profile, at, left)
			}
		})
	}
}

// TestKillNeverClaimsAnotherAgentsPartialLoadBalancer: another agent's
// failed creates left load balancers without port mappings over its own
// remote endpoint, on each VIP the crash script declares (one also naming
// a pod's endpoint) and node-wide (the shape a node port's declaration
// covers; the script declares none). Wherever the process dies, the restart claims what its own
// failed creates left (TestKillAtEveryStepLeavesNoPartialLoadBalancer)
// and none of these; nor do the repairs after a restart whose listing left
// out every object, which claim what it left out on the carried
// declarations (claimCarriedPortless).
func TestKillNeverClaimsAnotherAgentsPartialLoadBalancer(t *testing.T) {
	failing := sim.Faults{ErrorRate: map[sim.Op]float64{sim.OpCreateLoadBalancer: 0.5}, Errors: []hnslb.ErrorCode{hnslb.CodeInvalidParameter},
		PartialCreates: 1}
	for _, profile := range []string{sim.ProfileWS2022, sim.ProfileWS2025} {
		steps := newCrashRunUnder(t, profile, 0, false, failing).ks.count()
		claimed := 0
		eachKill(t, profile, steps, failing, func(c *crashRun, at string) {
			var theirs []string
			for _, doc := range []hnslb.LoadBalancer{
				{FrontendVIPs: []string{"10.96.0.10"}, HostComputeEndpoints: []string{c.foreignEP}},
				{FrontendVIPs: []string{"10.96.0.11"}, HostComputeEndpoints: []string{c.foreignEP}},
				{FrontendVIPs: []string{"203.0.113.10"}, HostComputeEndpoints: []string{c.pod, strings.ToUpper(c.foreignEP)}},
				{HostComputeEndpoints: []string{c.foreignEP}},
			} {
				put, err := c.e.hns.PutLoadBalancerOutOfBand(doc)
				if err != nil {
					t.Fatal(err)
				}
				theirs = append(theirs, put.ID)
			}
			c.restart()
			for _, id := range theirs {
				if !c.e.hasLB(id) {
					claimed++
					t.Errorf("%s, %s: the restart deleted the other agent's load balancer %s", profile, at, id)
				}
			}
		})
		t.Logf("%s: %d of the other agent's load balancers claimed", profile, claimed)
	}
}

// TestKillNeverClaimsAForeignLoadBalancer: after the kill, hnsproxy's load
// balancer on a tenant's frontend vanishes and another agent makes one
// there. The restarted reconciler must leave that one alone, except where
// the state file still declares the frontend as being created: inside a
// Sync that creates on it, and after a power loss until the next Sync's
// first state write
// (docs/reliability.md, the state file's fsyncs). The test fails if a
// declaration outlives that window: a Sync that leaves it to the next one.
func TestKillNeverClaimsAForeignLoadBalancer(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2022, sim.ProfileWS2025} {
		whole := newCrashRun(t, profile, 0, false)
		steps := whole.ks.count()
		// The script creates on the tenant frontend in its first Sync, and
		// without modify again in its third (a new backend: a new ID).
		creates := []bool{true, false, profile != sim.ProfileWS2025, false, false}
		for _, powerLoss := range []bool{false, true} {
			for kill := 1; kill <= steps+1; kill++ {
				c := newCrashRun(t, profile, kill, false)
				if powerLoss {
					c.kfs.powerLoss(t, journalPath(c.e.stateFile))
				}
				if ours := c.e.hnsLB(c.tenant); ours != nil {
					if err := c.e.hns.DeleteLoadBalancer(ctx, ours.ID); err != nil {
						t.Fatal(err)
					}
				}
				d := externalLB(c.tenant.VIP, c.tenant.Port)
				foreign := c.e.foreignOn(d, "10.244.1.99")
				c.restart()
				if c.e.hasLB(foreign) {
					continue
				}
				if !mayHoldDeclaration(whole.syncs, creates, kill, powerLoss) {
					t.Errorf("%s, killed before step %d (power loss %v): the restart took the tenant frontend's foreign load balancer (syncs at steps %v)",
						profile, kill, powerLoss, whole.syncs)
				}
			}
		}
	}
}
