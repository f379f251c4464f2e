package diag

import (
	"strings"
	"testing"
)

// TestBackendReferencesInAnotherCaseThanTheEndpointListing: nobody has
// seen whether real HNS answers a load balancer's endpoint references in
// the case its endpoint listing gives their IDs (docs/simulator.md,
// upper-guids; the reconciler reads GUIDs ignoring case). Where the two
// differ, each backend is still its endpoint: the report and the count
// hnsproxy would correct are the faithful listing's.
func TestBackendReferencesInAnotherCaseThanTheEndpointListing(t *testing.T) {
	in := newFixture(t).read()
	want := Diagnose(in)
	for i := range in.HNS.LoadBalancers {
		refs := in.HNS.LoadBalancers[i].HostComputeEndpoints
		for j := range refs {
			refs[j] = strings.ToUpper(refs[j])
		}
	}
	got := Diagnose(in)
	if got.ToCorrect() != want.ToCorrect() || len(got.LoadBalancers) != len(want.LoadBalancers) {
		t.Fatalf("to correct %d in %d rows, want %d in %d", got.ToCorrect(), len(got.LoadBalancers), want.ToCorrect(), len(want.LoadBalancers))
	}
	for i, row := range got.LoadBalancers {
		w := want.LoadBalancers[i]
		if row.State != w.State || len(row.Backends) != len(w.Backends) {
			t.Errorf("%s %s: %s with %d backends %+v, want %s with %d", row.Service, row.Frontend, row.State, len(row.Backends), row.Backends, w.State, len(w.Backends))
			continue
		}
		for k, b := range row.Backends {
			if b.IP != w.Backends[k].IP || b.State != w.Backends[k].State {
				t.Errorf("%s %s: backend %+v, want %+v", row.Service, row.Frontend, b, w.Backends[k])
			}
		}
	}
}
