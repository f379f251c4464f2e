package intent

import "testing"

// TestOriginRanksAndTrust: who chose a frontend decides who wins it
// (Rank: apiserver-allocated 0, controller-written 1, tenant-typed 2,
// unknown last) and what hnsproxy may take from a foreign load balancer
// (Allocated) or refuse on another Service's cluster IP (TenantChosen). A
// health-check load balancer sits on an ingress IP, so it is ranked and
// trusted as the ingress IP's own load balancer is, not as a tenant's.
func TestOriginRanksAndTrust(t *testing.T) {
	for _, tc := range []struct {
		o                       Origin
		rank                    int
		tenantChosen, allocated bool
	}{
		{OriginClusterIP, 0, false, true},
		{OriginNodePort, 0, false, true},
		{OriginIngress, 1, false, false},
		{OriginHealthCheck, 1, false, false},
		{OriginExternalIP, 2, true, false},
		{OriginUnknown, 3, false, false},
	} {
		if got := tc.o.Rank(); got != tc.rank {
			t.Errorf("%s: Rank() = %d, want %d", tc.o, got, tc.rank)
		}
		if got := tc.o.TenantChosen(); got != tc.tenantChosen {
			t.Errorf("%s: TenantChosen() = %v, want %v", tc.o, got, tc.tenantChosen)
		}
		if got := tc.o.Allocated(); got != tc.allocated {
			t.Errorf("%s: Allocated() = %v, want %v", tc.o, got, tc.allocated)
		}
	}
}
