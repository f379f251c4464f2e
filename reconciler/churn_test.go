package reconciler

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// trackedLimiter is the reconciler's backoff limiter with a count of the
// objects it holds failures for: the real limiter keeps each until it is
// told to forget it, and cannot list them.
type trackedLimiter struct {
	workqueue.TypedRateLimiter[objectRef]
	held map[objectRef]struct{}
}

func (l *trackedLimiter) When(ref objectRef) time.Duration {
	l.held[ref] = struct{}{}
	return l.TypedRateLimiter.When(ref)
}

func (l *trackedLimiter) Forget(ref objectRef) {
	delete(l.held, ref)
	l.TypedRateLimiter.Forget(ref)
}

// retained are the sizes of everything the reconciler keeps per object, by
// name; what a daemon keeps across months must depend on what exists now,
// not on how many objects came and went.
func (r *Reconciler) retained(l *trackedLimiter) map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	waiting := 0
	for _, w := range r.waiting {
		waiting += len(w)
	}
	r.client.mu.Lock()
	abandoned := len(r.client.abandoned)
	r.client.mu.Unlock()
	r.client.failed.mu.Lock()
	failedPending := len(r.client.failed.pending)
	r.client.failed.mu.Unlock()
	p := &r.published
	p.mu.Lock()
	deltas := len(p.lbDelta) + len(p.epDelta)
	p.mu.Unlock()
	return map[string]int{
		"lbs": len(r.lbs), "eps": len(r.eps),
		"dirtyLBs": len(r.dirtyLBs), "dirtyEPs": len(r.dirtyEPs),
		"retryLBs": len(r.retryLBs), "retryEPs": len(r.retryEPs),
		"localIndex": len(r.localIndex), "heldByOthers": len(r.heldByOthers),
		"refs": len(r.refs), "waiting": len(r.waiting), "waitingKeys": waiting,
		"ownedLBs": len(r.ownedLBs), "ownedEPs": len(r.ownedEPs),
		"unconfirmed": len(r.unconfirmed.byID), "unconfirmedOrder": len(r.unconfirmed.order),
		"keptLogged": len(r.unconfirmed.keptLogged),
		"baselines":  len(r.baselines), "unsavedBaselines": len(r.unsavedBaselines),
		"unsaved": len(r.unsaved), "journalLines": r.journalLines,
		"creatingLBs": len(r.creatingLBs), "creatingEPs": len(r.creatingEPs),
		"standingLBs": len(r.standingLBs),
		"carried":     len(r.carried.lbs) + len(r.carried.eps),
		"staleLBs":    len(r.staleLBs), "staleEPs": len(r.staleEPs),
		"failedLBs": len(r.failedLBs), "failedPending": failedPending, "partialsOn": len(r.partialsOn),
		"orphanLBs": len(r.orphanLBs), "orphanEPs": len(r.orphanEPs), "foreignHeld": len(r.foreignHeld),
		"goneLBs": len(p.goneLBs), "goneEPs": len(p.goneEPs), "ipOfID": len(p.ipOfID), "deltas": deltas,
		"statusChangedLBs": len(p.changed.lbs), "statusChangedEPs": len(p.changed.eps), "statusChangedIDs": len(p.changed.epIDs),
		"lookupLBs": len(r.lookups.lbs), "lookupEPs": len(r.lookups.eps),
		"lookupLocal": len(r.lookups.local), "lookupUnfound": len(r.lookups.unfound),
		"abandoned": abandoned, "limiter": len(l.held),
	}
}

// TestChurnKeepsNothingOfObjectsGone runs generations of distinct Services
// (new frontends, new local and remote pods every round) through a
// reconciler under HNS faults: refusals, lost replies, deletes HNS reports
// done but keeps, partial creates. Some load balancers are deleted while
// their creates still fail. After each generation is gone and HNS repaired,
// everything the reconciler keeps per object, the state file and its
// journal, and the published status must be back to the same size, not to
// one that grows with the generations.
func TestChurnKeepsNothingOfObjectsGone(t *testing.T) {
	for _, tc := range []struct {
		profile string
		repair  bool // drift repair on; off, only lookups list HNS
	}{{sim.ProfileWS2019, true}, {sim.ProfileWS2025, true}, {sim.ProfileWS2022, false}} {
		t.Run(fmt.Sprintf("%s/repair=%v", tc.profile, tc.repair), func(t *testing.T) {
			profile := tc.profile
			e := newEnv(t, profile)
			e.declaringEndpoints() // declarations too: creatingEPs, standing keys
			r := e.reconciler()
			lim := &trackedLimiter{TypedRateLimiter: r.limiter, held: map[objectRef]struct{}{}}
			r.limiter = lim
			// One Service that stays, so the baseline is not all zeros.
			stay := lb("10.96.255.1", 53, rem("10.245.255.1", "192.168.0.9"))
			upsert(r, stay)
			if err := r.Start(ctx); err != nil {
				t.Fatal(err)
			}
			e.converge(r)
			// A reader that asked once (an operator's /debug/hns), then
			// never again while the node churns.
			_ = r.StatusSnapshot()
			rates := map[sim.Op]float64{
				sim.OpCreateLoadBalancer: 0.4, sim.OpUpdateLoadBalancer: 0.3, sim.OpDeleteLoadBalancer: 0.3,
				sim.OpCreateEndpoint: 0.3, sim.OpDeleteEndpoint: 0.3,
			}
			// Refusals in even generations, lost replies (half of them
			// after HNS applied the write) in odd ones: HNS applies no
			// write it refuses.
			// Deletes HNS keeps are found only by a drift repair's listing.
			faultsOf := func(g int) sim.Faults {
				f := sim.Faults{ErrorRate: rates, PartialCreates: 0.3,
					Errors: []hnslb.ErrorCode{hnslb.CodeInvalidParameter}}
				if tc.repair {
					f.KeptOnDelete = 0.2
				}
				if g%2 == 1 {
					f.Errors, f.Committed = []hnslb.ErrorCode{hnslb.CodeRPCServerUnavailable, hnslb.CodeTimeout}, 0.5
				}
				return f
			}
			const generations, perGen = 48, 8
			var baseline map[string]int
			var baseFile int64
			for g := range generations {
				var gen []intent.LB
				var locals []string
				for i := range perGen {
					ip := fmt.Sprintf("10.244.1.%d", 10+g*perGen/2+i/2)
					if i%2 == 0 {
						e.localOutsideNamespace(ip)
						locals = append(locals, ip)
					}
					gen = append(gen, lb(fmt.Sprintf("10.96.%d.%d", g, i+1), 80, loc(ip),
						rem(fmt.Sprintf("10.245.%d.%d", g, i+1), "192.168.0.2"),
						rem(fmt.Sprintf("10.245.%d.%d", g, 100+i%3), "192.168.0.3")))
				}
				e.hns.SetFaults(faultsOf(g))
				upsert(r, gen...)
				for range 3 {
					if r.Sync(ctx).ListingWanted {
						_ = r.Lookup(ctx)
					}
				}
				// Half go while their creates may still be failing.
				for _, d := range gen[:perGen/2] {
					remove(r, d.Key)
				}
				r.Sync(ctx)
				if tc.repair {
					_ = r.Repair(ctx)
				}
				e.converge(r)
				// The rest go, and their pods with them.
				for _, d := range gen[perGen/2:] {
					remove(r, d.Key)
				}
				e.converge(r)
				e.hns.SetFaults(sim.Faults{})
				for _, ip := range locals {
					if err := e.hns.DeleteEndpoint(ctx, e.locals[ip]); err != nil {
						t.Fatal(err)
					}
					delete(e.locals, ip)
				}
				for range 3 {
					if !tc.repair {
						break
					}
					if err := r.Repair(ctx); err != nil {
						t.Fatal(err)
					}
					e.converge(r)
				}
				if tc.repair {
					// Without, what a refused create left waits for the
					// next lookup to look for it.
					e.assertRealized([]intent.LB{stay})
				}
				got := r.retained(lim)
				file := stateBytes(t, e.stateFile)
				if g < 2 {
					// The first rounds may set up what stays (a learned cap,
					// the journal's first snapshot).
					baseline, baseFile = got, file
					continue
				}
				// Without drift repair, what one generation's refused creates
				// left (an attempt each, a document each) is looked for by the next
				// lookup, not at once.
				slack := map[string]int{}
				if !tc.repair {
					slack["failedLBs"], slack["partialsOn"] = 2*perGen, perGen
				}
				var grew []string
				for name, n := range got {
					if n > baseline[name]+slack[name] && !boundedByConstant[name] {
						grew = append(grew, fmt.Sprintf("%s %d→%d", name, baseline[name], n))
					}
				}
				slices.Sort(grew)
				if len(grew) > 0 {
					t.Errorf("generation %d: kept more than after generation 1: %s", g, strings.Join(grew, ", "))
				}
				// The journal is folded into a snapshot past compactAfter
				// lines; the deletion order drops its settled entries past
				// minUnconfirmed (deleted.go); statuses no reader took are replaced
				// past minDeltasDropped (snapshot.go).
				if limit := compactAfter(got["ownedLBs"] + got["ownedEPs"]); got["journalLines"] > limit {
					t.Errorf("generation %d: journal of %d lines, more than %d", g, got["journalLines"], limit)
				}
				if limit := 2*got["unconfirmed"] + minUnconfirmed; got["unconfirmedOrder"] > limit {
					t.Errorf("generation %d: %d deletes in order, more than %d", g, got["unconfirmedOrder"], limit)
				}
				if limit := max(minDeltasDropped, 2*(got["lbs"]+got["eps"])); got["deltas"] > limit {
					t.Errorf("generation %d: %d statuses wait for a reader, more than %d", g, got["deltas"], limit)
				}
				if limit := max(minUnconfirmed, got["lbs"]+got["eps"]); got["unconfirmed"] > limit {
					t.Errorf("generation %d: %d deletes wait for a listing to confirm them, more than %d", g, got["unconfirmed"], limit)
				}
				if limit := baseFile + 256*int64(compactAfter(0)); file > limit {
					t.Errorf("generation %d: state file and journal %d bytes, more than %d", g, file, limit)
				}
			}
			// The reader asks again: what the bound dropped left it
			// nothing stale nor missing.
			assertSnapshotIsFullStatus(t, r)
		})
	}
}

// boundedByConstant are what may grow with churn up to a fixed bound, not
// with the objects that exist; the test holds them to that bound instead.
var boundedByConstant = map[string]bool{"journalLines": true, "unconfirmedOrder": true, "deltas": true,
	"unconfirmed": true, "keptLogged": true} // without drift repair, nothing confirms deletes

// stateBytes is the size of the state file and its journal.
func stateBytes(t *testing.T, path string) int64 {
	t.Helper()
	var n int64
	for _, f := range []string{path, journalPath(path)} {
		fi, err := os.Stat(f)
		if err == nil {
			n += fi.Size()
		} else if !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	return n
}
