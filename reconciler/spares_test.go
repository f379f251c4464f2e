package reconciler

import (
	"reflect"
	"slices"
	"testing"

	"github.com/hnsproxy/hnsproxy/intent"
	"github.com/hnsproxy/hnsproxy/sim"
)

// TestSparesStandInForLocalsWithoutEndpoints (F10): a local backend HNS has
// no endpoint for gives its place to the next spare that HNS can realize;
// the load balancer reports it left out, and takes it back once its
// endpoint appears.
func TestSparesStandInForLocalsWithoutEndpoints(t *testing.T) {
	e := newEnv(t, sim.ProfileWS2022)
	e.local("10.244.1.11")
	e.local("10.244.1.13")
	d := lb("10.96.0.10", 80, loc("10.244.1.10"), loc("10.244.1.11"))   // .10 has no endpoint
	d.Spares = []intent.Backend{loc("10.244.1.12"), loc("10.244.1.13")} // .12 neither
	r, res := e.start(e.hns, d)
	if got := e.backendIPs(e.hnsLB(d.Key)); !reflect.DeepEqual(got, []string{"10.244.1.11", "10.244.1.13"}) {
		t.Fatalf("backends %v, want .11 and the spare .13", got)
	}
	if len(res.LeftOut) != 1 || res.LeftOut[0].Key != d.Key || !slices.Equal(res.LeftOut[0].IPs, []string{"10.244.1.10"}) {
		t.Errorf("left out = %+v", res.LeftOut)
	}
	e.local("10.244.1.10")
	e.clock.Step(DefaultRetryMax)
	e.converge(r)
	if got := e.backendIPs(e.hnsLB(d.Key)); !reflect.DeepEqual(got, []string{"10.244.1.10", "10.244.1.11"}) {
		t.Fatalf("backends %v after .10's endpoint appeared", got)
	}
	if res := r.Sync(ctx); len(res.LeftOut) != 0 {
		t.Errorf("left out = %+v", res.LeftOut)
	}
}
