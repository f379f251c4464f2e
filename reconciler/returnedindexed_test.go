package reconciler

import (
	"testing"

	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// TestReturnedLocalEndpointIndexedForAnotherPodIsWritten: a pod's sandbox
// is made again, and the CNI replaces its endpoint behind the same address.
// Before the pod's return reaches hnsproxy, a Sync looks in the namespaces
// for another pod that just started on the node, and so indexes the new
// endpoint too. The load balancer over the pod is written at that Sync,
// whether it left the address out waiting for the new endpoint (under
// publishNotReadyAddresses, the Sync after RecheckLocal found the old one
// gone and no new one) or still names the old one (nothing was rechecked
// yet). Before, nothing marked it: the index held the address, so the
// pod's return (LocalReturned, RecheckLocal) took it for found, and the
// frontend went without the pod until the load balancer's fallback retry,
// up to RetryMax, or a drift repair.
func TestReturnedLocalEndpointIndexedForAnotherPodIsWritten(t *testing.T) {
	for _, p := range sim.Profiles() {
		for _, waited := range []bool{true, false} {
			name := p.Name + "/old endpoint named"
			if waited {
				name = p.Name + "/waiting for the new endpoint"
			}
			t.Run(name, func(t *testing.T) {
				e, r, want := recheckEnv(t, p.Name, sim.Echo{})
				if waited {
					recheckedPodAway(t, e, r)
					r.Sync(ctx)
				} else if err := e.hns.DeleteEndpoint(ctx, e.locals["10.244.1.10"]); err != nil {
					t.Fatal(err)
				}
				e.local("10.244.1.10") // the ADD of the recreated sandbox
				e.local("10.244.1.12") // another pod starting on the node
				other := lb("10.96.0.2", 80, loc("10.244.1.12"))
				upsert(r, other)
				r.Sync(ctx)
				e.assertRealized([]intent.LB{want, other})
				e.assertServed(want)
				// The pod's return then finds nothing left to do.
				r.LocalReturned([]string{"10.244.1.10"})
				r.RecheckLocal([]string{"10.244.1.10"})
				r.Sync(ctx)
				e.assertRealized([]intent.LB{want, other})
			})
		}
	}
}
