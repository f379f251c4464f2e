package hnslb

import (
	"math"
	"testing"
)

// TestFeaturesForModifyMatchesHnslib: modify counts where Microsoft/hnslib,
// the hcn fork kube-proxy's winkernel builds on, says it does
// (ModifyLoadbalancerVersion in hnslib v0.1.2 and v0.1.3 hcn/hcnglobals.go:
// 15.5 to 15.x, "in Zn", and 16.0 on, "in Ge"). hcsshim v0.15 says 15.4 on;
// 15.4 is the version of kubernetes/kubernetes#131466. hcnclient's
// TestFeaturesForMatchesHcnVersionRanges holds the other features to hcn's
// ranges, on Windows only; this one runs everywhere.
func TestFeaturesForModifyMatchesHnslib(t *testing.T) {
	for _, c := range []struct {
		v    Version
		want bool
	}{
		{Version{Major: 14, Minor: 99}, false},
		{Version{Major: 15, Minor: 0}, false},
		{Version{Major: 15, Minor: 4}, false},
		{Version{Major: 15, Minor: 5}, true},
		{Version{Major: 15, Minor: math.MaxInt32}, true},
		{Version{Major: 16, Minor: 0}, true},
		{Version{Major: 17, Minor: 3}, true},
		{Version{Major: math.MaxInt32, Minor: math.MaxInt32}, true},
	} {
		if got := FeaturesFor(c.v).ModifyLoadBalancer; got != c.want {
			t.Errorf("HNS %s: ModifyLoadBalancer = %v, hnslib's ranges say %v", c.v, got, c.want)
		}
	}
}
