package hnslb

import "testing"

// TestModifyMayIgnoreBackendsOnlyOnHNS15Dot4: only HNS 15.4 is known to
// answer a modify done while leaving the backends (kubernetes/kubernetes#131466).
// Elsewhere, a modify hnsproxy makes (hnsModifyLoadBalancer "enabled"
// forces it on builds FeaturesFor leaves it off on) is trusted, not read
// back and planned one load balancer at a time.
func TestModifyMayIgnoreBackendsOnlyOnHNS15Dot4(t *testing.T) {
	for _, c := range []struct {
		v    Version
		want bool
	}{
		{Version{Major: 15, Minor: 4}, true},
		{Version{Major: 15, Minor: 3}, false},
		{Version{Major: 15, Minor: 0}, false},
		{Version{Major: 15, Minor: 5}, false},
		{Version{Major: 14, Minor: 4}, false},
		{Version{Major: 16, Minor: 4}, false},
	} {
		if got := ModifyMayIgnoreBackends(c.v); got != c.want {
			t.Errorf("ModifyMayIgnoreBackends(%s) = %v, want %v", c.v, got, c.want)
		}
	}
}
