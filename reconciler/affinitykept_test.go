package reconciler

import (
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/sim"
)

// TestAffinitySwitchOverAKeptLoadBalancer: affinity turned on where HNS
// cannot modify (ws2022) is a delete and a create; HNS reports the delete
// done and keeps the old load balancer (microsoft/Windows-Containers#631),
// so the create is refused as taken and a listing finds the old one on
// the frontend. It is not the new one, whatever HNS answers for its
// distribution: it is deleted again and the sticky one created, under an
// exact echo and under one without distributions.
func TestAffinitySwitchOverAKeptLoadBalancer(t *testing.T) {
	for _, echo := range []sim.Echo{{}, {DropDistribution: true}} {
		e, r, _ := keptEnv(t)
		e.hns.SetEcho(echo)
		plain := lb("10.96.0.30", 80, loc("10.244.1.10"), loc("10.244.1.11"))
		upsert(r, plain)
		e.converge(r)
		old := e.hnsLB(plain.Key).ID

		sticky := plain
		sticky.Distribution = hnslb.DistributionSourceIP
		e.hns.SetFaults(sim.Faults{KeptOnDelete: 1})
		upsert(r, sticky)
		r.Sync(ctx)
		e.hns.SetFaults(sim.Faults{})
		e.converge(r)
		if err := r.Repair(ctx); err != nil {
			t.Fatal(err)
		}
		e.converge(r)

		got := e.hnsLB(sticky.Key)
		if got == nil || got.ID == old || got.PortMappings[0].DistributionType != hnslb.DistributionSourceIP {
			t.Errorf("echo %+v: HNS holds %+v on the frontend, want a new sticky load balancer in place of %s", echo, got, old)
		}
		if e.hasObject(old) {
			t.Errorf("echo %+v: the kept load balancer %s is still in HNS", echo, old)
		}
	}
}
