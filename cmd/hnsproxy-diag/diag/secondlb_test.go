package diag

import (
	"slices"
	"testing"

	"github.com/hnsproxy/hnsproxy/hnslb"
)

// TestASecondLoadBalancerOnAFrontendIsExtra: HNS refuses a second load
// balancer on a frontend, yet a listing that holds one (made through
// another API, or by a build that did not refuse it) is shown, not hidden:
// the first listed is compared with what hnsproxy wants, the one after it
// is an extra row that says it is a second one.
func TestASecondLoadBalancerOnAFrontendIsExtra(t *testing.T) {
	in := newFixture(t).read()
	i := slices.IndexFunc(in.HNS.LoadBalancers, func(lb hnslb.LoadBalancer) bool {
		return slices.Contains(lb.FrontendVIPs, frontendIP)
	})
	if i < 0 {
		t.Fatal("no cluster IP load balancer")
	}
	first := in.HNS.LoadBalancers[i]
	second := first
	second.ID = "5e5e5e5e-0000-4000-8000-000000000002"
	in.HNS.LoadBalancers = append(in.HNS.LoadBalancers, second)
	seen := 0
	for _, got := range Diagnose(in).LoadBalancers {
		switch got.ID {
		case first.ID:
			seen++
			if got.State != StateOK {
				t.Errorf("the first listed: %s %q, want ok", got.State, got.Why)
			}
		case second.ID:
			seen++
			if got.State != StateExtra || !hasLine(got.Why, "a second load balancer on a frontend") {
				t.Errorf("the second: %s %q, want extra, said to be a second one", got.State, got.Why)
			}
		}
	}
	if seen != 2 {
		t.Errorf("%d rows of the two load balancers, want one each", seen)
	}
}
