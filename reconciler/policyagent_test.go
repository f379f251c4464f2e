package reconciler

import (
	"maps"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
	"github.com/hnsproxy/hnsproxy/sim/simtest"
)

// TestPolicyAgentACLsCauseNoChurn: a network policy agent (Calico's felix,
// Azure NPM) writes its ACLs onto every endpoint in place, the pods' and
// hnsproxy's own remote endpoints alike, and rewrites them at a policy
// change, however HNS then lists the policies (sim.PolicyApply). hnsproxy
// goes on using the same endpoints: a recheck of every pod (their slices
// flapped meanwhile), a drift repair period, a restart and one without the
// state file (which adopts the remote endpoints by what they are) write nothing,
// list nothing outside the repair's and the start's listings, and leave
// every load balancer under its ID and the agent's ACLs where it put them.
// Every profile, every echo option.
func TestPolicyAgentACLsCauseNoChurn(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2019, sim.ProfileWS2022, sim.ProfileWS2025Mod4, sim.ProfileWS2025} {
		for _, echoName := range slices.Sorted(maps.Keys(echoProfiles(t))) {
			for _, how := range sim.PolicyApplies() {
				t.Run(profile+"/"+echoName+"/"+string(how), func(t *testing.T) {
					e := newEnv(t, profile)
					e.hns.SetEcho(echoProfiles(t)[echoName])
					want := e.echoServices()
					r := e.started(want...)
					lbIDs := e.loadBalancerIDs()
					for _, set := range [][]hnslb.EndpointPolicy{simtest.AgentACLs("np", 3), simtest.AgentACLs("np", 1)} {
						for _, ep := range e.snapshot().Endpoints {
							if err := e.hns.ApplyEndpointPoliciesOutOfBand(ep.ID, how, set); err != nil {
								t.Fatal(err)
							}
						}
					}
					applied := e.snapshot().Endpoints

					r.RecheckLocal(slices.Collect(maps.Keys(e.locals)))
					if res := r.Sync(ctx); res.Pending+res.Failed != 0 || res.ListingWanted {
						t.Errorf("sync after the recheck: %+v", res)
					}
					if c := e.counters(); c.Writes() != 0 || c.Lists() != 0 {
						t.Errorf("the recheck of pods whose endpoints gained ACLs: calls %v, want no write and no listing", c.Calls)
					}
					e.clock.Step(5 * time.Minute)
					if err := r.Repair(ctx); err != nil {
						t.Fatal(err)
					}
					if res := r.Sync(ctx); res.Pending+res.Failed != 0 {
						t.Errorf("sync after the repair: %+v", res)
					}
					if c := e.counters(); c.Writes() != 0 {
						t.Errorf("a repair period wrote %v", c.Calls)
					}
					if _, res := e.start(e.hns, want...); res.Pending+res.Failed != 0 || e.counters().Writes() != 0 {
						t.Errorf("restart: %+v, calls %v", res, e.counters().Calls)
					}
					if err := os.Remove(e.stateFile); err != nil {
						t.Fatal(err)
					}
					// Where HNS does not answer the distribution, adoption
					// replaces the sticky load balancer once, ACLs or not
					// (TestEchoProfilesNoChurn).
					replaced := 0
					if echoProfiles(t)[echoName].DropDistribution && e.profile.Features().SessionAffinity {
						replaced = 1
					}
					if _, res := e.start(e.hns, want...); res.Pending+res.Failed != 0 || e.counters().Writes() != 2*replaced {
						t.Errorf("restart without the state file (adoption): %+v, calls %v, want %d load balancers replaced", res, e.counters().Calls, replaced)
					}
					e.assertRealized(want)
					got := e.loadBalancerIDs()
					if kept := len(slices.DeleteFunc(slices.Clone(got), func(id string) bool { return !slices.Contains(lbIDs, id) })); len(got) != len(lbIDs) || kept != len(lbIDs)-replaced {
						t.Errorf("load balancers %v, want them kept as %v but for %d replaced", got, lbIDs, replaced)
					}
					if got := e.snapshot().Endpoints; !slices.EqualFunc(got, applied, sameEndpointDocument) {
						t.Errorf("endpoints changed after the agent's write:\n got %+v\nwant %+v", got, applied)
					}
				})
			}
		}
	}
}

// loadBalancerIDs are the IDs of the load balancers HNS holds, sorted.
func (e *env) loadBalancerIDs() []string {
	var ids []string
	for _, l := range e.snapshot().LoadBalancers {
		ids = append(ids, l.ID)
	}
	slices.Sort(ids)
	return ids
}

// sameEndpointDocument compares two endpoints by ID and policy list.
func sameEndpointDocument(a, b hnslb.Endpoint) bool {
	return a.ID == b.ID && slices.EqualFunc(a.Policies, b.Policies, func(x, y hnslb.EndpointPolicy) bool {
		return x.Type == y.Type && string(x.Settings) == string(y.Settings)
	})
}
