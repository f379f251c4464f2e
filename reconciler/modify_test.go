package reconciler

import (
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// TestOnlyBackendChangesAreModified: where HNS can modify (ws2025), a
// change of anything but a load balancer's backends is a delete and a
// create. Whether HNS applies flags, ports, distribution or a source VIP
// in a modify is not known, and winkernel modifies only to change
// backends; the simulator's ModifyBackendsOnly plays an HNS that keeps
// them and still answers success. Under either HNS the node ends with the
// load balancer asked for, and a backend change stays one modify.
func TestOnlyBackendChangesAreModified(t *testing.T) {
	changes := []struct {
		name   string
		change func(*intent.LB)
	}{
		{"session affinity", func(l *intent.LB) { l.Distribution = hnslb.DistributionSourceIP }},
		{"target port", func(l *intent.LB) { l.InternalPort = 9090 }},
		{"DSR", func(l *intent.LB) { l.Flags |= hnslb.LoadBalancerFlagsDSR }},
		{"port flags", func(l *intent.LB) { l.PortFlags |= hnslb.PortMappingFlagsLocalRoutedVIP }},
		{"source VIP", func(l *intent.LB) { l.SourceVIP = "10.244.1.99" }},
	}
	for _, backendsOnly := range []bool{false, true} {
		for _, c := range changes {
			name := c.name
			if backendsOnly {
				name += "/modify-backends-only"
			}
			t.Run(name, func(t *testing.T) {
				e := newEnvSim(t, sim.ProfileWS2025, sim.Options{ModifyBackendsOnly: backendsOnly})
				want := e.threeServices()
				r := e.started(want...)
				c.change(&want[0])
				handOver(r, want, nil)
				e.converge(r)
				got := e.hnsLB(want[0].Key)
				if got == nil || !sameFrontendFields(got, BuildLB(&want[0], nil)) {
					t.Fatalf("HNS holds %+v, want %+v", got, BuildLB(&want[0], nil))
				}
				cnt := e.counters()
				if cnt.Count(sim.OpUpdateLoadBalancer) != 0 || cnt.Count(sim.OpDeleteLoadBalancer) != 1 || cnt.Count(sim.OpCreateLoadBalancer) != 1 {
					t.Errorf("calls %v, want the load balancer deleted and created, no modify", cnt.Calls)
				}
				e.assertRealized(want)
			})
		}
		t.Run("backends", func(t *testing.T) {
			e := newEnvSim(t, sim.ProfileWS2025, sim.Options{ModifyBackendsOnly: backendsOnly})
			want := e.threeServices()
			r := e.started(want...)
			want[1].Backends = want[1].Backends[:2]
			handOver(r, want, nil)
			e.converge(r)
			cnt := e.counters()
			if cnt.Count(sim.OpUpdateLoadBalancer) != 1 || cnt.Count(sim.OpCreateLoadBalancer) != 0 {
				t.Errorf("calls %v, want one modify", cnt.Calls)
			}
			e.assertRealized(want)
		})
	}
}
