package reconciler

import (
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// TestAffinitySwitchOverAKeptLoadBalancer: affinity turned on where HNS
// cannot modify (ws2022) is a delete and a create; HNS reports the delete
// done and keeps the old load balancer (microsoft/Windows-Containers#631),
// so the create is refused as taken and a listing finds the old one on
// the frontend. It is not the new one, whatever HNS answers for its
// distribution: it is deleted again and the sticky one created, under an
// exact echo and under one without distributions. So too where HNS answers
// the create that it is down without making it: listed without
// distributions, the old one looks like the lost create's, but it is one
// hnsproxy deleted, never taken for it.
func TestAffinitySwitchOverAKeptLoadBalancer(t *testing.T) {
	downOnCreate := sim.Faults{KeptOnDelete: 1, ErrorRate: map[sim.Op]float64{sim.OpCreateLoadBalancer: 1},
		Errors: []hnslb.ErrorCode{hnslb.CodeManagerStopped}}
	for _, tc := range []struct {
		name   string
		echo   sim.Echo
		origin intent.Origin
		faults sim.Faults
	}{
		{"exact echo", sim.Echo{}, intent.OriginClusterIP, sim.Faults{KeptOnDelete: 1}},
		{"no distribution echoed", sim.Echo{DropDistribution: true}, intent.OriginClusterIP, sim.Faults{KeptOnDelete: 1}},
		{"no distribution echoed, the create lost", sim.Echo{DropDistribution: true}, intent.OriginExternalIP, downOnCreate},
	} {
		e, r, _ := keptEnv(t)
		e.hns.SetEcho(tc.echo)
		plain := lb("10.96.0.30", 80, loc("10.244.1.10"), loc("10.244.1.11"))
		plain.Origin = tc.origin
		upsert(r, plain)
		e.converge(r)
		old := e.hnsLB(plain.Key).ID

		sticky := plain
		sticky.Distribution = hnslb.DistributionSourceIP
		e.hns.SetFaults(tc.faults)
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
			t.Errorf("%s: HNS holds %+v on the frontend, want a new sticky load balancer in place of %s", tc.name, got, old)
		}
		if e.hasObject(old) {
			t.Errorf("%s: the kept load balancer %s is still in HNS", tc.name, old)
		}
	}
}
