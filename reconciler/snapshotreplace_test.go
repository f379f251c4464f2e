package reconciler

import (
	"testing"

	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// A remote endpoint's replacement rewrites the load balancers using it
// first (removeEP), also those the Sync had no other reason to take; when
// HNS refuses those rewrites, their status changed all the same and a
// reader must see it.
func TestSnapshotShowsLoadBalancersAReplacementRewrote(t *testing.T) {
	for _, profile := range []string{sim.ProfileWS2022, sim.ProfileWS2025} {
		t.Run(profile, func(t *testing.T) {
			e := newEnv(t, profile)
			e.local("10.244.1.10")
			const pod = "10.244.2.20"
			r := e.started(lb("10.96.0.10", 80, loc("10.244.1.10"), rem(pod, "10.244.1.1")))
			assertSnapshotIsFullStatus(t, r)

			// Only the endpoint changes: its provider address moved.
			r.UpsertEndpoint(intent.RemoteEndpoint{IP: pod, ProviderAddress: "192.168.0.2"})
			e.hns.SetFaults(sim.Faults{ErrorRate: map[sim.Op]float64{
				sim.OpUpdateLoadBalancer: 1, sim.OpCreateLoadBalancer: 1, sim.OpDeleteLoadBalancer: 1,
			}})
			r.Sync(ctx)
			assertSnapshotIsFullStatus(t, r)
		})
	}
}
