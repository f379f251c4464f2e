package reconciler

import (
	"testing"

	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// A write on a realized load balancer abandoned at its deadline (a modify
// where HNS can, else the delete before its create, or the delete of a
// Service deleted) may still be applied by HNS. Should the Service go back
// to what was realized before, while the call runs, HNS holds the modify's
// backends, or nothing: the load balancer is written again rather than
// taken for converged.
func TestALateWriteIsNotTakenForTheRealizedLoadBalancer(t *testing.T) {
	for _, c := range []struct {
		name, profile string
		op            sim.Op
		deleted       bool // the Service is deleted, not scaled down
	}{
		{"modify", sim.ProfileWS2025, sim.OpUpdateLoadBalancer, false},
		{"replace", sim.ProfileWS2022, sim.OpDeleteLoadBalancer, false},
		{"delete", sim.ProfileWS2022, sim.OpDeleteLoadBalancer, true},
		{"delete where HNS modifies", sim.ProfileWS2025, sim.OpDeleteLoadBalancer, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, c.profile)
			w := e.withHangWatch(0)
			e.local("10.244.1.10")
			e.local("10.244.1.11")
			before := lb("10.96.0.10", 80, loc("10.244.1.10"), loc("10.244.1.11"))
			r := w.watch(e.started(before))
			e.hns.SetFaults(sim.Faults{HangReply: []sim.Op{c.op}})
			if c.deleted {
				remove(r, before.Key)
			} else {
				upsert(r, lb("10.96.0.10", 80, loc("10.244.1.10")))
			}
			if res := e.syncPastHangs(r, 1); res.Failed != 1 {
				t.Fatalf("sync with a hung write: %+v", res)
			}
			if l := e.hnsLB(before.Key); l != nil && len(l.HostComputeEndpoints) == 2 {
				t.Fatal("HangReply: HNS did not apply the write")
			}
			upsert(r, before)
			e.hns.SetFaults(sim.Faults{})
			<-w.returned
			e.converge(r)
			e.assertRealized([]intent.LB{before})
		})
	}
}
