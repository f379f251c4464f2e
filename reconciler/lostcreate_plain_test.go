package reconciler

import (
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// TestALostStickyCreateMeetsAPlainLoadBalancer: a sticky load balancer's
// create on a cluster IP fails with HNS down, unapplied, and another agent
// makes a load balancer on that frontend with the same backends and no
// affinity before the listing that settles the create. Under an exact echo
// that one is not the create's (HNS answers a sticky one's distribution);
// hnsproxy may take it, but must leave the Service sticky, not record it
// as the sticky one it sent, where no repair would ever write it.
func TestALostStickyCreateMeetsAPlainLoadBalancer(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	r := e.started()
	d := e.backedLB("10.244.1.10", "10.96.0.40", false, intent.OriginClusterIP, true)
	upsert(r, d)
	e.createTried(r, hnslb.CodeManagerStopped, 0)
	if got := e.hnsLB(d.Key); got != nil {
		t.Fatalf("HNS applied the failed create: %+v", got)
	}
	var backend string
	for _, ep := range e.snapshot().Endpoints {
		if ep.IP() == "10.244.1.10" {
			backend = ep.ID
		}
	}
	plain, err := e.hns.CreateLoadBalancer(ctx, &hnslb.LoadBalancer{
		FrontendVIPs: []string{d.Key.VIP}, SourceVIP: d.SourceVIP, HostComputeEndpoints: []string{backend},
		PortMappings:  []hnslb.PortMapping{{Protocol: d.Key.Protocol, InternalPort: d.InternalPort, ExternalPort: d.Key.Port, Flags: d.PortFlags}},
		SchemaVersion: hnslb.V2,
	})
	if err != nil {
		t.Fatal(err)
	}
	e.converge(r)
	if err := r.Repair(ctx); err != nil {
		t.Fatal(err)
	}
	e.converge(r)
	got := e.hnsLB(d.Key)
	if got == nil || got.PortMappings[0].DistributionType != hnslb.DistributionSourceIP {
		t.Errorf("HNS holds %+v on the sticky Service's frontend (the other agent's was %s), want it sticky", got, plain.ID)
	}
	if st := statusOf(r, d.Key); st.State != StateDone {
		t.Errorf("status %+v, want done", st)
	}
}
